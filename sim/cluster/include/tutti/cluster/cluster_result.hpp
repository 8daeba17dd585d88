#pragma once
// The cluster trace run document (`tutti cluster simulate --json`,
// schemas/cluster_result.schema.json) read back: `to_json(ClusterResult)` (cluster_sim.hpp)
// writes it, `ClusterResultView::from_json` reads it strictly. Readers (reports/: the cluster
// report) use only this view, so a malformed document is an InputError naming the key path
// (exit 2).
//
// from_json checks the document against the schema embedded at build time (core/schema.hpp),
// then copies each key the readers use into the typed view.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tutti {

/// The `schema_version` `to_json(ClusterResult)` writes and `ClusterResultView::from_json`
/// accepts.
inline constexpr int kClusterResultSchemaVersion = 1;

/// schemas/cluster_result.schema.json as (file name, text), one entry, embedded at build time
/// (cmake/embed_files.cmake).
const std::vector<std::pair<std::string, std::string>>& embedded_cluster_result_schema();

/// p50/p90/p99/mean of a per-job quantity (wait_s, jct_s, slowdown).
struct JobPercentilesView {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;
};

/// A cluster trace run document.
struct ClusterResultView {
  int schema_version = kClusterResultSchemaVersion;
  std::string cluster, trace, scheduler, placement;
  std::int64_t gpus = 0, jobs = 0;
  double makespan_s = 0, allocated_utilization = 0, busy_utilization = 0, goodput = 0;
  double useful_gpu_hours = 0, energy_J = 0, cost_usd = 0;
  /// idle_gpu_hours.*: GPU-hours not doing useful work, by cause.
  struct Idle {
    double fragmentation = 0, queue_head_blocking = 0, no_demand = 0, failures_restarts = 0,
           preemption = 0, interference = 0;
  } idle_gpu_hours;
  JobPercentilesView wait_s, jct_s, slowdown;
  /// timeline[]: share of the GPUs allocated and busy from t_s on.
  struct UtilPoint {
    double t_s = 0, allocated = 0, busy = 0;
  };
  std::vector<UtilPoint> timeline;
  /// job_outcomes[].wait_s, in document order; absent when the run was written without jobs.
  std::optional<std::vector<double>> job_waits_s;

  /// Reads `doc` strictly: InputError naming `source` (the file) and the key path (prefixed by
  /// `at`, e.g. "runs.1"; empty: the whole file) for a document that breaks
  /// schemas/cluster_result.schema.json. O(document size).
  static ClusterResultView from_json(const nlohmann::json& doc, const std::string& source,
                                     const std::string& at = "");
};

}  // namespace tutti
