#pragma once
// Validation against published measurements (`tutti validate --cases FILE`).
//
// A case (tests/validation/README.md) states a model, a training recipe, a parallel layout and
// the hardware of a real run, and one measured number (`measured.metric`). tutti predicts that
// number from what the case states and what the catalog knows — one catalog, no per-case
// fitting — and reports the error. Unstated fields get documented defaults (each recorded in the
// case's `assumptions`); a case that cannot be modelled (a GPU the catalog lacks, an unstated
// batch or layout) is listed in `skipped` with the reason, never dropped.
//
// Metrics: tflops_per_gpu (Megatron's FLOP count with the stated recompute), tokens_per_sec_per_gpu,
// step_time, mfu (model FLOPs over dense peak, %), images_per_sec and sequences_per_sec (all GPUs),
// busbw (nccl-tests bus bandwidth, GB/s), gemm_tflops (one GEMM), hbm_bandwidth (TB/s, triad).
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace tutti {

struct ValidationOptions {
  std::string engine = "native";  ///< "native" or "analytic" for training cases.
  std::string calibration;        ///< Calibration profile path ("" = default profile).
  std::string only;               ///< Substring filter on case ids ("" = all).
};

struct CaseResult {
  std::string id, source_key, metric, unit;
  double measured = 0, predicted = 0;
  double error_pct = 0;  ///< (predicted - measured) / measured * 100.
  std::string layout;    ///< Parallel layout used (training cases).
  std::vector<std::string> assumptions;  ///< Defaults applied to unstated fields.
};

struct SkippedCase {
  std::string id, reason;
};

struct ErrorSummary {
  std::string group;  ///< "all", a source key or a metric.
  int n = 0;
  double mape_pct = 0, median_abs_error_pct = 0, max_abs_error_pct = 0;
};

struct ValidationReport {
  std::string file;
  std::vector<CaseResult> cases;
  std::vector<SkippedCase> skipped;
  ErrorSummary summary;
  std::vector<ErrorSummary> by_source, by_metric;
};

/// Reads the cases in `path` and predicts each. Throws InputError when the file is not a JSON
/// array of case objects with id, measured.metric, measured.value and hardware.gpu_id.
ValidationReport validate_cases(const std::string& path, const ValidationOptions& options);

/// Summary of absolute percentage errors (MAPE, median, max).
ErrorSummary summarize_errors(const std::vector<CaseResult>& cases, const std::string& group);

/// JSON: {"cases":[{id, source_key, metric, measured, predicted, error_pct, layout, assumptions}],
/// "skipped":[{id, reason}], "summary":{n, mape_pct, median_abs_error_pct, max_abs_error_pct},
/// "by_source":[...], "by_metric":[...]}.
nlohmann::json to_json(const ValidationReport& r);
/// Plain-text table for people; `markdown` writes the docs/validation.md form.
std::string to_table(const ValidationReport& r, bool markdown);

}  // namespace tutti
