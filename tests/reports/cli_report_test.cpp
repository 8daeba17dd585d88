// `tutti report` on the command line: formats, render round trip, exit codes.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/run.hpp"

using namespace tutti::testing;
using nlohmann::json;

namespace {
std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("cli: plan in every format, chosen by flag or extension") {
  std::string dir = temp_dir();
  auto md = run_tutti({"report", "plan", "tests/reports/fixtures/plan.json", "--format", "md"});
  REQUIRE(md.rc == 0);
  CHECK(md.out.rfind("# Capacity plan for llama3-70b", 0) == 0);
  CHECK(md.out.find("| Configuration | GPUs | Layout |") != std::string::npos);
  auto csv =
      run_tutti({"report", "plan", "tests/reports/fixtures/plan.json", "-o", dir + "/p.csv", "-q"});
  REQUIRE(csv.rc == 0);
  CHECK(slurp(dir + "/p.csv").rfind("point,configuration,gpus,layout,time_to_train_s", 0) == 0);
  auto js = run_tutti({"report", "plan", "tests/reports/fixtures/plan.json", "--format", "json"});
  REQUIRE(js.rc == 0);
  json j = js.json();
  CHECK(j.at("kind") == "plan");
  CHECK(j.at("inputs").at(0).at("role") == "plan");
  CHECK(j.at("inputs").at(0).at("sha256").get<std::string>().size() == 64);
  // The same inputs give the same bytes.
  CHECK(run_tutti({"report", "plan", "tests/reports/fixtures/plan.json", "--format", "json"}).out ==
        js.out);
}

TEST_CASE("cli: render re-creates a report from its JSON") {
  std::string dir = temp_dir();
  auto js = run_tutti({"report", "render", "tests/reports/fixtures/compare-two.json", "--format",
                       "json", "-o", dir + "/r.json", "-q"});
  REQUIRE(js.rc == 0);
  auto md1 =
      run_tutti({"report", "render", "tests/reports/fixtures/compare-two.json", "--format", "md"});
  auto md2 = run_tutti({"report", "render", dir + "/r.json", "--format", "md"});
  REQUIRE(md1.rc == 0);
  REQUIRE(md2.rc == 0);
  // Same tables and verdict; only the command that reproduces it differs.
  auto strip = [](std::string s) {
    auto a = s.find("Reproduce with:");
    auto b = s.find('\n', a);
    return s.erase(a, b - a);
  };
  auto cut_inputs = [](std::string s) { return s.substr(0, s.find("## Inputs")); };
  CHECK(cut_inputs(strip(md1.out)) == cut_inputs(strip(md2.out)));
  CHECK(md1.out.find("## Verdict") != std::string::npos);
  CHECK(md1.out.find("rail-1to1") != std::string::npos);
}

TEST_CASE("cli: usage and input errors exit 2") {
  CHECK(run_tutti({"report"}).rc == 2);
  CHECK(run_tutti({"report", "plan"}).rc == 2);
  CHECK(run_tutti({"report", "plan", "no-such-file.json"}).rc == 2);
  CHECK(run_tutti({"report", "plan", "tests/reports/fixtures/plan.json", "--format", "pdf"}).rc ==
        2);
  auto bad_table = run_tutti(
      {"report", "plan", "tests/reports/fixtures/plan.json", "--format", "csv", "--table", "x"});
  CHECK(bad_table.rc == 2);
  CHECK(bad_table.err.find("pareto") != std::string::npos);  // lists the tables there are
  auto not_plan = run_tutti({"report", "plan", "tests/reports/fixtures/compare-two.json"});
  CHECK(not_plan.rc == 2);
  CHECK(not_plan.err.find("tutti plan --json") != std::string::npos);
  CHECK(run_tutti({"report", "compare", "--workload", "no.json", "--cluster", "no.json"}).rc == 2);
}

// A plan document is read through its output schema (schemas/plan_result.schema.json): a key of the
// wrong type is exit 2 naming the file and the key path, never a report with n/a cells (issue 23).
TEST_CASE("cli: report plan and render refuse a malformed plan, naming the file and the key") {
  const json good = json::parse(slurp(src("tests/reports/fixtures/plan.json")));
  const std::string dir = temp_dir();
  struct Case {
    const char* pointer;
    json value;
    const char* key;
  };
  const Case cases[] = {{"/pareto", "x", "pareto"},
                        {"/recommended/hardware/gpus", "many", "recommended.hardware.gpus"},
                        {"/finalists/0/time_to_train_s", -5, "finalists.0.time_to_train_s"},
                        {"/evaluated", 1.5, "evaluated"},
                        {"/recommended/layout/tp", 0, "recommended.layout.tp"}};
  // A saved report (`report plan --format json`) wraps the plan under "data" for `report render`.
  auto saved =
      run_tutti({"report", "plan", src("tests/reports/fixtures/plan.json"), "--format", "json"});
  REQUIRE(saved.rc == 0);
  for (const auto& c : cases) {
    json bad = good;
    bad[json::json_pointer(c.pointer)] = c.value;
    const std::string file = dir + "/bad.json";
    std::ofstream(file) << bad.dump(1);
    auto r = run_tutti({"report", "plan", file, "--format", "md"});
    CHECK_MESSAGE(r.rc == 2, c.pointer, " ", r.err);
    CHECK_MESSAGE(r.err.find(file) != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find(c.key) != std::string::npos, c.key, " not named in: ", r.err);
    CHECK(r.out.empty());
    // The same document wrapped as a saved report (`report render`) is refused the same way.
    json wrapped = json::parse(saved.out);
    wrapped["data"] = bad;
    std::ofstream(dir + "/saved.json") << wrapped.dump(1);
    auto rr = run_tutti({"report", "render", dir + "/saved.json", "--format", "md"});
    CHECK_MESSAGE(rr.rc == 2, rr.err);
    CHECK_MESSAGE(rr.err.find(c.key) != std::string::npos, rr.err);
  }
}

// Each simulation inside a comparison is read through schemas/simulation_result.schema.json, each
// topology through schemas/topology_result.schema.json: a key of the wrong type or a missing one is
// exit 2 naming where it sits (issue 23).
TEST_CASE(
    "cli: report render refuses a comparison whose simulation breaks its schema, naming the key") {
  const json good = json::parse(slurp(src("tests/reports/fixtures/compare-two.json")));
  const std::string dir = temp_dir();
  struct Case {
    const char* pointer;
    json value;
    const char* key;
  };
  const Case cases[] = {
      {"/architectures/0/simulation/breakdown/compute_s", "slow",
       "architectures.0.simulation.breakdown.compute_s"},
      {"/architectures/1/simulation/facility/cost/capex_usd", -1,
       "architectures.1.simulation.facility.cost.capex_usd"},
      {"/architectures/0/simulation/schema_version", 2,
       "architectures.0.simulation.schema_version"},
      {"/architectures/0/oversubscription/points/1/simulation/iteration_time_s", 0,
       "architectures.0.oversubscription.points.1.simulation.iteration_time_s"},
      // ... and so is each topology (schemas/topology_result.schema.json).
      {"/architectures/1/topology/network_capex_usd", "x",
       "architectures.1.topology.network_capex_usd"},
      {"/architectures/0/topology/bom/0/count", -1, "architectures.0.topology.bom.0.count"},
      {"/architectures/1/topology/bom/2/network", "yes", "architectures.1.topology.bom.2.network"},
      {"/architectures/1/simulation/bottleneck_links/0/tier", 3,
       "architectures.1.simulation.bottleneck_links.0.tier"},
      {"/architectures/0/oversubscription/points/2/topology/network_capex_usd", json(),
       "architectures.0.oversubscription.points.2.topology.network_capex_usd"}};
  auto saved = run_tutti(
      {"report", "render", src("tests/reports/fixtures/compare-two.json"), "--format", "json"});
  REQUIRE_MESSAGE(saved.rc == 0, saved.err);
  for (const auto& c : cases) {
    json bad = good;
    bad[json::json_pointer(c.pointer)] = c.value;
    const std::string file = dir + "/bad-compare.json";
    std::ofstream(file) << bad.dump(1);
    auto r = run_tutti({"report", "render", file, "--format", "md"});
    CHECK_MESSAGE(r.rc == 2, c.pointer, " ", r.err);
    CHECK_MESSAGE(r.err.find(c.key) != std::string::npos, c.key, " not named in: ", r.err);
    CHECK(r.out.empty());
  }
  // A missing required key is named too.
  json bad = good;
  bad["architectures"][1]["simulation"].erase("lived");
  std::ofstream(dir + "/bad-compare.json") << bad.dump(1);
  auto r = run_tutti({"report", "render", dir + "/bad-compare.json", "--format", "md"});
  CHECK_MESSAGE(r.rc == 2, r.err);
  CHECK_MESSAGE(r.err.find("architectures.1.simulation") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("lived") != std::string::npos, r.err);
}

TEST_CASE(
    "cli: compare reports an infeasible layout on each cluster instead of drawing empty charts") {
  // Llama 3 8B with its default layout (pure DP) does not fit in an H100's memory on the SuperPOD,
  // and 1,024-way DP does not divide its global batch on the RoCE cluster: both fail, and say why.
  auto r = run_tutti({"report", "compare", "--workload", "models/llama3-8b.json", "--cluster",
                      "topologies/dgx-h100-superpod-1su.json", "--cluster",
                      "topologies/roce-400g.json", "--format", "json"});
  CHECK(r.rc == 1);  // a valid run whose answer is "nothing simulated"
  json j = r.json();
  CHECK(j.at("kind") == "compare");
  CHECK(j.at("verdict").empty());
  std::string notices = j.at("notices").dump();
  CHECK(notices.find("Simulation failed on DGX H100 SuperPOD") != std::string::npos);
  CHECK(notices.find("HBM") != std::string::npos);
  CHECK(notices.find("not divisible") != std::string::npos);
  CHECK(notices.find("No architecture could be simulated") != std::string::npos);
  for (const auto& s : j.at("sections"))
    for (const auto& b : s.at("blocks"))
      if (b.at("type") == "chart")
        CHECK(b.at("id") == "network-capex");  // known without simulating
  // The inputs are echoed with their digests, and the command reproduces the report.
  CHECK(j.at("inputs").size() == 3);
  CHECK(j.at("command").get<std::string>().find("--cluster topologies/roce-400g.json") !=
        std::string::npos);
  // Network BOM numbers equal `tutti topo --json`.
  auto topo = run_tutti({"topo", "topologies/roce-400g.json", "--json"});
  REQUIRE(topo.rc == 0);
  CHECK(j.at("data").at("architectures").at(1).at("topology") == topo.json());
}

TEST_CASE("cli: report plan renders what tutti plan --json prints, numbers unchanged") {
  std::string dir = temp_dir();
  auto p = run_tutti({"plan", "--example", "--json", "-o", dir + "/plan.json", "-q"});
  INFO(p.err);
  REQUIRE(p.rc == 0);
  std::ifstream in(dir + "/plan.json");
  json plan = json::parse(in);
  auto r = run_tutti({"report", "plan", dir + "/plan.json", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.rc == 0);
  json rep = r.json();
  CHECK(rep.at("data") == plan);
  REQUIRE(plan.at("found") == true);
  CHECK(rep.at("verdict").at(0).at("criterion") == "Recommended");
  CHECK(rep.at("verdict").at(0).at("detail").get<std::string>().find(
            plan.at("recommended").at("layout").at("compact").get<std::string>()) !=
        std::string::npos);
  // The frontier table has every Pareto configuration with its time and cost as planned.
  const json* table = nullptr;
  for (const auto& s : rep.at("sections"))
    for (const auto& b : s.at("blocks"))
      if (b.value("id", "") == "pareto" && b.at("type") == "table") table = &b;
  REQUIRE(table != nullptr);
  REQUIRE(table->at("rows").size() == plan.at("pareto").size());
  std::vector<double> times, costs;
  for (const auto& c : plan.at("pareto")) {
    times.push_back(c.at("time_to_train_s"));
    costs.push_back(c.at("total_cost_usd"));
  }
  for (const auto& row : table->at("rows")) {
    CHECK(std::find(times.begin(), times.end(), row.at("time_to_train_s").get<double>()) !=
          times.end());
    CHECK(std::find(costs.begin(), costs.end(), row.at("total_cost_usd").get<double>()) !=
          costs.end());
  }
  // The recommendation's bill of materials is shown, and where each of its prices comes from.
  CHECK(rep.dump().find("Bill of materials of the recommendation") != std::string::npos);
  const json* origins = nullptr;
  for (const auto& s : rep.at("sections"))
    for (const auto& b : s.at("blocks"))
      if (b.value("id", "") == "price-origins") origins = &b;
  REQUIRE(origins != nullptr);
  REQUIRE(origins->at("rows").size() == 1);
  const json& po = plan.at("recommended").at("facility").at("cost").at("origins");
  for (const char* k : {"servers", "network", "electricity", "owned"})
    CHECK(origins->at("rows").at(0).at(k) == po.at(k));
}
