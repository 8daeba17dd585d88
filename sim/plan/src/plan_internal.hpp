#pragma once
// Planner internals shared by sim/plan/src/plan*.cpp (not a public header).
#include <vector>

#include "tutti/plan/planner.hpp"

namespace tutti {

/// Strict order used for the frontier: `a` dominates `b`, or both have the same metrics and
/// `a` comes first in the enumeration. Transitive, so the frontier of a union is the frontier
/// of the union of the parts' frontiers.
bool beats(const Evaluation& a, const Evaluation& b);
/// Order of infeasible configurations by how close they came (memory misses last).
bool nearer_miss(const Evaluation& a, const Evaluation& b);
/// Adds `e` to a frontier, dropping what it beats (no-op when something beats it).
void pareto_insert(std::vector<Evaluation>& front, const Evaluation& e);
/// Keeps `best` sorted by the objective and at most `k` long.
void best_insert(std::vector<Evaluation>& best, const Evaluation& e, Objective o, int k);
/// Keeps in `best` (sorted by group) the best by the objective of each group: gpu_group when
/// `by_gpu`, else fabric_group.
void group_insert(std::vector<Evaluation>& best, const Evaluation& e, Objective o, bool by_gpu);
/// slot = min(slot, v) where 0 means "none yet"; v <= 0 is ignored.
void note_min(double& slot, double v);

}  // namespace tutti

namespace tutti {

/// The workload facts that decide which layouts are structurally valid.
struct SpaceFacts {
  int layers = 1;
  int heads = 1, kv_heads = 1;
  int seq_len = 1;
  int global_batch = 1;  ///< Sequences (samples) per iteration.
  int experts = 0;       ///< 0 for a dense model.
  int ffn_hidden = 1, moe_ffn_hidden = 0;
  bool transformer = true;  ///< false: data parallelism only (ResNet, DLRM).
};

/// Every structurally valid layout for `gpus` GPUs, in the deterministic enumeration order
/// (tp, pp, cp, ep, vp, micro_batch, zero, recompute nested, outermost first). Empty lists in
/// `space` take the defaults: tp {1,2,4,8} capped at the NVLink domain, pp the divisors of the
/// layer count up to 32, cp {1,2}, ep {1} (dense) or powers of two dividing the experts up to 64,
/// vp {1,2}, micro_batch {1,2}, zero {1}, recompute {none, selective, full}.
std::vector<Layout> enumerate_layouts(const SpaceFacts& f, const LayoutSpace& space, int gpus,
                                      int nvlink_domain);
/// Number of layouts enumerate_layouts() returns (without storing them).
std::uint64_t count_layouts(const SpaceFacts& f, const LayoutSpace& space, int gpus,
                            int nvlink_domain);
/// GPU counts to try: the explicit list, or the ladder {1, 1.25, 1.5} x 2^k nodes; kept when in
/// [gpus_min, gpus_max] and a multiple of `gpus_per_node`. Sorted, distinct.
std::vector<int> gpu_counts(const PlanRequest& r, int gpus_per_node);

}  // namespace tutti

namespace tutti {
/// Why nothing meets the constraints, with the nearest miss (for PlanResult::reason).
std::string explain_no_fit(const PlanRequest& r, const std::vector<HardwareChoice>& hw,
                           const PlanResult& result);
/// "512 x DGX H200 (4,096 GPUs), rail-optimized 1:1 InfiniBand, buy".
std::string describe(const HardwareChoice& h, Acquisition a);
}  // namespace tutti
