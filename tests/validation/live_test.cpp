// Live validation (validation/live.hpp): a recorded replay against the engine's prediction, and
// its document against schemas/replay_validation_result.schema.json.
#include "tutti/validation/live.hpp"

#include <doctest/doctest.h>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti;
using nlohmann::json;
using tutti::testing::src;

namespace {
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

TEST_CASE("validation: a recorded replay is predicted and compared per iteration and per kind") {
  const json j = compare_replay(tiny_replay(), "m.json", {});
  const auto errors =
      validate_schema(load_schema(src("schemas/replay_validation_result.schema.json")), j);
  CHECK_MESSAGE(errors.empty(), format_schema_errors(errors));
  CHECK(j.at("schema_version") == 1);
  CHECK(j.at("measurements") == "m.json");
  CHECK(j.at("calibration") == "default");
  CHECK_FALSE(j.contains("within_tolerance"));
  const double predicted = j.at("iteration").at("predicted_s").get<double>();
  CHECK(predicted > 0);
  CHECK(j.at("iteration").at("error_pct").get<double>() ==
        doctest::Approx((predicted - 0.1) / 0.1 * 100));
  bool gemm = false, tp = false;
  for (const auto& k : j.at("by_kind")) {
    if (k.at("kind") == "gemm") {
      gemm = true;
      CHECK(k.at("measured_s").get<double>() == doctest::Approx(0.05));
      CHECK(k.at("predicted_s").get<double>() > 0);
    }
    tp = tp || k.at("kind") == "collective.tp";
  }
  CHECK(gemm);
  CHECK(tp);
  CHECK(live_comparison_table(j).find("iteration (median)") != std::string::npos);

  // With a tolerance the document says whether the iteration is within it.
  const json t = compare_replay(tiny_replay(), "m.json", {"", "", 1e6});
  CHECK(t.at("within_tolerance") == true);
  CHECK(t.at("tolerance_pct") == 1e6);

  // Wrong collective results make the timings incomparable: an input error naming the key.
  ReplayMeasurement wrong = tiny_replay();
  wrong.wrong_elements = 3;
  try {
    compare_replay(wrong, "m.json", {});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("replay.result.check.wrong_elements") != std::string::npos);
  }
}
