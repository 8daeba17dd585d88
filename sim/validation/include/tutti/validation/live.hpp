#pragma once
// `tutti validate --live` / `--measurements FILE`: the engine's prediction of a replay measured on
// a live machine (`tutti exec replay`), per iteration and per op kind, with the error in percent.
// The measurement arrives as plain values (the CLI reads the measurement document), so this
// library never includes exec/.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tutti {

struct Program;
struct Cluster;
struct SimCluster;
struct CalibrationProfile;
struct Op;

/// What the comparison needs of a recorded replay (the `replay` section of a measurement
/// document, schemas/measurements.schema.json).
struct ReplayMeasurement {
  std::string workload, cluster, layout;  ///< Paths as recorded, and the layout flag.
  std::vector<std::string> overrides;     ///< Workload overrides of the scale-down.
  std::string device;                     ///< "cpu" or "gpu"
  int iterations = 0;
  double iteration_time_s = 0;  ///< Median.
  double iteration_min_s = 0, iteration_max_s = 0;
  std::vector<std::pair<std::string, double>> by_kind_s;  ///< Measured seconds per op kind.
  std::int64_t wrong_elements = 0;
};

struct LiveComparisonOptions {
  std::string calibration;       ///< Profile path ("" = the default profile).
  std::string cluster_override;  ///< Predict on this cluster file instead of the recorded one.
  double tolerance_pct = 0;      ///< > 0: the document says whether the iteration is within it.
};

/// Predicted seconds per op kind (keys as kind_key, models/kind_key.hpp) for pipeline stage
/// `stage`: the compute ops' model times plus each collective and p2p on an idle fabric.
std::map<std::string, double> predicted_by_kind(const Program& p, int stage, const Cluster& c,
                                                const CalibrationProfile& prof,
                                                const SimCluster& sc);

/// Predicts the recorded replay (its workload with its overrides, on its cluster or the override,
/// with the profile) and compares: {"measurements", "workload", "overrides", "cluster", "layout",
/// "device", "calibration", "engine", "iteration": {"predicted_s", "measured_median_s",
/// "measured_min_s", "measured_max_s", "measured_iterations", "error_pct"}, "by_kind": [{"kind",
/// "predicted_s", "measured_s", "error_pct"}], and "tolerance_pct", "within_tolerance" with a
/// tolerance}. Throws InputError (naming `measurements_name`) when the replay computed wrong
/// collective results, or when its files do not load.
nlohmann::json compare_replay(const ReplayMeasurement& rec, const std::string& measurements_name,
                              const LiveComparisonOptions& o);

/// The comparison for people (the text `tutti validate --measurements` prints).
std::string live_comparison_table(const nlohmann::json& j);

/// One op kind of a replay comparison (a `by_kind` entry).
struct ReplayKindComparison {
  std::string kind;  ///< "gemm", "collective.dp", ...
  double predicted_s = 0, measured_s = 0, error_pct = 0;
};

/// The replay comparison read back (schemas/replay_validation_result.schema.json): the keys of
/// compare_replay's document, typed; `document` keeps the whole document (the `replay` section
/// of --live, keys a newer writer adds).
struct ReplayComparison {
  int schema_version = 1;
  std::string measurements, workload, cluster, layout, device, calibration, engine;
  std::vector<std::string> overrides;
  double predicted_s = 0, measured_median_s = 0, measured_min_s = 0, measured_max_s = 0;
  long long measured_iterations = 0;
  double error_pct = 0;  ///< iteration.*
  std::vector<ReplayKindComparison> by_kind;
  std::optional<double> tolerance_pct;   ///< With --tolerance.
  std::optional<bool> within_tolerance;  ///< With --tolerance.
  nlohmann::json document;
};

/// The strict reader: checks `j` against schemas/replay_validation_result.schema.json (embedded)
/// and fills the struct. Throws InputError naming `source` and the key path prefixed with `at`.
ReplayComparison replay_comparison_from_json(const nlohmann::json& j, const std::string& source,
                                             const std::string& at = "");
/// `document` with the typed fields written over it: to_json(replay_comparison_from_json(j)) == j.
nlohmann::json to_json(const ReplayComparison& r);

/// The embedded result schemas of this library (validation_result.schema.json,
/// replay_validation_result.schema.json) as (file name, text) (cmake/embed_files.cmake).
const std::vector<std::pair<std::string, std::string>>& embedded_validation_result_schemas();

}  // namespace tutti
