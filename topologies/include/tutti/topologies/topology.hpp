#pragma once
#include "tutti/core/enum.hpp"
// The cluster as a graph of devices and directed links, with routing as a formula (no graph
// search on big fabrics). Engines route every flow through Topology::route.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tutti {

/// GPU: an accelerator (device id == GPU index == rank). NVSwitch: one per NVLink domain (the
/// node's NVSwitch chips act as one non-blocking crossbar). NIC: a scale-out NIC. Switch: a
/// fabric switch or router. Host: a node's PCIe root / shared-memory bus (PCIe-tree and CPU nodes).
// clang-format off
#define TUTTI_DEVICE_KIND_VALUES(X) X(GPU, "gpu") X(NVSwitch, "nvswitch") X(NIC, "nic") X(Switch, "switch") X(Host, "host")
// clang-format on
TUTTI_ENUM(DeviceKind, std::uint8_t, TUTTI_DEVICE_KIND_VALUES);

/// Link tiers, for reporting utilisation hot spots and bills of materials.
/// NVLink: GPU <-> NVSwitch (or GPU <-> GPU in a mesh); PCIe: GPU <-> NIC inside a node; Access:
/// NIC <-> leaf switch; LeafSpine: leaf <-> spine; SpineCore: spine <-> core (3-tier); Local and
/// Global: dragonfly intra- and inter-group; Torus: torus neighbour link.
// clang-format off
#define TUTTI_TIER_VALUES(X)                                                                      \
  X(NVLink, "nvlink") X(PCIe, "pcie") X(Access, "access") X(LeafSpine, "leaf_spine")              \
  X(SpineCore, "spine_core") X(Local, "local") X(Global, "global") X(Torus, "torus")
// clang-format on
TUTTI_ENUM(Tier, std::uint8_t, TUTTI_TIER_VALUES);

struct Device {
  DeviceKind kind;
  std::uint32_t index;  ///< Index among devices of its kind (GPU index == rank).
  std::uint8_t level;   ///< Switch level (0 leaf, 1 spine, 2 core); 0 otherwise.
  std::uint32_t node =
      0;  ///< Node of a GPU/NIC/Host (NVSwitch: first node of its domain); 0 for switches.
};

/// One direction of a cable or internal connection.
struct Link {
  std::uint32_t src, dst;  ///< Device ids.
  double bandwidth_Bps;    ///< Per direction (each direction is its own Link). Scale-out links
                           ///< carry line rate x transport efficiency.
  double latency_s;        ///< Propagation + the latency of the device the link enters (switch
                           ///< traversal + transport per-hop latency, NIC, PCIe or NVLink hop).
  Tier tier;
};

/// A routed cluster. Subclasses are the fabric generators; route() is their formula.
class Topology {
 public:
  virtual ~Topology() = default;
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Link>& links() const { return links_; }
  int num_gpus() const { return num_gpus_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int num_nodes() const { return num_gpus_ / gpus_per_node_; }
  int node_of(int gpu) const { return gpu / gpus_per_node_; }
  /// GPUs per NVLink domain: a node's GPUs, or many nodes' (72 GPUs over 18 trays on NVL72).
  /// GPUs of one domain reach each other over NVLink only; collectives treat a domain as one
  /// "node" of their hierarchy (ring and NVLS span it; traffic leaving it uses the fabric).
  int domain_gpus() const { return domain_gpus_; }
  int domain_of(int gpu) const { return gpu / domain_gpus_; }
  std::uint32_t gpu_device(int gpu) const { return gpu_device_[gpu]; }

  /// Clears `out` and fills it with the link ids of the path from GPU `src` to GPU `dst`
  /// (src != dst). `hash` picks among equal-cost paths (ECMP), deterministically.
  /// Must be O(path length) and allocation-free once `out` has capacity.
  virtual void route(int src, int dst, std::uint64_t hash,
                     std::vector<std::uint32_t>& out) const = 0;

  /// Paths a flow from GPU `src` to GPU `dst` is split over: 1 under ECMP and d-mod-k routing,
  /// and under adaptive routing or packet spraying (Routing::Adaptive / Spray) on a healthy Clos
  /// fabric, where the flow is one flow over bundles (link_bundle). On a Clos fabric with
  /// failures, adaptive/spray split a flow over the (plane, leaf uplink) choices that remain
  /// (their core hops hashed): engines send one subflow of bytes / paths on each path
  /// (route_path).
  virtual int paths(int /*src*/, int /*dst*/) const { return 1; }
  /// Cables that link `l` stands for in the flow model (>= 1). 1 everywhere except under
  /// adaptive routing / packet spraying on a healthy Clos fabric: there each flow is spread
  /// evenly over every equal-cost cable at every tier (the fluid limit of per-packet balancing
  /// at each switch), so all cables of a tier's bundle carry the same flows, each at the same
  /// share (1 / cables), and have equal max-min constraints; routes then name one
  /// representative cable per bundle, and engines give link `l` link_bundle(l) times its
  /// bandwidth (FlowNetwork) and report its bytes / link_bundle(l) as the bytes per cable.
  virtual double link_bundle(std::uint32_t /*l*/) const { return 1; }
  /// Most paths() over all pairs (1 when no flow is split).
  virtual int max_paths() const { return 1; }
  /// Like route(), for path `part` (0 <= part < paths(src, dst)) of a split flow. With one path
  /// it is route(src, dst, hash, out).
  virtual void route_path(int src, int dst, std::uint64_t hash, int /*part*/,
                          std::vector<std::uint32_t>& out) const {
    route(src, dst, hash, out);
  }

  /// Failure injection: a copy of this topology in which the scale-out links `links` (each
  /// fails its whole cable, both directions) and the switch devices `switches` are down. Routes
  /// avoid them: ECMP (and adaptive/spray splitting) over the equal-cost paths that remain; a
  /// pair left without a path throws InputError ("--fail") when it is routed. Modelled on Clos
  /// fabrics; elsewhere, or for an id that is not a scale-out link or a switch, InputError.
  virtual std::shared_ptr<const Topology> with_failures(
      const std::vector<std::uint32_t>& links, const std::vector<std::uint32_t>& switches) const;

  /// Human description ("rail-optimized fat-tree, 3 tiers, 1:1").
  virtual std::string describe() const = 0;

  /// Sum of the latencies of `path` (link ids), seconds.
  double path_latency_s(const std::vector<std::uint32_t>& path) const;
  /// Smallest link bandwidth along `path` (bytes/s per direction); 0 for an empty path.
  double path_bandwidth_Bps(const std::vector<std::uint32_t>& path) const;
  /// Number of Switch devices the path enters.
  int switch_hops(const std::vector<std::uint32_t>& path) const;

 protected:
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<std::uint32_t> gpu_device_;
  int num_gpus_ = 0;
  int gpus_per_node_ = 1;
  int domain_gpus_ = 1;
};

/// The name of a device as every output prints it ("gpu3", "nic17", "leaf0", "spine2", "core5";
/// the SimGrid platform export has its own ids, simgrid_export.hpp).
std::string fabric_device_name(const Device& d);
/// The name of a directed link as every output prints it: "<src>-><dst>" ("leaf0->spine2").
std::string fabric_link_name(const Topology& t, std::uint32_t link);

}  // namespace tutti
