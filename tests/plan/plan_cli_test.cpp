// `tutti plan` end to end: exit codes, outputs, determinism, pruning soundness.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "../support/run.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti::testing;

namespace {
std::string small() {
  return src("tests/plan/small_request.json");
}
}  // namespace

TEST_CASE("plan cli: a feasible request recommends a configuration (JSON keys)") {
  auto r = run_tutti({"plan", small(), "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  auto j = r.json();
  for (const char* k : {"recommended", "pareto", "evaluated", "feasible", "simulated", "finalists"})
    CHECK_MESSAGE(j.contains(k), k);
  // The whole document matches its output schema (what `tutti report plan` checks before
  // rendering).
  const auto schema = tutti::load_schema(tutti::testing::src("schemas/plan_result.schema.json"));
  CHECK_MESSAGE(tutti::validate_schema(schema, j).empty(),
                tutti::format_schema_errors(tutti::validate_schema(schema, j)));
  CHECK(j["evaluated"].get<long long>() > 100);
  CHECK(j["feasible"].get<long long>() > 0);
  CHECK(j["pareto"].size() > 0);
  const auto& rec = j["recommended"];
  CHECK(rec["engine"] == "native");
  for (const char* k : {"hardware", "layout", "breakdown", "bottleneck", "time_to_train_s",
                        "total_cost_usd", "energy_J", "bill_of_materials", "facility"})
    CHECK_MESSAGE(rec.contains(k), k);
  CHECK(rec["time_to_train_s"].get<double>() <= 30 * 86400.0);
  CHECK(rec["feasible"] == true);
  // Every Pareto point is feasible and none dominates another.
  for (const auto& a : j["pareto"]) {
    CHECK(a["feasible"] == true);
    for (const auto& b : j["pareto"]) {
      bool le = a["time_to_train_s"] <= b["time_to_train_s"] &&
                a["total_cost_usd"] <= b["total_cost_usd"] && a["energy_J"] <= b["energy_J"];
      bool lt = a["time_to_train_s"] < b["time_to_train_s"] ||
                a["total_cost_usd"] < b["total_cost_usd"] || a["energy_J"] < b["energy_J"];
      CHECK_FALSE((le && lt));
    }
  }
}

TEST_CASE("plan cli: same inputs, same output byte for byte (JSON, table and CSV)") {
  for (auto fmt : std::vector<std::vector<std::string>>{{"--json"}, {}, {"--csv"}}) {
    std::vector<std::string> args{"plan", small()};
    args.insert(args.end(), fmt.begin(), fmt.end());
    auto a = run_tutti(args), b = run_tutti(args);
    CHECK(a.rc == 0);
    CHECK(a.out == b.out);
    CHECK(!a.out.empty());
  }
  auto csv = run_tutti({"plan", small(), "--csv"});
  CHECK(csv.out.rfind("rank,recommended,engine,gpu,", 0) == 0);
  auto text = run_tutti({"plan", small()});
  CHECK(text.out.find("RECOMMENDED") != std::string::npos);
  CHECK(text.out.find("PARETO FRONTIER") != std::string::npos);
}

TEST_CASE("plan cli: energy per token (J per training token) in JSON rows, the table and CSV") {
  auto r = run_tutti({"plan", small(), "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  auto j = r.json();
  const double tokens = 100e9;  // small_request.json: "tokens": "100B"
  auto check_row = [&](const nlohmann::json& e) {
    REQUIRE(e["energy_J_per_token"].is_number());
    const double per_token = e["energy_J_per_token"].get<double>();
    // Facility energy of the run over its tokens (iterations round the tokens up by < 0.1%).
    CHECK(per_token * tokens == doctest::Approx(e["energy_J"].get<double>()).epsilon(0.002));
    // Llama 3 8B: 6 x 8e9 = 4.8e10 FLOP per token; at 0.2-1 PFLOP/s per GPU drawing 1-2 kW
    // (facility) that is 0.05-0.5 J per token: the unit is joules, not kJ or mJ.
    CHECK(per_token > 0.01);
    CHECK(per_token < 10);
  };
  check_row(j["recommended"]);
  for (const auto& e : j["pareto"]) check_row(e);
  auto text = run_tutti({"plan", small()});
  REQUIRE(text.rc == 0);
  CHECK(text.out.find(" per token; power ") !=
        std::string::npos);                              // the recommendation's energy line
  CHECK(text.out.find("J/token") != std::string::npos);  // the table's column
  auto csv = run_tutti({"plan", small(), "--csv"});
  REQUIRE(csv.rc == 0);
  CHECK(csv.out.find(",energy_J,energy_J_per_token,avg_it_power_W,") != std::string::npos);
}

TEST_CASE("plan cli: pruning never changes the answer (exhaustive search on a small space)") {
  auto pruned = run_tutti({"plan", small(), "--json", "--budget", "$12M", "--acquisition", "buy"});
  auto full = run_tutti(
      {"plan", small(), "--json", "--budget", "$12M", "--acquisition", "buy", "--no-prune"});
  REQUIRE_MESSAGE(pruned.rc == 0, pruned.err);
  REQUIRE_MESSAGE(full.rc == 0, full.err);
  auto p = pruned.json(), f = full.json();
  CHECK(p["pruned"].get<long long>() > 0);  // the budget rules some hardware out before timing
  CHECK(f["pruned"].get<long long>() == 0);
  CHECK(f["simulated"].get<long long>() > p["simulated"].get<long long>());
  CHECK(p["feasible"] == f["feasible"]);
  CHECK(p["recommended"] == f["recommended"]);
  CHECK(p["pareto"] == f["pareto"]);
  CHECK(p["finalists"] == f["finalists"]);
  // No feasible configuration found by the exhaustive search is cheaper than the best one the
  // pruned search kept (the cost-optimal point is always on the frontier).
  auto min_cost = [](const nlohmann::json& front) {
    double m = 1e300;
    for (const auto& e : front) m = std::min(m, e["total_cost_usd"].get<double>());
    return m;
  };
  CHECK(min_cost(f["pareto"]) == min_cost(p["pareto"]));
  CHECK(f["recommended"]["index"] == p["recommended"]["index"]);
}

TEST_CASE("plan cli: an impossible request exits 1 with its reason and the nearest miss") {
  auto r = run_tutti({"plan", small(), "--deadline", "2h"});
  CHECK(r.rc == 1);
  CHECK(r.err.find("no configuration meets the constraints") != std::string::npos);
  CHECK(r.err.find("deadline") != std::string::npos);
  CHECK(r.err.find("nearest miss") != std::string::npos);
  CHECK(r.out.find("NOTHING FITS") != std::string::npos);
  auto j = run_tutti({"plan", small(), "--deadline", "2h", "--json"});
  CHECK(j.rc == 1);
  auto doc = j.json();
  CHECK(doc["recommended"].is_null());
  CHECK(doc["feasible"] == 0);
  CHECK(doc["nearest_miss"].is_object());
  CHECK(doc["reason"].get<std::string>().find("fastest takes") != std::string::npos);
  const auto schema = tutti::load_schema(tutti::testing::src("schemas/plan_result.schema.json"));
  CHECK_MESSAGE(tutti::validate_schema(schema, doc).empty(),
                tutti::format_schema_errors(tutti::validate_schema(schema, doc)));
}

TEST_CASE("plan cli: bad requests exit 2 naming the key") {
  auto unknown = run_tutti({"plan", small(), "--set", "search.colour=red"});
  CHECK(unknown.rc == 2);
  CHECK(unknown.err.find("colour") != std::string::npos);
  auto unit = run_tutti({"plan", small(), "--deadline", "30"});
  CHECK(unit.rc == 2);
  CHECK(unit.err.find("constraints.deadline") != std::string::npos);
  auto gpu = run_tutti({"plan", small(), "--gpu-types", "no-such-gpu"});
  CHECK(gpu.rc == 2);
  CHECK(gpu.err.find("no-such-gpu") != std::string::npos);
  auto none = run_tutti({"plan"});
  CHECK(none.rc == 2);
  auto missing = run_tutti({"plan", "/no/such/request.json"});
  CHECK(missing.rc == 2);
}

TEST_CASE("plan cli: the built-in example request prints and runs") {
  auto show = run_tutti({"plan", "--show-request"});
  CHECK(show.rc == 0);
  CHECK(show.out.find("llama3-70b") != std::string::npos);
  auto r = run_tutti({"plan", "--example", "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  auto j = r.json();
  CHECK(j["recommended"].is_object());
  CHECK(j["evaluated"].get<long long>() > 5000);
  // On the default cost basis (the owned cost of the run) a faster cluster costs little more per
  // run, so the frontier is short: at least two points (fastest and cheapest).
  CHECK(j["pareto"].size() >= 2);
  CHECK(j["request"]["cost_basis"] == "run");
  CHECK(j["recommended"]["total_cost_usd"].get<double>() ==
        doctest::Approx(j["recommended"]["owned_run_usd"].get<double>()));
}

// Issue 24: one consistent plan. The recommendation, the frontier and the runners-up are timed by
// the same engine and the recommendation is picked from the frontier's set, so it lies on it; the
// runners-up name other GPU types; the constraints that shaped the answer travel with it.
TEST_CASE(
    "plan cli: plan --example recommends a point of its own frontier, shows other GPU types and "
    "its constraints") {
  auto r = run_tutti({"plan", "--example", "--json", "-q"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  auto j = r.json();
  REQUIRE(j["found"] == true);
  const auto& rec = j["recommended"];
  bool on_frontier = false;
  for (const auto& p : j["pareto"]) {
    on_frontier = on_frontier || p["index"] == rec["index"];
    CHECK(p["engine"] == rec["engine"]);  // one engine for every row
    // Nothing on the frontier is cheaper than the (lowest-cost) recommendation.
    CHECK(p["total_cost_usd"].get<double>() >= rec["total_cost_usd"].get<double>());
  }
  CHECK(on_frontier);
  CHECK(rec["engine"] == "native");
  // Runners-up on other hardware: at least one GPU type other than the recommendation's, each
  // feasible, each the best of its GPU type or fabric (so no other layout of the same hardware
  // twice).
  std::set<std::string> gpus;
  for (const auto& a : j["alternatives"]) {
    CHECK(a["feasible"] == true);
    CHECK(a["engine"] == "native");
    CHECK(a["index"] != rec["index"]);
    gpus.insert(a["hardware"]["gpu"].get<std::string>());
  }
  gpus.erase(rec["hardware"]["gpu"].get<std::string>());
  CHECK(gpus.size() >= 2);  // the example searches H100, H200 and B200
  // The constraints printed with it, the 1,024-GPU minimum among them.
  std::string cons = j["constraints"].dump();
  CHECK(cons.find("1,024 to 8,192") != std::string::npos);
  CHECK(cons.find("30.0 d") != std::string::npos);
  CHECK(cons.find("$250.0M") != std::string::npos);
  // The text form (on the small request: one run of the example is enough for a test).
  auto text = run_tutti({"plan", small(), "-q"});
  REQUIRE(text.rc == 0);
  CHECK(text.out.find("RUNNERS-UP ON OTHER HARDWARE") != std::string::npos);
  CHECK(text.out.find("CONSTRAINTS THAT SHAPED THE ANSWER") != std::string::npos);
  const auto star = text.out.find("*  ");
  CHECK(star != std::string::npos);  // the recommendation is marked in the frontier table
}
