// The strict readers of the validation results: real `tutti validate --json` output and
// compare_replay's document read back and written again are the same document; a malformed key
// is an InputError naming its path.
#include <doctest/doctest.h>

#include <string>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/validation/live.hpp"
#include "tutti/validation/validation.hpp"

using namespace tutti;
using nlohmann::json;
using tutti::testing::run_tutti;
using tutti::testing::src;

namespace {

template <class Read>
std::string error_of(Read read, const json& j) {
  try {
    read(j, "result.json", "runs.0");
  } catch (const InputError& e) {
    CHECK(e.file() == "result.json");
    return e.key_path();
  }
  return "(no error)";
}

std::string validation_error(const json& j) {
  return error_of([](const json& d, const std::string& s,
                     const std::string& at) { validation_report_from_json(d, s, at); },
                  j);
}

std::string replay_error(const json& j) {
  return error_of([](const json& d, const std::string& s,
                     const std::string& at) { replay_comparison_from_json(d, s, at); },
                  j);
}

ReplayMeasurement tiny_replay() {
  ReplayMeasurement m;
  m.workload = src("models/tiny-gpt.json");
  m.overrides = {"model.layers=2"};
  m.cluster = src("topologies/cpu-local.json");
  m.layout = "tp=2";
  m.device = "cpu";
  m.iterations = 3;
  m.iteration_time_s = 0.1;
  m.iteration_min_s = 0.09;
  m.iteration_max_s = 0.2;
  m.by_kind_s = {{"gemm", 0.05}, {"collective.tp", 0.01}};
  return m;
}

}  // namespace

TEST_CASE("validation result: real output round-trips through the strict reader") {
  auto r = run_tutti({"validate", "--cases", "tests/validation/published-public.json", "--json",
                      "--only", "korthikanti"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const json j = r.json();
  const ValidationReport rep = validation_report_from_json(j, "validate.json");
  CHECK(to_json(rep).dump() == j.dump());
  REQUIRE(!rep.cases.empty());
  CHECK(rep.cases.size() == j.at("cases").size());
  CHECK(rep.cases[0].predicted == j.at("cases").at(0).at("predicted").get<double>());
  CHECK(rep.summary.mape_pct == j.at("summary").at("mape_pct").get<double>());
  CHECK(rep.summary.group == "all");
  CHECK(rep.fitted_summary.group == "fitted");

  // Skipped and inconsistent cases (none in that run) round-trip too.
  ValidationReport more = rep;
  more.skipped.push_back({"a-case", "a fact tutti cannot express"});
  more.inconsistent.push_back({"b-case", 7e9, 8e9, 14.3, {"model.kv_heads: = heads"}});
  const json m = to_json(more);
  CHECK(to_json(validation_report_from_json(m, "validate.json")).dump() == m.dump());

  json bad = j;
  bad["cases"][0]["gpus"] = -1;
  CHECK(validation_error(bad) == "runs.0.cases.0.gpus");
  bad = j;
  bad["summary"].erase("mape_pct");
  CHECK(validation_error(bad).find("runs.0.summary") == 0);
  bad = j;
  bad["cases"][0]["kind"] = "sparse";
  CHECK(validation_error(bad) == "runs.0.cases.0.kind");
  bad = m;
  bad["inconsistent"][0]["stated_params"] = "7B";
  CHECK(validation_error(bad) == "runs.0.inconsistent.0.stated_params");
}

TEST_CASE("replay validation result: compare_replay's document round-trips through the reader") {
  for (double tolerance : {0.0, 1e6}) {
    INFO("tolerance " << tolerance);
    const json j = compare_replay(tiny_replay(), "m.json", {"", "", tolerance});
    const ReplayComparison c = replay_comparison_from_json(j, "replay.json");
    CHECK(to_json(c).dump() == j.dump());
    CHECK(c.predicted_s == j.at("iteration").at("predicted_s").get<double>());
    CHECK(c.measured_iterations == 3);
    CHECK(c.by_kind.size() == j.at("by_kind").size());
    CHECK(c.within_tolerance.has_value() == (tolerance > 0));
  }
  const json j = compare_replay(tiny_replay(), "m.json", {});
  json bad = j;
  bad["iteration"]["measured_iterations"] = 2.5;
  CHECK(replay_error(bad) == "runs.0.iteration.measured_iterations");
  bad = j;
  bad["device"] = "tpu";
  CHECK(replay_error(bad) == "runs.0.device");
  bad = j;
  bad["by_kind"][0].erase("measured_s");
  CHECK(replay_error(bad).find("runs.0.by_kind.0") == 0);
  bad = j;
  bad["tolerance_pct"] = 0;
  CHECK(replay_error(bad) == "runs.0.tolerance_pct");
}
