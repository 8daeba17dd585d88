#pragma once
// SimGrid platform export (XML, platform version 4.1) of a routed tutti topology. Plain text
// writing: no SimGrid library needed. `tutti topo CLUSTER --export simgrid -o platform.xml`.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

#include "tutti/topologies/topology.hpp"

namespace tutti {

struct Cluster;

/// The most GPUs an export accepts: the file lists the route of every ordered GPU pair
/// (N*(N-1) routes; about 150 MB at 1,024 GPUs).
constexpr int kSimgridExportMaxGpus = 1024;

/// ECMP hash of the route of the pair (src, dst) in an export: Topology::route(src, dst,
/// hash(src, dst), ...). The CLI passes the engines' flow_hash(seed, src, dst) (sim/engine.hpp),
/// so the exported routes are the ones tutti's engines use.
using RouteHash = std::function<std::uint64_t(int src, int dst)>;

/// Default RouteHash when none is given: a splitmix64 of the pair. Deterministic.
std::uint64_t simgrid_export_hash(int src, int dst);

/// Writes the platform of `topo` to `out`, well-formed XML (no "--" in its comment):
///  - a <config> element with the network model tutti's SimGrid engine runs (network/model CM02,
///    network/crosstraffic 0, network/TCP-gamma 0), which SimGrid applies when it loads the file;
///  - one zone, routing="Full", with one host per GPU: id "gpu<rank>", speed `gpu_flops` (FLOP/s);
///  - one router per other device (NVSwitch "nvswitch<i>", NIC "nic<i>", switch "sw<level>-<i>");
///  - one link per tutti directed link: id "L<link id>", bandwidth (B/s), latency (s),
///    sharing_policy SHARED (a tutti link is one direction of a cable, so only that direction
///    uses it), with properties "from", "to" and "tier";
///  - for every ordered GPU pair (src != dst) a route with symmetrical="NO" listing the links of
///    Topology::route(src, dst, hash(src, dst)) (hash empty: simgrid_export_hash).
/// Throws InputError when the topology has more than kSimgridExportMaxGpus GPUs.
void write_simgrid_platform(const Topology& topo, double gpu_flops, std::ostream& out,
                            const RouteHash& hash = {});

/// The same for a cluster: its topology, each GPU at the dense BF16 peak of the cluster's GPU
/// (FP32 peak when the GPU has no BF16 rate).
void write_simgrid_platform(const Cluster& cluster, std::ostream& out, const RouteHash& hash = {});

/// SimGrid name of a device ("gpu3", "nvswitch0", "nic12", "sw1-7").
std::string simgrid_device_name(const Topology& topo, std::uint32_t device);

}  // namespace tutti
