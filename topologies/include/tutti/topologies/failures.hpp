#pragma once
// Link and switch failure injection (`tutti simulate --fail ... --fail-rate ...`): which parts of
// a cluster's scale-out fabric are down. Applying failures replaces the cluster's topology with
// one whose routes avoid them (Topology::with_failures: ECMP, adaptive routing or spraying over
// the equal-cost paths that remain), so every engine sees fewer paths and less bandwidth; a pair
// of GPUs left without a path is an InputError naming the pair when a run routes it.
//
// Names are the ones the outputs use: switches "leaf3", "spine0", "core12" (index over the
// whole fabric, planes included), NICs "nic17"; a cable is named by its two ends ("leaf3-spine0",
// "nic17-leaf0"; "->" is accepted too), "#k" picks the k-th of parallel cables between the same
// two switches (default #0); the busiest links of an output ("spine0->leaf0") are such names.
// A bare number is a directed link id (the link L<id> of `tutti topo --export simgrid`); it
// fails that link's cable.
#include <cstdint>
#include <string>
#include <vector>

#include "tutti/topologies/cluster.hpp"

namespace tutti {

struct FailureRequest {
  std::vector<std::string> items;  ///< --fail values: "link=ID" or "switch=NAME" (repeatable).
  double link_rate = 0;            ///< Probability that each switch-to-switch cable is down.
  double switch_rate = 0;          ///< Probability that each switch is down.
  std::uint64_t seed = 1;          ///< Random failures: the same seed gives the same failures.
  bool empty() const { return items.empty() && link_rate == 0 && switch_rate == 0; }
};

/// Parses a --fail-rate value "links=0.01,switches=0.001" into `r` (InputError naming
/// --fail-rate for an unknown key or a probability outside [0, 1)).
void parse_fail_rate(const std::string& text, FailureRequest& r);

/// Takes down the requested links and switches of `c` (replacing c.topology; the bill of
/// materials and the fabric facts stay the healthy fabric's), records what went down in
/// c.failures and returns it.
/// InputError ("--fail") for a name that is not a part of the fabric, a link inside a node, or a
/// fabric without a failure model (dragonfly, torus, single node).
AppliedFailures apply_failures(Cluster& c, const FailureRequest& r);

}  // namespace tutti
