#pragma once
// Test support: the generated DGX H100 fat-tree cluster the sim tests share (4 nodes per
// scalable unit), so its shape is written once.
#include <string>
#include <utility>
#include <vector>

#include "tutti/topologies/cluster.hpp"

namespace tutti::testing {

/// `nodes` DGX H100 nodes on a generated fat tree with 4 nodes per scalable unit, named `name`
/// (through make_cluster, the same parser and checks as a cluster file); `sets` are extra
/// `key.path=value` overrides, e.g. {"fabric.routing=dmodk"}.
inline Cluster dgx_h100_fat_tree(const std::string& name, int nodes,
                                 std::vector<std::string> sets = {}) {
  ClusterParams p;
  p.name = name;
  p.node = "dgx-h100";
  p.nodes = nodes;
  p.fabric = "fat_tree";
  p.nodes_per_su = 4;
  p.sets = std::move(sets);
  return make_cluster(p);
}

}  // namespace tutti::testing
