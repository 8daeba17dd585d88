#pragma once
// The serving run document (`tutti serve simulate --json`, schemas/serve_result.schema.json)
// read back: `serve::to_json(ServeResult, ServeFacility)` (simulator.hpp) writes it,
// `ServeResultView::from_json` reads it strictly. Readers (reports/: the serving report) use only
// this view, so a malformed document is an InputError naming the key path (exit 2).
//
// from_json checks the document against the schema embedded at build time (core/schema.hpp),
// then copies each key the readers use into the typed view.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tutti::serve {

/// The `schema_version` `to_json(ServeResult, ...)` writes and `ServeResultView::from_json`
/// accepts.
inline constexpr int kServeResultSchemaVersion = 1;

/// schemas/serve_result.schema.json as (file name, text), one entry, embedded at build time
/// (cmake/embed_files.cmake).
const std::vector<std::pair<std::string, std::string>>& embedded_serve_result_schema();

/// Nearest-rank percentiles over the requests (seconds).
struct LatencyView {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

/// One request (request_records[], written with `with_requests`).
struct RequestRecordView {
  double arrival_s = 0, ttft_s = 0, tpot_s = 0;
  std::int64_t prompt_tokens = 0, output_tokens = 0, preemptions = 0;
};

/// A serving run document.
struct ServeResultView {
  int schema_version = kServeResultSchemaVersion;
  std::string model, cluster, gpu;
  std::int64_t requests = 0, gpus = 0, tp = 0, replicas = 0;  ///< serving.tp, serving.replicas
  LatencyView ttft_s, tpot_s, e2e_s, queue_s;
  // throughput.*
  double output_tokens_per_s = 0, output_tokens_per_s_per_gpu = 0,
         output_tokens_per_s_per_replica = 0, requests_per_s = 0;
  double slo_attainment = 0, goodput_requests_per_s = 0;  ///< goodput.*
  double kv_occupancy_mean = 0, kv_occupancy_peak = 0;    ///< kv_cache.occupancy_*
  std::int64_t preemptions = 0;                           ///< kv_cache.preemptions
  double mean_batch_sequences = 0;
  // facility.*
  double avg_it_W = 0, energy_per_output_token_J = 0, usd_per_million_output_tokens_owned = 0,
         usd_per_million_output_tokens_rented = 0;
  std::vector<std::string> notes;
  std::vector<RequestRecordView> request_records;  ///< empty when not written

  /// Reads `doc` strictly: InputError naming `source` (the file) and the key path (prefixed by
  /// `at`; empty: the whole file) for a document that is not a serving run or breaks
  /// schemas/serve_result.schema.json. O(document size).
  static ServeResultView from_json(const nlohmann::json& doc, const std::string& source,
                                   const std::string& at = "");
};

}  // namespace tutti::serve
