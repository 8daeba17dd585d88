#pragma once
// Private to the SimGrid engine (sim/src/simgrid/): the SimGrid platform of a tutti Topology and
// the process isolation every SimGrid run goes through. Includes SimGrid; never include it from
// a public header.
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tutti/topologies/topology.hpp"

namespace tutti::sg {

/// The SimGrid configuration of every tutti run: CM02 (max-min, no correction factors), no
/// cross-traffic, no TCP window bound (TCP-gamma 0), no RTT weighting (weight-S 0), quiet logs.
/// Engine constructor arguments (argv[0] included).
std::vector<std::string> engine_args();

/// A routing zone whose routes are Topology::route, computed on demand (nothing precomputed, so
/// 1,024 GPUs cost no N^2 table). One SimGrid host per GPU ("gpu<rank>"), one SimGrid link per
/// tutti directed link ("L<id>"), SHARED policy: every tutti link is one direction of one cable,
/// so its SimGrid link carries only flows of that direction.
///
/// ECMP: Topology::route takes a per-flow hash, SimGrid routes by (src, dst) only. The runner sets
/// `set_next_hash()` right before starting each comm; all comms start from maestro (timers and
/// completion callbacks, no actors), where Comm::start runs synchronously, so the route computed
/// for that comm is the one of that hash.
///
/// Latency: CM02 weighs each flow's max-min share by its route latency (the variable's penalty is
/// the latency: network_cm02.cpp `action->sharing_penalty_ = latency`), which is not plain
/// max-min. With `zero_latency` the links carry no latency (every flow then has penalty 1: plain
/// max-min) and the runner pays each flow's route latency itself, before the transfer, with a
/// kernel timer; during that time the flow uses no bandwidth, exactly as CM02 does.
class TopologyZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  TopologyZone(const Topology& topo, double gpu_flops, bool zero_latency);
  /// Route hash of the next comm to start (see class comment).
  static void set_next_hash(std::uint64_t h);
  const std::vector<simgrid::s4u::Host*>& gpus() const { return gpus_; }
  const std::vector<simgrid::s4u::Link*>& links() const { return links_; }
  /// Sum of the tutti latencies of the route (independent of `zero_latency`).
  double route_latency_s(int src, int dst, std::uint64_t hash) const;

  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

 private:
  int gpu_of(const simgrid::kernel::routing::NetPoint* p) const;
  const Topology& topo_;
  std::vector<simgrid::s4u::Host*> gpus_;
  std::vector<simgrid::s4u::Link*> links_;
  std::vector<int> gpu_by_netpoint_;  ///< NetPoint id -> GPU rank (-1: not a GPU).
  mutable std::vector<std::uint32_t> path_;
};

/// Runs `child` in a forked process and returns the bytes it returns. SimGrid 3.32 allows one
/// Engine per process and keeps global state, so every SimGrid run (engine, probe) is a child.
/// An InputError thrown in the child is rethrown as InputError here; anything else, or a child
/// that dies, is an InternalError.
std::string run_isolated(const std::function<std::string()>& child);

}  // namespace tutti::sg
