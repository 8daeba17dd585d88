#pragma once
// Serving planner (`tutti serve plan`): for a model, a load (the configuration's traffic) and SLOs,
// the cheapest hardware and serving configuration that meets them, and the Pareto frontier of cost
// per million output tokens vs p99 end-to-end latency vs energy per output token.
//
// Search space, in one deterministic order: hardware options (cluster files, each optionally with
// its node type replaced) x tp (powers of two up to the node's GPUs that divide the heads) x pp
// (1; when tp fills a node also powers of two up to max_pp: pipelines span nodes, TP stays inside
// one, as vLLM's multi-node layout) x ep (MoE: 1 and tp) x replicas (1 .. GPUs / (tp pp)) x
// max_batch (the option list) x disaggregation (off; with >= 2 replicas also 1 prefill : n-1
// decode and n/2 : n/2). Each configuration
// is simulated in full (simulate_serving) with the same seed, so every candidate sees the same
// requests.
// A configuration meets the SLOs when its SLO attainment (share of requests within every SLO) is
// at least `attainment`. Cost and energy count the GPUs used: the facility model's cost and
// energy of the whole cluster file, prorated by GPUs used / GPUs in the cluster (the rest of the
// hardware is taken to serve other traffic; stated in the output). Identical frontier points are
// listed once (the first in search order).
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tutti/serve/simulator.hpp"

namespace tutti::serve {

struct HardwareOption {
  std::string label;  ///< "topologies/dgx-h100-single.json" or "...:node=dgx-b200".
  const Cluster* cluster = nullptr;
};

struct ServePlanOptions {
  double attainment = 0.99;  ///< Share of requests that must meet every SLO.
  std::vector<int> max_batches = {32, 128, 256};
  bool rent = false;           ///< Rank by the rented price instead of owned.
  bool disaggregation = true;  ///< Also try prefill/decode disaggregation.
  int max_pp = 8;              ///< Largest pipeline degree tried (1: no pipelines).
};

struct ServeCandidate {
  std::string hardware, gpu;
  Serving serving;
  int gpus = 0;
  bool feasible = false;  ///< Simulated (false: did not fit; `why` says why).
  bool meets = false;     ///< Feasible and SLO attainment >= the target.
  std::string why;
  double attainment = 0, ttft_p99_s = 0, tpot_p99_s = 0, e2e_p99_s = 0;
  double output_tokens_per_s = 0;
  double usd_per_mtok_owned = 0, usd_per_mtok_rented = 0, energy_per_token_J = 0;
  double cost() const;  ///< The ranking cost (owned or rented per the options).
  bool rent = false;
};

struct ServePlanResult {
  std::vector<ServeCandidate> candidates;  ///< Every configuration in search order.
  int best = -1;              ///< Cheapest that meets the SLOs (ties: fewer GPUs, then order).
  std::vector<int> frontier;  ///< Pareto (cost, p99 e2e, energy/token) among those that meet.
  int nearest_miss = -1;      ///< Highest attainment among those that do not meet.
  ServePlanOptions options;
  Slo slo;
};

/// Runs the search. Throws InputError when there are no hardware options or the model is not a
/// decoder-only transformer.
ServePlanResult plan_serving(const Workload& w, const ServeConfig& base,
                             const std::vector<HardwareOption>& hardware,
                             const CalibrationProfile& profile, std::uint64_t seed,
                             const ServePlanOptions& options);

nlohmann::json to_json(const ServePlanResult& r);
std::string to_text(const ServePlanResult& r);

}  // namespace tutti::serve
