// Plan requests: strict parsing, and agreement with schemas/plan_request.schema.json.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"
#include "tutti/core/units.hpp"
#include "tutti/plan/planner.hpp"

using namespace tutti;
using Json = nlohmann::json;

namespace {

Json schema() {
  return load_schema(tutti::testing::src("schemas/plan_request.schema.json"));
}

// A request that uses every key the schema knows.
Json full_request() {
  return Json::parse(R"({
    "description": "every key",
    "workload": "models/llama3-70b.json",
    "tokens": "2T",
    "constraints": {"deadline": "30d", "capex_budget": "$250M", "total_cost_budget": "$300M",
                    "power_cap": "20MW",
                    "room": {"racks": 100, "rack_power": "40kW", "rack_cooling": "35kW"},
                    "gpus_min": 512, "gpus_max": 4096},
    "search": {"gpus": ["h100-sxm-80gb"], "gpu_counts": [1024, 2048], "fabrics": ["rail_optimized"],
               "oversubscription": [1, 2], "networks": ["infiniband", "roce"], "storage": ["vast-class"],
               "acquisition": ["buy", "rent"], "facility": "air-cooled",
               "layouts": {"tp": [8], "pp": [4], "cp": [1], "ep": [1], "vp": [1, 2],
                           "micro_batch": [1], "zero": [1], "shard_group": [0], "reshard": [0], "recompute": ["selective"]}},
    "objective": "time", "finalists": 2, "prune": false,
    "cost_basis": "purchase", "hardware_life": "4y", "utilization": 0.8,
    "prices": {"source": "quote", "nodes": {"dgx-h100": "$250k"}, "electricity": "$0.05/kWh"}
  })");
}

// Every property the schema declares, as dotted paths.
void schema_paths(const Json& s, const std::string& prefix, std::vector<std::string>& out) {
  if (!s.contains("properties")) return;
  for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it) {
    std::string p = prefix.empty() ? it.key() : prefix + "." + it.key();
    out.push_back(p);
    schema_paths(it.value(), p, out);
  }
}

bool has_path(const Json& j, const std::string& path) {
  const Json* cur = &j;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    auto dot = path.find('.', pos);
    std::string key = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (!cur->is_object() || !cur->contains(key)) return false;
    cur = &(*cur)[key];
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  return true;
}

}  // namespace

TEST_CASE("plan: the full request uses every schema key, validates and parses") {
  Json s = schema(), full = full_request();
  std::vector<std::string> paths;
  schema_paths(s, "", paths);
  REQUIRE(paths.size() > 25);
  for (const auto& p : paths) CHECK_MESSAGE(has_path(full, p), p);
  CHECK(format_schema_errors(validate_schema(s, full)) == "");
  PlanRequest r = parse_plan_request(full, "full.json");
  CHECK(r.deadline_s == doctest::Approx(30 * kDay));
  CHECK(r.capex_budget_usd == doctest::Approx(250e6));
  CHECK(r.total_cost_budget_usd == doctest::Approx(300e6));
  CHECK(r.power_cap_W == doctest::Approx(20e6));
  CHECK(r.cost_basis == CostBasis::Purchase);
  CHECK(r.hardware_life_years == doctest::Approx(4));
  CHECK(r.utilization == doctest::Approx(0.8));
  REQUIRE(r.prices.has_value());
  CHECK(r.prices->nodes_usd.at("dgx-h100") == 250e3);
  CHECK(r.room.racks == 100);
  CHECK(r.room.rack_cooling_W == doctest::Approx(35e3));
  CHECK(r.tokens == doctest::Approx(2e12));
  CHECK(r.gpu_counts == std::vector<int>{1024, 2048});
  CHECK(r.networks.size() == 2);
  CHECK(r.acquisition[1] == Acquisition::Rent);
  CHECK(r.layouts.vp == std::vector<int>{1, 2});
  CHECK(r.layouts.recompute == std::vector<Recompute>{Recompute::Selective});
  CHECK(r.objective == Objective::Time);
  CHECK(r.finalists == 2);
  CHECK_FALSE(r.prune);
}

TEST_CASE("plan: the built-in example validates against the schema") {
  Json ex = Json::parse(example_plan_request());
  CHECK(format_schema_errors(validate_schema(schema(), ex)) == "");
  PlanRequest r = parse_plan_request(ex, "<built-in example>");
  CHECK(r.gpus.size() == 3);
  CHECK(r.deadline_s == doctest::Approx(30 * kDay));
  CHECK(r.workload_path.find("llama3-70b.json") != std::string::npos);
}

TEST_CASE("plan: strict parsing rejects what the schema rejects") {
  Json s = schema();
  struct Case {
    const char* what;
    std::string pointer;  // JSON pointer to set
    Json value;
    const char* key_path;  // expected in the error message
  };
  std::vector<Case> cases = {
      {"unknown top-level key", "/colour", "red", "colour"},
      {"unknown constraint", "/constraints/deadlines", "30d", "deadlines"},
      {"unknown room key", "/constraints/room/doors", 2, "doors"},
      {"unknown search key", "/search/gpu", Json::array({"b200"}), "gpu"},
      {"unknown layout key", "/search/layouts/dp", Json::array({2}), "dp"},
      {"wrong type", "/constraints/gpus_min", "many", "constraints.gpus_min"},
      {"bad enum", "/search/networks", Json::array({"ethernet"}), "search.networks"},
      {"bad objective", "/objective", "speed", "objective"},
      {"out of range", "/search/layouts/zero", Json::array({4}), "search.layouts.zero"},
      {"empty list", "/search/gpus", Json::array(), "search.gpus"},
      {"finalists too high", "/finalists", 1000, "finalists"},
  };
  for (const auto& c : cases) {
    Json j = full_request();
    j[Json::json_pointer(c.pointer)] = c.value;
    CHECK_MESSAGE(!validate_schema(s, j).empty(), c.what);
    try {
      parse_plan_request(j, "req.json");
      FAIL_CHECK(c.what);
    } catch (const InputError& e) {
      std::string msg = e.what();
      CHECK_MESSAGE(msg.find("req.json") != std::string::npos, msg);
      CHECK_MESSAGE(msg.find(c.key_path) != std::string::npos, msg);
    }
  }
  Json missing = full_request();
  missing.erase("search");
  CHECK(!validate_schema(s, missing).empty());
  CHECK_THROWS_AS(parse_plan_request(missing, "req.json"), InputError);
}

TEST_CASE("plan: quantities need units") {
  for (auto [ptr, val] :
       std::vector<std::pair<std::string, Json>>{{"/constraints/deadline", "30"},
                                                 {"/constraints/deadline", "30 parsecs"},
                                                 {"/constraints/capex_budget", "250M"},
                                                 {"/constraints/power_cap", "20"},
                                                 {"/tokens", "lots"}}) {
    Json j = full_request();
    j[Json::json_pointer(ptr)] = val;
    CHECK_THROWS_AS(parse_plan_request(j, "req.json"), InputError);
  }
  Json j = full_request();
  j["constraints"]["gpus_max"] = 100;  // below gpus_min
  CHECK_THROWS_AS(parse_plan_request(j, "req.json"), InputError);
}
