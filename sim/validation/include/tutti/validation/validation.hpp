#pragma once
// Validation against published measurements (`tutti validate --cases FILE [--cases FILE2 ...]`).
//
// A case (tests/validation/README.md; schema: schemas/validation_cases.schema.json) states a
// model, a training recipe, a parallel layout and the hardware of a real run as structured fields,
// and one measured number (`measured.metric`). tutti predicts that number from those fields and
// its catalog only. `notes`, `source`, `derived_fields`, `also_measured` and the "as the source
// words it" strings (`model.name`, `hardware.gpu`, `hardware.intra_node`, `training.precision`,
// `training.recompute`, `collective.message_label`) are for people: the reader checks their type
// and never takes a fact from them.
//
// Reading is strict: an unknown key, a wrong type or a value outside its stated range (the schema
// and the parser state the same ranges) is an InputError naming the file, the case index and id,
// the key path, what was found and what was expected. A null field gets one documented default
// (docs/validation.md, "Defaults"), recorded in the case's `assumptions`. A stated fact tutti
// cannot express (a GPU or server the catalog lacks, a fabric kind, a sharding mode, a metric it
// does not predict) moves the case to `skipped` with the reason. A case whose built model has a
// parameter count more than 5% away from `model.params` is `inconsistent` (both numbers kept) and
// not scored.
//
// Scoring: cases named by the calibration profile in use (any `fitted_to` list in it, entries
// "case:<id>" or "source:<source_key>") are `fitted`; the headline MAPE and the groups are over
// the unfitted cases only, and the fitted ones are summarised apart.
//
// Metrics: tflops_per_gpu (Megatron's FLOP count with the stated recompute),
// tokens_per_sec_per_gpu, step_time, mfu (model FLOPs over dense peak, %), images_per_sec and
// sequences_per_sec (all GPUs), busbw (nccl-tests bus bandwidth, GB/s), hbm_bandwidth (TB/s,
// triad).
//
// Serving cases (a `serving` and a `load` section instead of `training`; kind "serving") are
// predicted by the serve simulator through ValidationOptions::serving (sim/serve implements it and
// cli sets it: sim cannot include sim/serve); without it they are skipped. Their metrics:
// output_tokens_per_sec, total_tokens_per_sec, requests_per_sec (all GPUs of the case),
// ttft_{mean,median,p99}_ms, tpot_{mean,median,p99}_ms, e2e_{mean,median}_s.
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <vector>

#include "tutti/sim/calibration.hpp"

