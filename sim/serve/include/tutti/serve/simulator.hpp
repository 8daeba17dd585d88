#pragma once
// Continuous-batching serving simulator (vLLM V1 / SGLang / TensorRT-LLM in-flight batching):
// per replica, every iteration schedules the running sequences' decodes and prefill chunks (then
// admits waiting requests in arrival order) under max_batch and max_tokens_per_iteration; KV
// memory is paged in blocks of kv_block_tokens, allocated as tokens are computed. A request is
// admitted only when blocks for its scheduled tokens are free (admission control; head of line
// waits). When a running sequence needs a block and none is free, the most recently admitted
// running sequence is preempted (recompute: its blocks are freed, it returns to the front of the
// queue and later re-prefills prompt + generated tokens), as vLLM does by default.
// Without chunked prefill an iteration is either prefills of whole prompts (preferred) or decodes
// (vLLM V0). With disaggregation, prefill replicas run prompts and emit the first token, the KV
// cache is sent to the least loaded decode replica (StepModel::kv_transfer_s), and the prefill
// replica frees its blocks when the transfer ends.
// Iteration times come from StepModel. Deterministic: same config, model, cluster and seed give
// the same result byte for byte.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tutti/facility/facility.hpp"
#include "tutti/serve/config.hpp"
#include "tutti/serve/step_model.hpp"

namespace tutti {
struct Cluster;
}

namespace tutti::serve {

/// One request's life, seconds from the start.
struct RequestRecord {
  double arrival_s = 0, first_scheduled_s = -1, first_token_s = -1, finish_s = -1;
  std::int64_t prompt_tokens = 0, output_tokens = 0;
  int preemptions = 0;
  int replica = -1;          ///< Replica that decoded it (colocated: the only one).
  int prefill_replica = -1;  ///< Disaggregated: replica that ran the prompt.
  double ttft_s() const { return first_token_s - arrival_s; }
  double e2e_s() const { return finish_s - arrival_s; }
  /// (finish - first token) / (output - 1); 0 for one-token outputs.
  double tpot_s() const {
    return output_tokens > 1 ? (finish_s - first_token_s) / static_cast<double>(output_tokens - 1)
                             : 0;
  }
};

/// Nearest-rank percentiles (p = ceil(q n) - th smallest) and the mean.
struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  std::int64_t count = 0;
};
Percentiles percentiles(std::vector<double> values);

struct ServeResult {
  std::string model, cluster, gpu, config;
  Serving serving;
  Slo slo;
  std::uint64_t seed = 1;
  int gpus = 0;  ///< GPUs the replicas use.
  int cluster_gpus = 0;
  ReplicaMemory memory;
  double kv_bytes_per_token_model = 0;
  std::int64_t requests = 0;
  double makespan_s = 0;               ///< First arrival to last finish.
  Percentiles ttft, tpot, e2e, queue;  ///< queue: arrival to first scheduled.
  double output_tokens = 0, prompt_tokens = 0;
  double output_tokens_per_s = 0, output_tokens_per_s_per_gpu = 0,
         output_tokens_per_s_per_replica = 0;
  double total_tokens_per_s = 0;  ///< Prompt + output tokens per second.
  double requests_per_s = 0;
  double slo_attainment = 0;  ///< Share of requests meeting every SLO.
  double goodput_rps = 0;     ///< Requests meeting every SLO per second (DistServe's goodput).
  double kv_occupancy_mean = 0,
         kv_occupancy_peak = 0;  ///< Used blocks / blocks, time-weighted over replicas.
  std::int64_t preemptions = 0;
  std::int64_t iterations = 0;
  double mean_batch_sequences = 0, mean_batch_tokens = 0;
  double kv_transfer_s_total = 0, kv_transfer_bytes = 0;
  // Per-GPU busy time summed over replicas' iterations (seconds; divide by replicas for a mean
  // GPU).
  double busy_s = 0, gemm_busy_s = 0, memory_busy_s = 0, comm_busy_s = 0;
  std::vector<RequestRecord> records;
  std::vector<std::string> notes;  ///< Defaults and approximations that apply.
};

/// Runs the simulation. Throws InputError when a request can never fit (its prompt + output
/// exceeds the KV blocks of a replica, or a prompt exceeds max_tokens_per_iteration without
/// chunked prefill), when the weights do not fit, or the replicas need more GPUs than the cluster.
ServeResult simulate_serving(const Workload& w, const ServeConfig& cfg, const SimCluster& cluster,
                             const CalibrationProfile& profile, std::uint64_t seed);

/// Serving's facility view: power over the run, energy per output token, cost per million output
/// tokens owned (sim's compute_cost over the run's wall time) and rented (catalog GPU-hour price).
struct ServeFacility {
  PowerResult power;
  CostResult cost;
  double energy_J = 0;  ///< Facility energy of the run (IT x PUE).
  double energy_per_output_token_J = 0;
  double usd_per_million_output_tokens_owned = 0;
  double usd_per_million_output_tokens_rented = 0;  ///< 0 when the catalog has no rental price.
  FacilityOptions options;
};
ServeFacility serve_facility(const ServeResult& r, const Cluster& cluster,
                             const FacilityOptions& o);

/// JSON of the result (schemas/serve_result.schema.json); `with_requests` adds every request.
nlohmann::json to_json(const ServeResult& r, const ServeFacility& f, bool with_requests = false);
/// The text table of `tutti serve simulate`.
std::string to_text(const ServeResult& r, const ServeFacility& f);
/// One row per request:
/// id,arrival_s,prompt_tokens,output_tokens,ttft_s,tpot_s,e2e_s,queue_s,preemptions,replica.
std::string to_csv(const ServeResult& r);

}  // namespace tutti::serve
