#pragma once
// What every engine returns for one (workload, cluster, layout): the contract for the CLI,
// the facility models, the planner and the reports. to_json() defines the JSON keys.
#include <array>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tutti/models/program.hpp"
#include "tutti/topologies/topology.hpp"

namespace tutti {

/// Where an iteration's time goes, on the critical path of the slowest rank class.
/// compute_s + sum(exposed_comm_s) + bubble_s + other_s == iteration_time_s.
struct Breakdown {
  double compute_s = 0;
  EnumArray<GroupDim, double> exposed_comm_s{};  ///< One slot per GroupDim (its table sizes it).
  double bubble_s = 0;                           ///< Pipeline fill/drain idle time.
  double other_s = 0;
  /// Busy seconds per iteration of the MoE layers' parts on the rank class (pipeline stage) with
  /// the most MoE busy time (the critical stage above may hold only dense layers), indexed by
  /// MoePart (router, permute, expert GEMMs, shared experts, all-to-all; [None] stays 0): the sum
  /// of each part's op durations over all micro-batches, forward, backward and recompute. Not a
  /// term of the sum above: compute parts lie inside compute_s, the all-to-all's exposed share
  /// inside exposed_comm_s[EP]. All zero for dense models.
  EnumArray<MoePart, double> moe_s{};
  double exposed_comm_total() const;
};

struct LinkUse {
  std::uint32_t link = 0;
  Tier tier = Tier::Access;
  std::string name;        ///< "leaf3->spine7"
  double utilization = 0;  ///< Busy bytes / (bandwidth * iteration time), 0..1.
  double bytes = 0;        ///< Bytes carried per iteration.
};

struct SimResult {
  std::string engine;  ///< "native", "analytic", "simgrid"
  double iteration_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double samples_per_s = 0;
  double tflops_per_gpu = 0;  ///< Model FLOPs per GPU per second / 1e12.
  double mfu = 0;             ///< Model FLOPs utilisation vs dense peak of the dtype.
  double hfu = 0;             ///< Hardware FLOPs utilisation (with recompute).
  Breakdown breakdown;
  std::vector<LinkUse> bottleneck_links;  ///< Busiest links first.
  double iterations = 0;                  ///< Iterations to train the requested tokens/samples.
  double time_to_train_s = 0;             ///< iterations * iteration_time_s (before failures).
  double memory_per_gpu_bytes = 0;
  // Per-stream busy time of the busiest rank class (for power models), seconds per iteration.
  double gemm_busy_s = 0, memory_busy_s = 0, comm_busy_s = 0;
  double wall_s = 0;  ///< Wall-clock time the engine took.
  /// Approximations the engine made in this run, each with what bounds it (empty: none). JSON key
  /// `approximations` only when not empty.
  std::vector<std::string> approximations;
};

/// JSON with keys iteration_time_s, tokens_per_s_per_gpu, samples_per_s, tflops_per_gpu, mfu,
/// breakdown{compute_s, exposed_comm_s{one key per GroupDim name}, bubble_s, other_s},
/// bottleneck_links, iterations, time_to_train_s, engine.
void to_json(nlohmann::json& j, const SimResult& r);

}  // namespace tutti
