#pragma once
// Measurement documents: what `tutti exec bench` and `tutti exec replay` write and what
// `tutti calibrate` / `tutti validate --measurements` read (schemas/measurements.schema.json).
//   {"kind": "tutti.measurements", "version": 1, "tool": "tutti exec bench",
//    "environment": {...},                      // free-form record (environment.hpp)
//    "collectives": [CollBenchResult...],       // bench (collectives)
//    "compute": ComputeBenchResult,             // bench --gemm
//    "replay": {"workload", "cluster", "layout", "scale_down", "overrides", "result"}}
// Read strictly (core/config.hpp): unknown keys, missing keys and wrong types are InputErrors
// naming the file and key path; the environment and the replay's per-rank records are kept as
// JSON without interpretation.
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tutti/exec/bench.hpp"

namespace tutti::exec {

/// One op of a replayed Program's first class (stage 0) and its measured time.
struct ReplayOp {
  std::string kind;                             ///< to_string(OpKind): "gemm", "membound", ...
  std::int64_t m = 0, n = 0, k = 0, batch = 0;  ///< GEMM / attention shape (0: none recorded).
  double bytes = 0, flops = 0;                  ///< As recorded (0: not recorded).
  double time_s = 0;  ///< Median op time, averaged over the class's ranks.
};

/// `tutti serve replay`'s record of the step it replayed.
struct ServeReplayRecord {
  std::string config, phase,
      dtype = "bf16";  ///< dtype: the serving dtype (bf16 when not recorded).
  std::int64_t sequences = 0, context_tokens = 0, tokens = 0;
  double predicted_s = 0, predicted_comm_s = 0;
};

/// The replay part that validation and calibration need.
struct ReplayRecord {
  std::string workload, cluster, layout;  ///< Paths as given, and to_string(Layout).
  std::vector<std::string> overrides;     ///< Workload overrides of the scale-down.
  std::string device;                     ///< "cpu" or "gpu"
  int world = 1, iterations = 0;
  double iteration_time_s = 0;  ///< Median.
  double iteration_min_s = 0, iteration_max_s = 0;
  std::vector<std::pair<std::string, double>> by_kind_s;  ///< measured_by_kind()
  std::int64_t wrong_elements = 0;
  std::vector<ReplayOp> ops;               ///< Stage 0's ops with their times.
  std::optional<ServeReplayRecord> serve;  ///< `tutti serve replay` documents.
};

struct MeasurementDoc {
  std::string file;
  std::string tool;
  std::shared_ptr<nlohmann::json> environment;  ///< As recorded.
  std::vector<CollBenchResult> collectives;
  std::optional<ComputeBenchResult> compute;
  std::optional<ReplayRecord> replay;
};

/// Reads one measurements file. Throws InputError (file, key path, found, expected).
MeasurementDoc load_measurements(const std::string& path);
/// Same from JSON text (`name` in messages).
MeasurementDoc parse_measurements(const std::string& text, const std::string& name);

}  // namespace tutti::exec
