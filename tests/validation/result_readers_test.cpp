// The strict readers of the validation results: real `tutti validate --json` output and
// compare_replay's document read back and written again are the same document; a malformed key
// is an InputError naming its path.
#include <doctest/doctest.h>

#include <string>

#include "../support/result_doc.hpp"
#include "tutti/validation/live.hpp"
#include "tutti/validation/validation.hpp"

using namespace tutti;
using nlohmann::json;
using tutti::testing::check_corruptions;
using tutti::testing::check_round_trip;
using tutti::testing::KeyMatch;
using tutti::testing::run_json;
using tutti::testing::src;

namespace {

const auto read_validation = [](const json& j, const std::string& source, const std::string& at) {
  return validation_report_from_json(j, source, at);
};

const auto read_replay = [](const json& j, const std::string& source, const std::string& at) {
  return replay_comparison_from_json(j, source, at);
};

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
  const json j = run_json({"validate", "--cases", "tests/validation/published-public.json",
                           "--json", "--only", "korthikanti"});
  const ValidationReport rep = check_round_trip(read_validation, j, "validate.json");
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
  check_round_trip(read_validation, m, "validate.json");

  check_corruptions(read_validation, j,
                    {{"/cases/0/gpus", -1, "cases.0.gpus"},
                     {"/summary/mape_pct", std::nullopt, "summary", KeyMatch::prefix},
                     {"/cases/0/kind", "sparse", "cases.0.kind"}},
                    "result.json", "runs.0");
  check_corruptions(read_validation, m,
                    {{"/inconsistent/0/stated_params", "7B", "inconsistent.0.stated_params"}},
                    "result.json", "runs.0");
}

TEST_CASE("replay validation result: compare_replay's document round-trips through the reader") {
  for (double tolerance : {0.0, 1e6}) {
    INFO("tolerance " << tolerance);
    const json j = compare_replay(tiny_replay(), "m.json", {"", "", tolerance});
    const ReplayComparison c = check_round_trip(read_replay, j, "replay.json");
    CHECK(c.predicted_s == j.at("iteration").at("predicted_s").get<double>());
    CHECK(c.measured_iterations == 3);
    CHECK(c.by_kind.size() == j.at("by_kind").size());
    CHECK(c.within_tolerance.has_value() == (tolerance > 0));
  }
  check_corruptions(read_replay, compare_replay(tiny_replay(), "m.json", {}),
                    {{"/iteration/measured_iterations", 2.5, "iteration.measured_iterations"},
                     {"/device", "tpu", "device"},
                     {"/by_kind/0/measured_s", std::nullopt, "by_kind.0", KeyMatch::prefix},
                     {"/tolerance_pct", 0, "tolerance_pct"}},
                    "result.json", "runs.0");
}