namespace tutti {

struct Workload;
struct Cluster;
class Doc;

/// A serving case as handed to the serving predictor: the model built from the case's fields,
/// the cluster of its hardware and a serving configuration document in the form `tutti serve
/// simulate --config` reads (schemas/serve.schema.json).
struct ServingCase {
  std::string id, metric;
  const Workload* workload = nullptr;
  const Cluster* cluster = nullptr;
  std::string serve_config;  ///< JSON text.
  const CalibrationProfile* profile = nullptr;
};
/// Predicts `metric` of a serving case and appends the defaults it applied to `assumptions`.
/// Throws InputError when the configuration cannot run (the case is skipped with the message).
using ServingPredictor =
    std::function<double(const ServingCase&, std::vector<std::string>& assumptions)>;

struct ValidationOptions {
  std::string engine = "native";  ///< "native" or "analytic" for training cases.
  std::string calibration;        ///< Calibration profile path ("" = default profile).
  std::string only;               ///< Substring filter on case ids ("" = all).
  ServingPredictor serving;       ///< Serving cases (empty: they are skipped).
};

struct CaseResult {
  std::string id, source_key, metric, unit;
  double measured = 0, predicted = 0;
  double error_pct = 0;        ///< (predicted - measured) / measured * 100.
  std::string layout;          ///< Parallel layout used (training cases).
  std::string gpu_generation;  ///< The catalog GPU's generation ("not in catalog", "not stated").
  std::string kind;            ///< "dense", "moe", "microbenchmark" or "serving".
  int gpus = 0;                ///< hardware.num_gpus.
  bool fitted = false;         ///< Named by the calibration profile's fitted_to lists.
  std::vector<std::string> assumptions;  ///< Defaults applied to null fields.
};

struct SkippedCase {
  std::string id, reason;
};

/// A case whose built model disagrees with its stated parameter count by more than 5%.
struct InconsistentCase {
  std::string id;
  double stated_params = 0, built_params = 0;
  double difference_pct = 0;  ///< (built - stated) / stated * 100.
  std::vector<std::string> assumptions;
};

struct ErrorSummary {
  std::string group;  ///< "all", a source key, a metric, a GPU generation, ...
  int n = 0;          ///< Cases predicted (and scored) in the group.
  int total =
      0;  ///< Cases read in the group: predicted, inconsistent or skipped (coverage n/total).
  double mape_pct = 0, median_abs_error_pct = 0, max_abs_error_pct = 0;
};

struct ValidationReport {
  std::vector<std::string> files;
  int total_cases = 0;            ///< Cases read (after --only).
  std::vector<CaseResult> cases;  ///< Predicted (fitted and unfitted).
  std::vector<SkippedCase> skipped;
  std::vector<InconsistentCase> inconsistent;
  ErrorSummary summary;         ///< Unfitted cases: the headline figure.
  ErrorSummary fitted_summary;  ///< Fitted cases (group "fitted").
  /// Groups over the unfitted cases.
  std::vector<ErrorSummary> by_source, by_metric, by_gpu_generation, by_kind, by_job_size;
  /// Per catalog GPU of the predicted cases (by id): the calibration values that are defaults for
  /// it (calibration_defaults in calibration.hpp); GPUs with none are listed with an empty list.
  std::map<std::string, std::vector<CalibrationDefault>> calibration_defaults;
};

/// Largest relative difference between the built and the stated parameter count (0.05).
inline constexpr double kParamsTolerance = 0.05;

/// Reads the cases of every file in `paths` (ids unique across files) and predicts each. Throws
/// InputError on a malformed case (see the file comment).
ValidationReport validate_cases(const std::vector<std::string>& paths,
                                const ValidationOptions& options);
ValidationReport validate_cases(const std::string& path, const ValidationOptions& options);
/// The same on case files already read and parsed (Doc::parse; the document's name stands for
/// the file path in the report and in messages): what validate_cases(paths) does after reading
/// each file, with the same result and the same first error. For callers that hold the text in
/// memory (the fuzz target), which then need no temporary file.
ValidationReport validate_cases(const std::vector<Doc>& files, const ValidationOptions& options);

/// The `fitted_to` entries ("case:<id>", "source:<key>", "file:<path>") anywhere in a calibration
/// profile document, in document order.
std::vector<std::string> fitted_entries(const nlohmann::json& profile);

/// Summary of absolute percentage errors (MAPE, median, max).
ErrorSummary summarize_errors(const std::vector<CaseResult>& cases, const std::string& group);

/// Job-size bucket of a GPU count: "1-8", "9-256", "257-2048", ">2048" ("not stated" for 0).
const char* job_size_group(long long gpus);

/// JSON (schemas/validation_result.schema.json): {"schema_version": 1, "files", "total_cases",
/// "cases":[{id, source_key, metric, unit, measured, predicted, error_pct, layout, gpu_generation,
/// kind, gpus, fitted, assumptions}], "skipped":[{id, reason}], "inconsistent":[{id, stated_params,
/// built_params, difference_pct, assumptions}], "summary":{n, total, mape_pct,
/// median_abs_error_pct, max_abs_error_pct} (unfitted), "fitted":{...}, "by_source", "by_metric",
/// "by_gpu_generation", "by_kind", "by_job_size":[{group, n, ...}]}.
nlohmann::json to_json(const ValidationReport& r);
/// The strict reader of that document: checks `j` against schemas/validation_result.schema.json
/// (embedded at build time) and fills the report. Throws InputError naming `source` (the file) and
/// the key path prefixed with `at`, what was found and what was expected.
/// to_json(validation_report_from_json(j, ...)) == j for every document to_json writes.
ValidationReport validation_report_from_json(const nlohmann::json& j, const std::string& source,
                                             const std::string& at = "");
/// Plain-text table for people; `markdown` writes the docs/validation.md form.
std::string to_table(const ValidationReport& r, bool markdown);

}  // namespace tutti
