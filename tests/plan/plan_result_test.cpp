// The plan result document read back through its strict reader (tutti/plan/plan_result.hpp):
// real `tutti plan` output round-trips into the typed view, and a malformed document is an
// InputError (exit 2 from `tutti report plan`) naming the key path.
#include "tutti/plan/plan_result.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "../support/result_doc.hpp"

using nlohmann::json;
using tutti::PlanConfigurationView;
using tutti::PlanResultView;
using tutti::testing::check_corruptions;
using tutti::testing::run_json;
using tutti::testing::run_tutti;
using tutti::testing::src;

namespace {

// Each typed field equals the document's own value (NaN where the document has none).
void check_configuration(const PlanConfigurationView& v, const json& j) {
  CHECK(v.index == j.at("index").get<std::int64_t>());
  CHECK(v.gpu == j.at("hardware").at("gpu"));
  CHECK(v.gpus == j.at("hardware").at("gpus").get<std::int64_t>());
  CHECK(v.fabric == j.at("hardware").at("fabric"));
  CHECK(v.oversubscription == j.at("hardware").at("oversubscription").get<double>());
  CHECK(v.acquisition == j.at("hardware").at("acquisition"));
  CHECK(v.layout.compact == j.at("layout").at("compact"));
  CHECK(v.layout.tp == j.at("layout").at("tp").get<std::int64_t>());
  CHECK(v.layout.pp == j.at("layout").at("pp").get<std::int64_t>());
  CHECK(v.engine == j.at("engine"));
  CHECK(v.time_to_train_s == j.at("time_to_train_s").get<double>());
  CHECK(v.iteration_time_s == j.at("iteration_time_s").get<double>());
  CHECK(v.total_cost_usd == j.at("total_cost_usd").get<double>());
  CHECK(v.energy_J == j.at("energy_J").get<double>());
  CHECK(v.mfu == j.at("mfu").get<double>());
  CHECK(v.breakdown.compute_s == j.at("breakdown").at("compute_s").get<double>());
  CHECK(v.breakdown.exposed_comm_s.size() == j.at("breakdown").at("exposed_comm_s").size());
  if (j.contains("bill_of_materials")) {
    const json& items = j.at("bill_of_materials").at("items");
    REQUIRE(v.bill_of_materials.size() == items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      CHECK(v.bill_of_materials[i].name == items[i].at("name"));
      CHECK(v.bill_of_materials[i].count == items[i].at("count").get<double>());
      CHECK(v.bill_of_materials[i].price_usd == items[i].at("price_usd").get<double>());
    }
    CHECK(v.price_origins == j.at("facility").at("cost").at("origins"));
  } else {
    CHECK(v.bill_of_materials.empty());
  }
}

json example_plan() {
  return run_json({"plan", "--example", "--json", "-q"});
}

const auto read_plan = [](const json& j, const std::string& source, const std::string& at) {
  return PlanResultView::from_json(j, source, at);
};

}  // namespace

TEST_CASE("plan result: tutti plan --example --json reads back into the typed view unchanged") {
  const json j = example_plan();
  CHECK(j.at("schema_version") == tutti::kPlanResultSchemaVersion);
  const PlanResultView v = PlanResultView::from_json(j, "plan.json");
  CHECK(v.schema_version == 1);
  CHECK(v.found == j.at("found").get<bool>());
  REQUIRE(v.found);
  CHECK(v.evaluated == j.at("evaluated").get<double>());
  CHECK(v.feasible == j.at("feasible").get<double>());
  CHECK(v.simulated == j.at("simulated").get<double>());
  CHECK(v.retimed == j.at("retimed").get<std::int64_t>());
  CHECK(v.workload == j.at("workload").at("name"));
  CHECK(v.violations.size() == j.at("violations").size());
  REQUIRE(v.constraints.size() == j.at("constraints").size());
  for (std::size_t i = 0; i < v.constraints.size(); ++i) {
    CHECK(v.constraints[i].first == j.at("constraints")[i].at("constraint"));
    CHECK(v.constraints[i].second == j.at("constraints")[i].at("value"));
  }
  REQUIRE(v.recommended.has_value());
  check_configuration(*v.recommended, j.at("recommended"));
  REQUIRE(v.pareto.size() == j.at("pareto").size());
  for (std::size_t i = 0; i < v.pareto.size(); ++i)
    check_configuration(v.pareto[i], j.at("pareto")[i]);
  REQUIRE(v.finalists.size() == j.at("finalists").size());
  for (std::size_t i = 0; i < v.finalists.size(); ++i)
    check_configuration(v.finalists[i], j.at("finalists")[i]);
  CHECK(v.alternatives.size() == j.at("alternatives").size());
  CHECK_FALSE(v.nearest_miss.has_value());
}

TEST_CASE("plan result: an impossible request reads back with its reason and nearest miss") {
  // The small request with a deadline nothing meets (exit 1: a valid "no").
  const std::string file = src("tests/plan/small_request.json");
  const json j = run_json({"plan", file, "--deadline", "2h", "--json"}, 1);
  const PlanResultView v = PlanResultView::from_json(j, file);
  CHECK_FALSE(v.found);
  CHECK_FALSE(v.recommended.has_value());
  CHECK(v.reason == j.at("reason"));
  CHECK(v.reason.find("deadline") != std::string::npos);
  if (j.at("nearest_miss").is_null()) {
    CHECK_FALSE(v.nearest_miss.has_value());
  } else {
    REQUIRE(v.nearest_miss.has_value());
    REQUIRE(v.nearest_miss->violations.has_value());
    CHECK(json(*v.nearest_miss->violations) == j.at("nearest_miss").at("violations"));
  }
}

TEST_CASE("plan result: a malformed plan is an InputError naming the file and the key path") {
  const json good = example_plan();
  check_corruptions(read_plan, good,
                    {{"/pareto", "x", "pareto"},
                     {"/schema_version", 2, "schema_version"},
                     {"/recommended/hardware/gpus", 0, "recommended.hardware.gpus"},
                     {"/pareto/0/layout/tp", "eight", "pareto.0.layout.tp"},
                     {"/constraints/0/value", 3, "constraints.0.value"}},
                    "bad-plan.json");
  // A document of an older shape (no schema_version) is refused, naming the key.
  json old = good;
  old.erase("schema_version");
  CHECK_THROWS_WITH_AS(PlanResultView::from_json(old, "old.json"),
                       doctest::Contains("schema_version"), tutti::InputError);
  // Not a plan at all: says what was expected.
  CHECK_THROWS_WITH_AS(PlanResultView::from_json(json::array(), "x.json"),
                       doctest::Contains("tutti plan --json"), tutti::InputError);
  // Where the document sits in its file prefixes every key path.
  json bad = good;
  bad["evaluated"] = -1;
  CHECK_THROWS_WITH_AS(PlanResultView::from_json(bad, "saved.json", "data"),
                       doctest::Contains("data.evaluated"), tutti::InputError);
}

TEST_CASE("plan result: tutti report plan refuses a plan without schema_version (exit 2)") {
  const json good = example_plan();
  json old = good;
  old.erase("schema_version");
  const std::string file = tutti::testing::temp_dir() + "/old-plan.json";
  std::ofstream(file) << old.dump(1);
  auto r = run_tutti({"report", "plan", file, "--format", "md"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(r.err.find(file) != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("schema_version") != std::string::npos, r.err);
  CHECK(r.out.empty());
}
