#pragma once
// Free-GPU bookkeeping and the placement policies (private to the cluster simulator).
#include <cstdint>
#include <vector>

#include "tutti/cluster/cluster_sim.hpp"

namespace tutti {
struct Cluster;
namespace cluster_detail {

/// Shape of the cluster the policies reason about: nodes, NVLink domains (nodes sharing one),
/// leaf groups (nodes whose first NIC enters the same leaf switch: a ToR on fat-trees, a
/// scalable unit on rail-optimized fabrics).
struct Shape {
  int nodes = 1, gpn = 8, domain_nodes = 1, groups = 1, domains = 1;
  std::vector<int> group_of, domain_of;       ///< Per node.
  std::vector<std::vector<int>> group_nodes;  ///< Nodes of each group, ascending.
  std::vector<std::vector<int>> domain_nodes_list;
};
Shape cluster_shape(const Cluster& c);

class Placer {
 public:
  Placer(const Shape& s, AllocUnit alloc, PlacementKind kind);
  /// GPUs the job holds when it asks for `gpus` (node mode: whole nodes).
  int held_gpus(int gpus) const;
  /// Cheap necessary condition (counts only).
  bool fits_count(int gpus) const;
  /// Fills `out` with GPU ids for a job of `gpus` (held_gpus of them), without committing.
  bool place(int gpus, std::vector<int>& out);
  /// GPU allocation: any `gpus` free GPUs on up nodes, first on the nodes of `near` (GPU ids),
  /// then by node id (elastic growth); false when fewer are free. Does not commit.
  bool take_any(int gpus, const std::vector<int>& near, std::vector<int>& out);
  void commit(const std::vector<int>& gpus);
  void release(const std::vector<int>& gpus);
  void set_down(int node, bool down);
  bool down(int node) const { return down_[node] != 0; }
  int free_gpus() const { return free_total_; }  ///< On up nodes.
  int down_gpus() const { return down_total_ * s_.gpn; }
  int free_units() const { return alloc_ == AllocUnit::Node ? full_total_ : free_total_; }
  int units(int gpus) const;  ///< Nodes (node mode) or GPUs a job needs.
  int node_free(int node) const { return free_[node]; }

 private:
  bool full(int n) const { return !down_[n] && free_[n] == s_.gpn; }
  bool take_nodes(int n, std::vector<int>& nodes_out);
  int pick_partial(int g, const std::vector<int>& exclude) const;
  void add_node_gpus(int node, int count, std::vector<int>& out) const;
  const Shape& s_;
  AllocUnit alloc_;
  PlacementKind kind_;
  std::vector<std::uint64_t> mask_;  ///< Bit i set: GPU i of the node is free.
  std::vector<int> free_, group_full_, domain_full_;
  std::vector<char> down_;
  int free_total_ = 0, full_total_ = 0, down_total_ = 0;
  std::vector<int> scratch_nodes_, scratch_order_;
  std::vector<char> seen_;
};

}  // namespace cluster_detail
}  // namespace tutti
