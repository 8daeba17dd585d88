#pragma once
// `tutti cluster simulate|compare --html FILE`: the report of one or several runs of a job trace
// on a cluster (documents of schemas/cluster_result.schema.json, with job_outcomes): a summary
// table per run (utilisation, goodput, wait and JCT percentiles, makespan, energy, cost), the
// allocated vs busy utilisation timeline of each run, the queue-wait CDF of each run, and, for
// several runs, the per-policy comparison (waits side by side, GPU-hours by cause stacked).
#include <nlohmann/json_fwd.hpp>

#include "tutti/reports/document.hpp"

namespace tutti::reports {

/// Builds the report from an array of cluster result documents (at least one). Fills everything
/// but tool_version, command and inputs. Each run is read only through
/// ClusterResultView::from_json (sim/cluster). Throws InputError when `runs` is not a non-empty
/// array, a run breaks schemas/cluster_result.schema.json (naming "runs.K." and the key path) or
/// has no "job_outcomes".
Report build_cluster_report(const nlohmann::json& runs);

}  // namespace tutti::reports
