// The strict readers of the validation results (validation.hpp validation_report_from_json,
// live.hpp replay_comparison_from_json): each document is checked against its embedded schema
// first, so a wrong or missing key is an InputError naming it, then read into its type.
#include <nlohmann/json.hpp>

#include "tutti/core/schema.hpp"
#include "tutti/validation/live.hpp"
#include "tutti/validation/validation.hpp"

namespace tutti {
namespace {
using nlohmann::json;

ErrorSummary summary_of(const json& j, std::string group) {
  ErrorSummary s;
  s.group = j.contains("group") ? j.at("group").get<std::string>() : std::move(group);
  s.n = j.at("n").get<int>();
  s.total = j.at("total").get<int>();
  s.mape_pct = j.at("mape_pct").get<double>();
  s.median_abs_error_pct = j.at("median_abs_error_pct").get<double>();
  s.max_abs_error_pct = j.at("max_abs_error_pct").get<double>();
  return s;
}

std::vector<ErrorSummary> groups_of(const json& a) {
  std::vector<ErrorSummary> v;
  for (const json& g : a) v.push_back(summary_of(g, ""));
  return v;
}

}  // namespace

ValidationReport validation_report_from_json(const json& j, const std::string& source,
                                             const std::string& at) {
  static const json schema =
      parse_embedded_schema(embedded_validation_result_schemas(), "validation_result.schema.json");
  require_schema(schema, j, "validation_result.schema.json", source, at);
  ValidationReport r;
  r.files = j.at("files").get<std::vector<std::string>>();
  r.total_cases = j.at("total_cases").get<int>();
  for (const json& c : j.at("cases")) {
    CaseResult x;
    x.id = c.at("id").get<std::string>();
    x.source_key = c.at("source_key").get<std::string>();
    x.metric = c.at("metric").get<std::string>();
    x.unit = c.at("unit").get<std::string>();
    x.measured = c.at("measured").get<double>();
    x.predicted = c.at("predicted").get<double>();
    x.error_pct = c.at("error_pct").get<double>();
    x.layout = c.at("layout").get<std::string>();
    x.gpu_generation = c.at("gpu_generation").get<std::string>();
    x.kind = c.at("kind").get<std::string>();
    x.gpus = c.at("gpus").get<int>();
    x.fitted = c.at("fitted").get<bool>();
    x.assumptions = c.at("assumptions").get<std::vector<std::string>>();
    r.cases.push_back(std::move(x));
  }
  for (const json& s : j.at("skipped"))
    r.skipped.push_back({s.at("id").get<std::string>(), s.at("reason").get<std::string>()});
  for (const json& c : j.at("inconsistent"))
    r.inconsistent.push_back({c.at("id").get<std::string>(), c.at("stated_params").get<double>(),
                              c.at("built_params").get<double>(),
                              c.at("difference_pct").get<double>(),
                              c.at("assumptions").get<std::vector<std::string>>()});
  r.summary = summary_of(j.at("summary"), "all");
  r.fitted_summary = summary_of(j.at("fitted"), "fitted");
  r.by_source = groups_of(j.at("by_source"));
  r.by_metric = groups_of(j.at("by_metric"));
  r.by_gpu_generation = groups_of(j.at("by_gpu_generation"));
  r.by_kind = groups_of(j.at("by_kind"));
  r.by_job_size = groups_of(j.at("by_job_size"));
  for (const auto& [gpu, list] : j.at("calibration_defaults").items()) {
    auto& v = r.calibration_defaults[gpu];
    for (const json& x : list)
      v.push_back({x.at("key").get<std::string>(), x.at("what").get<std::string>(),
                   x.at("value").get<double>(), x.at("basis").get<std::string>()});
  }
  return r;
}

ReplayComparison replay_comparison_from_json(const json& j, const std::string& source,
                                             const std::string& at) {
  static const json schema = parse_embedded_schema(embedded_validation_result_schemas(),
                                                   "replay_validation_result.schema.json");
  require_schema(schema, j, "replay_validation_result.schema.json", source, at);
  ReplayComparison r;
  r.schema_version = j.at("schema_version").get<int>();
  r.measurements = j.at("measurements").get<std::string>();
  r.workload = j.at("workload").get<std::string>();
  r.overrides = j.at("overrides").get<std::vector<std::string>>();
  r.cluster = j.at("cluster").get<std::string>();
  r.layout = j.at("layout").get<std::string>();
  r.device = j.at("device").get<std::string>();
  r.calibration = j.at("calibration").get<std::string>();
  r.engine = j.at("engine").get<std::string>();
  const json& it = j.at("iteration");
  r.predicted_s = it.at("predicted_s").get<double>();
  r.measured_median_s = it.at("measured_median_s").get<double>();
  r.measured_min_s = it.at("measured_min_s").get<double>();
  r.measured_max_s = it.at("measured_max_s").get<double>();
  r.measured_iterations = it.at("measured_iterations").get<long long>();
  r.error_pct = it.at("error_pct").get<double>();
  for (const json& k : j.at("by_kind"))
    r.by_kind.push_back({k.at("kind").get<std::string>(), k.at("predicted_s").get<double>(),
                         k.at("measured_s").get<double>(), k.at("error_pct").get<double>()});
  if (j.contains("tolerance_pct")) r.tolerance_pct = j.at("tolerance_pct").get<double>();
  if (j.contains("within_tolerance")) r.within_tolerance = j.at("within_tolerance").get<bool>();
  r.document = j;
  return r;
}

json to_json(const ReplayComparison& r) {
  json j = r.document.is_object() ? r.document : json::object();
  j["schema_version"] = r.schema_version;
  j["measurements"] = r.measurements;
  j["workload"] = r.workload;
  j["overrides"] = r.overrides;
  j["cluster"] = r.cluster;
  j["layout"] = r.layout;
  j["device"] = r.device;
  j["calibration"] = r.calibration;
  j["engine"] = r.engine;
  json& it = j["iteration"];
  it["predicted_s"] = r.predicted_s;
  it["measured_median_s"] = r.measured_median_s;
  it["measured_min_s"] = r.measured_min_s;
  it["measured_max_s"] = r.measured_max_s;
  it["measured_iterations"] = r.measured_iterations;
  it["error_pct"] = r.error_pct;
  json kinds = json::array();
  for (const auto& k : r.by_kind)
    kinds.push_back({{"kind", k.kind},
                     {"predicted_s", k.predicted_s},
                     {"measured_s", k.measured_s},
                     {"error_pct", k.error_pct}});
  j["by_kind"] = kinds;
  if (r.tolerance_pct) j["tolerance_pct"] = *r.tolerance_pct;
  if (r.within_tolerance) j["within_tolerance"] = *r.within_tolerance;
  return j;
}

}  // namespace tutti
