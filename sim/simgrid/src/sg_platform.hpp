#pragma once
// Private to the SimGrid engine (sim/simgrid/src/): the SimGrid platform of a tutti Topology and
// the process isolation every SimGrid run goes through. Includes SimGrid; never include it from
// a public header.
#include <cstdint>
#include <functional>
#include <memory>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "tutti/topologies/topology.hpp"

namespace tutti::sg {

/// The SimGrid configuration of every tutti run: CM02 (max-min, no correction factors), no
/// cross-traffic, no TCP window bound (TCP-gamma 0), no RTT weighting (weight-S 0), quiet logs.
/// Engine constructor arguments (argv[0] included).
std::vector<std::string> engine_args();

/// A routing zone whose routes are Topology::route with the engines' ECMP hash
/// (flow_hash(seed, src, dst)), computed on demand: nothing precomputed, so 1,024 GPUs cost no
/// N^2 table. One SimGrid host per GPU ("gpu<rank>"), one SimGrid link per tutti directed link
/// ("L<id>") with the capacity the native engine gives it (bandwidth x the profile's tier
/// efficiency), SHARED policy: a tutti link is one direction of a cable, so its SimGrid link
/// carries only flows of that direction.
///
/// Latency: CM02 weighs each flow's max-min share by its route latency (the LMM variable's
/// penalty is the route latency: network_cm02.cpp `action->sharing_penalty_ = latency`), which is
/// not plain max-min. So the links carry no latency (every flow then has penalty 1: plain
/// max-min) and the runner pays each flow's route latency itself, before the transfer, with a
/// kernel timer; during that time the flow uses no bandwidth, exactly as CM02 does.
class TopologyZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  TopologyZone(const Topology& topo, double gpu_flops, const std::vector<double>& capacity_Bps,
               std::uint64_t seed);
  const std::vector<simgrid::s4u::Host*>& gpus() const { return gpus_; }

  /// The next route asked for (src, dst) is path `part` of the pair's split flow
  /// (Topology::route_path) instead of its ECMP route; select_path(-1, -1, -1) clears it. The
  /// runner selects a path right before it starts a comm: every comm starts from maestro, and
  /// SimGrid computes the comm's route synchronously in Comm::start (CommImpl::start ->
  /// NetworkModel::communicate), so the selection reaches exactly that comm.
  void select_path(int src, int dst, int part) { sel_src_ = src, sel_dst_ = dst, sel_part_ = part; }

  void get_local_route(const simgrid::kernel::routing::NetPoint* src,
                       const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

 private:
  int gpu_of(const simgrid::kernel::routing::NetPoint* p) const;
  const Topology& topo_;
  std::uint64_t seed_;
  std::vector<simgrid::s4u::Host*> gpus_;
  std::vector<simgrid::s4u::Link*> links_;
  std::vector<int> gpu_by_netpoint_;  ///< NetPoint id -> GPU rank (-1: not a GPU).
  std::vector<std::uint32_t> path_;
  int sel_src_ = -1, sel_dst_ = -1, sel_part_ = -1;
};

/// Constructs the SimGrid engine of this (child) process with engine_args(). Never destroyed:
/// the child ends with _exit.
simgrid::s4u::Engine& make_engine();

/// Peak resident memory of this process (bytes).
double peak_rss_bytes();

/// Runs `child` in a forked process and returns the bytes it returns. SimGrid 3.32 allows one
/// Engine per process and keeps global state, so every SimGrid run (engine, probe) is a child.
/// An InputError thrown in the child is rethrown as InputError here; anything else, or a child
/// that dies, is an InternalError.
std::string run_isolated(const std::function<std::string()>& child);

}  // namespace tutti::sg
