#pragma once
// The plan result document (`tutti plan --json`, schemas/plan_result.schema.json) read back:
// `Planner::to_json` (planner.hpp) writes it, `PlanResultView::from_json` reads it strictly.
// Readers (reports/: `tutti report plan`, `tutti report render`) use only this view, so a
// malformed document is an InputError naming the key path (exit 2), never a half-read report.
//
// from_json checks the document against the schema embedded at build time (core/schema.hpp),
// then copies each key the readers use into the typed view. Writers may add keys; keys not listed
// here are not read. A number absent (or null, "not applicable") is NaN.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tutti {

/// The `schema_version` `Planner::to_json` writes and `PlanResultView::from_json` accepts.
inline constexpr int kPlanResultSchemaVersion = 1;

/// schemas/plan_result.schema.json as (file name, text), one entry, embedded at build time
/// (cmake/embed_files.cmake).
const std::vector<std::pair<std::string, std::string>>& embedded_plan_result_schema();

/// One line of a configuration's bill of materials (bill_of_materials.items[], or bom[]).
struct PlanBomLineView {
  std::string id, name, role;
  double count = 0, price_usd = 0, power_W = 0;  ///< NaN when absent
};

/// One configuration (recommended, pareto[], finalists[], alternatives[], nearest_miss).
struct PlanConfigurationView {
  std::optional<std::int64_t> index;  ///< The configuration's global index in the search.
  // hardware.*
  std::string node, gpu, fabric, network, storage;
  std::string acquisition;  ///< hardware.acquisition, else acquisition; "" when absent
  std::optional<std::int64_t> nodes;
  std::int64_t gpus = 0;
  double oversubscription = 0;  ///< NaN when absent
  /// layout.*: the writer's `compact` string, a hand-written `string`, else the degrees.
  struct Layout {
    std::string compact, string, recompute;
    std::optional<std::int64_t> tp, pp, dp, cp, ep, vp, zero, micro_batch;
  } layout;
  std::string engine;      ///< "native" (flow-level) or "analytic" (screening); "" when absent
  std::string bottleneck;  ///< "" when absent
  // Seconds, dollars, joules, watts, bytes; NaN when absent or null.
  double iteration_time_s = 0, time_to_train_s = 0, mfu = 0, memory_per_gpu_bytes = 0;
  double capex_usd = 0, run_opex_usd = 0, total_cost_usd = 0;
  double energy_J = 0, energy_J_per_token = 0, avg_it_power_W = 0, peak_facility_power_W = 0;
  struct Breakdown {
    double compute_s = 0, bubble_s = 0, other_s = 0;  ///< NaN when absent
    std::map<std::string, double> exposed_comm_s;     ///< per group dimension ("tp", "dp", ...)
  } breakdown;
  std::vector<PlanBomLineView> bill_of_materials;  ///< empty when absent
  /// facility.cost.origins (where each price comes from), as written; null when absent.
  nlohmann::json price_origins;
  std::optional<std::vector<std::string>> violations;  ///< constraints missed (nearest miss)
};

/// A whole plan document.
struct PlanResultView {
  int schema_version = kPlanResultSchemaVersion;
  bool found = false;
  std::string reason;    ///< Why nothing fits; "" when absent.
  std::string workload;  ///< workload.name, else request.workload, else workload.file; "" if none
  double evaluated = 0, feasible = 0, simulated = 0, pruned = 0;  ///< counts; NaN when absent
  std::optional<std::int64_t> retimed;       ///< configurations the flow-level engine timed
  std::map<std::string, double> violations;  ///< configurations rejected, per constraint
  std::vector<std::pair<std::string, std::string>> constraints;  ///< (constraint, value)
  std::optional<PlanConfigurationView> recommended;              ///< absent when nothing fits
  std::vector<PlanConfigurationView> pareto, finalists, alternatives;
  std::optional<PlanConfigurationView> nearest_miss;
  /// calibration_defaults (per GPU id: the values that are calibration defaults), as written;
  /// null when absent.
  nlohmann::json calibration_defaults;

  /// Reads `doc` strictly: InputError naming `source` (the file) and the key path (prefixed by
  /// `at`, where `doc` sits in its file; empty: the whole file) for a document that is not a
  /// plan or breaks schemas/plan_result.schema.json. O(document size).
  static PlanResultView from_json(const nlohmann::json& doc, const std::string& source,
                                  const std::string& at = "");
};

}  // namespace tutti
