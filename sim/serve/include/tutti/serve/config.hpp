#pragma once
// Serving configuration: traffic (arrivals, prompt and output lengths), the serving setup (TP/PP/EP
// per replica, replicas, batch limits, paged KV cache, chunked prefill, prefill/decode
// disaggregation) and the SLOs. Read strictly from JSON (schemas/serve.schema.json): unknown keys,
// missing keys, wrong types, bad units and out-of-range values are InputErrors naming the file and
// the key path. Every default that applies is recorded in ServeConfig::defaults_applied so that
// outputs can state it.
#include <cstdint>
#include <string>
#include <vector>

#include "tutti/models/layout.hpp"

namespace tutti::serve {

/// A token-length distribution. Fixed: `value`. Uniform: integers in [min, max]. Lognormal:
/// median `median` and log-space standard deviation `sigma`, rounded, clipped to [min, max].
struct LengthDist {
  std::string dist = "fixed";  ///< "fixed" | "uniform" | "lognormal".
  std::int64_t value = 0, min = 1, max = 0;
  double median = 0, sigma = 0;
};

/// One request of a trace (or one drawn from the distributions).
struct TraceRequest {
  double arrival_s = 0;
  std::int64_t prompt_tokens = 0, output_tokens = 0;
};

struct Traffic {
  std::string arrival = "poisson";  ///< "poisson" | "burst" (all at t=0) | "trace".
  double rate_per_s = 0;            ///< Poisson mean arrival rate (requests per second).
  std::int64_t requests = 0;        ///< Requests drawn (poisson, burst).
  LengthDist prompt, output;        ///< Drawn lengths (poisson, burst).
  std::string trace_file;           ///< "trace": CSV arrival_s,prompt_tokens,output_tokens.
  std::vector<TraceRequest> trace;  ///< "trace": its rows, read at parse time.
};

struct Serving {
  int tp = 1, pp = 1, ep = 1;  ///< Per replica. ep divides tp (experts sharded over the TP group).
  int replicas = 1;            ///< Colocated replicas (each prefill and decode).
  /// Disaggregation: prefill_replicas > 0 and decode_replicas > 0 replace `replicas`; prompts
  /// run on a prefill replica, whose KV cache then travels over the fabric to a decode replica.
  int prefill_replicas = 0, decode_replicas = 0;
  DType dtype = DType::BF16;     ///< Weights and activations.
  DType kv_dtype = DType::BF16;  ///< KV cache.
  int max_batch = 256;           ///< Running sequences per replica (vLLM max_num_seqs).
  std::int64_t max_tokens_per_iteration = 8192;  ///< vLLM max_num_batched_tokens.
  int kv_block_tokens = 16;                      ///< Paged KV-cache block size, tokens.
  double gpu_memory_utilization = 0.9;           ///< Share of HBM for weights + activations + KV.
  bool chunked_prefill = true;
  std::string router = "least_loaded";  ///< "least_loaded" | "round_robin".
  bool disaggregated() const { return prefill_replicas > 0; }
  int gpus_per_replica() const { return tp * pp; }
  int total_replicas() const {
    return disaggregated() ? prefill_replicas + decode_replicas : replicas;
  }
  int gpus() const { return total_replicas() * gpus_per_replica(); }
};

struct Slo {
  double ttft_s = 0;  ///< 0 = no TTFT target.
  double tpot_s = 0;  ///< 0 = no TPOT target.
};

struct ServeConfig {
  std::string name, file;
  Traffic traffic;
  Serving serving;
  Slo slo;
  std::vector<std::string> defaults_applied;  ///< "serving.max_batch = 256 (default)", ...
};

/// Reads a serving configuration file; `overrides` are `--set KEY.PATH=VALUE`. A trace file is
/// read relative to the configuration's folder. Throws InputError.
ServeConfig load_serve_config(const std::string& path,
                              const std::vector<std::string>& overrides = {});
/// Same from JSON text; `name` stands for the file in messages, `base_dir` resolves trace paths.
ServeConfig parse_serve_config(const std::string& text, const std::string& name,
                               const std::vector<std::string>& overrides = {},
                               const std::string& base_dir = ".");
/// Reads a trace CSV (header `arrival_s,prompt_tokens,output_tokens`; arrivals non-decreasing).
/// Throws InputError naming file:line.
std::vector<TraceRequest> read_trace_csv(const std::string& text, const std::string& name);

/// The requests of the traffic, in arrival order, drawn with `seed` (trace: as given). The
/// generator is a fixed-algorithm PRNG (splitmix64), so a seed gives the same requests on every
/// platform.
std::vector<TraceRequest> generate_requests(const Traffic& t, std::uint64_t seed);

}  // namespace tutti::serve
