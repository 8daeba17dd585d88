// `tutti report compare` with the real engine: the report's numbers are those of
// `tutti simulate --json` for the same inputs, the oversubscription sweep is `--set`, and one
// architecture says there is nothing to compare.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/run.hpp"
#include "tutti/reports/format.hpp"

using namespace tutti::testing;
using nlohmann::json;

namespace {
const char* kWorkload = "models/llama3-8b.json";
const char* kRail = "tests/reports/fixtures/clusters/h100-64-rail-ib.json";
const char* kRoce = "tests/reports/fixtures/clusters/h100-64-fattree-roce-2to1.json";

json simulate(const std::string& cluster, const std::vector<std::string>& sets = {}) {
  std::vector<std::string> args;
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  args.insert(args.end(), {"simulate", "--workload", kWorkload, "--cluster", cluster, "--parallel",
                           "tp=8", "--json"});
  auto r = run_tutti(args);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  json j = r.json();
  j.erase("wall_s");  // the engine's own run time, which reports leave out
  return j;
}

const json& find_block(const json& report, const std::string& id) {
  for (const auto& s : report.at("sections"))
    for (const auto& b : s.at("blocks"))
      if (b.value("id", "") == id) return b;
  FAIL("no block " << id);
  static json none;
  return none;
}
}  // namespace

TEST_CASE("compare: the report's numbers are those of tutti simulate --json") {
  auto r =
      run_tutti({"report", "compare", "--workload", kWorkload, "--cluster", kRail, "--cluster",
                 kRoce, "--parallel", "tp=8", "--oversubscription", "1", "4", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.rc == 0);
  json rep = r.json();
  const json& archs = rep.at("data").at("architectures");
  REQUIRE(archs.size() == 2);
  json sims[2] = {simulate(kRail), simulate(kRoce)};
  for (int i = 0; i < 2; ++i) {
    INFO("architecture " << i);
    REQUIRE(archs[i].at("ok") == true);
    // The whole simulation document, key for key (json_diff names the first difference).
    CHECK_MESSAGE(json_diff(archs[i].at("simulation"), sims[i], 0.0, 0.0, false) == "",
                  "report compare's simulation differs from tutti simulate --json: keep both in "
                  "make_simulation_document() (sim/facility simulation_document.hpp)");
  }
  // The summary table shows the same values (raw, in SI).
  const json& summary = find_block(rep, "summary");
  for (int i = 0; i < 2; ++i) {
    const json& row = summary.at("rows").at(i);
    CHECK(row.at("iteration_time_s") == sims[i].at("iteration_time_s"));
    CHECK(row.at("time_to_train_s") == sims[i].at("time_to_train_s"));
    CHECK(row.at("mfu") == sims[i].at("mfu"));
    CHECK(row.at("tokens_per_s_per_gpu") == sims[i].at("tokens_per_s_per_gpu"));
    // Cost from the facility model, as `tutti simulate --json` nests it.
    if (sims[i].contains("facility")) {
      CHECK(row.at("cost_per_run_usd") == sims[i].at("facility").at("cost").at("cost_per_run_usd"));
      CHECK(row.at("energy_per_run_J") == sims[i].at("facility").at("energy_per_run_J"));
    }
    double exposed = 0;
    for (const auto& [k, v] : sims[i].at("breakdown").at("exposed_comm_s").items())
      exposed += v.get<double>();
    CHECK(row.at("exposed_comm_s").get<double>() == doctest::Approx(exposed).epsilon(1e-12));
  }
  // The run-cost table shows the energy per training token the simulation reports.
  const json& cost = find_block(rep, "cost");
  for (int i = 0; i < 2; ++i) {
    const json& row = cost.at("rows").at(i);
    REQUIRE(sims[i].contains("facility"));
    const json& per_token = sims[i].at("facility").at("energy").at("physical_J_per_token");
    REQUIRE(per_token.is_number());
    CHECK(per_token.get<double>() > 0);
    CHECK(row.at("energy_J_per_token") == per_token);
  }
  // The verdict's margin is computed from those numbers.
  double a = sims[0].at("time_to_train_s"), b = sims[1].at("time_to_train_s");
  const json& v = rep.at("verdict").at(0);
  double best = std::min(a, b), other = std::max(a, b);
  CHECK(v.at("margin_pct").get<double>() == doctest::Approx((other - best) / other * 100));
  // The sweep's 4:1 point is `tutti simulate --set fabric.oversubscription=4`.
  json four = simulate(kRoce, {"fabric.oversubscription=4"});
  const json& pts = archs[1].at("oversubscription").at("points");
  REQUIRE(pts.size() == 2);
  CHECK(pts[1].at("label") == "4:1");
  CHECK(json_diff(pts[1].at("simulation"), four, 0.0, 0.0, false) == "");
  // The same inputs give the same report, byte for byte.
  auto again =
      run_tutti({"report", "compare", "--workload", kWorkload, "--cluster", kRail, "--cluster",
                 kRoce, "--parallel", "tp=8", "--oversubscription", "1", "4", "--format", "json"});
  CHECK(again.out == r.out);
}

TEST_CASE("compare: the HTML and Markdown show the simulated numbers") {
  std::string dir = temp_dir();
  auto h = run_tutti({"report", "compare", "--workload", kWorkload, "--cluster", kRail, "--cluster",
                      kRoce, "--parallel", "tp=8", "--oversubscription", "0", "-o", dir + "/r.html",
                      "-q"});
  REQUIRE(h.rc == 0);
  auto m = run_tutti({"report", "compare", "--workload", kWorkload, "--cluster", kRail, "--cluster",
                      kRoce, "--parallel", "tp=8", "--oversubscription", "0", "--format", "md"});
  REQUIRE(m.rc == 0);
  std::ifstream in(dir + "/r.html");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string html = ss.str();
  for (const char* c : {kRail, kRoce}) {
    json s = simulate(c);
    for (const char* key : {"iteration_time_s", "time_to_train_s"}) {
      double v = s.at(key);
      CHECK(html.find("data-value=\"" + tutti::reports::format_exact(v) + "\"") !=
            std::string::npos);
      CHECK(m.out.find(tutti::reports::format_value(v, tutti::reports::Unit::Seconds)) !=
            std::string::npos);
    }
  }
  CHECK(m.out.find("Not swept:") != std::string::npos);  // --oversubscription 0
}

TEST_CASE("compare: one architecture says there is nothing to compare") {
  auto r = run_tutti({"report", "compare", "--workload", kWorkload, "--cluster", kRail,
                      "--parallel", "tp=8", "--oversubscription", "0", "--format", "json"});
  REQUIRE(r.rc == 0);
  json j = r.json();
  CHECK(j.at("notices").dump().find("Only one architecture") != std::string::npos);
  CHECK(j.at("verdict").at(0).at("detail").get<std::string>().find("nothing to compare") !=
        std::string::npos);
}

TEST_CASE("compare: an infeasible layout on one cluster is reported next to the one that ran") {
  // tp=8 x dp=8 is 64 GPUs: it runs on the 64-GPU cluster, not on the 256-GPU SuperPOD.
  auto r = run_tutti({"report", "compare", "--workload", kWorkload, "--cluster", kRail, "--cluster",
                      "topologies/dgx-h100-superpod-1su.json", "--parallel", "tp=8,dp=8",
                      "--oversubscription", "0", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.rc == 0);
  json j = r.json();
  const json& archs = j.at("data").at("architectures");
  CHECK(archs[0].at("ok") == true);
  CHECK(archs[1].at("ok") == false);
  CHECK(archs[1].at("error").get<std::string>().find("256") != std::string::npos);
  CHECK(j.at("notices").dump().find("Simulation failed on DGX H100 SuperPOD") != std::string::npos);
}

TEST_CASE("compare: the report says where each price comes from, and --prices quotes read user") {
  auto origins_of = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"report",     "compare", "--workload",         kWorkload,
                                     "--cluster",  kRail,     "--cluster",          kRoce,
                                     "--parallel", "tp=8",    "--oversubscription", "0",
                                     "--format",   "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_tutti(args);
    INFO(r.err);
    REQUIRE(r.rc == 0);
    return find_block(r.json(), "price-origins").at("rows");
  };
  json catalog = origins_of({});
  json quoted = origins_of({"--prices", "topologies/prices/example-quote.json"});
  REQUIRE(catalog.size() == 2);
  REQUIRE(quoted.size() == 2);
  for (int i = 0; i < 2; ++i) {
    INFO("architecture " << i);
    // The example quote prices the DGX H100 server, the electricity and the rental rate.
    CHECK(catalog[i].at("servers") != "user");
    CHECK(quoted[i].at("servers") == "user");
    CHECK(catalog[i].at("electricity") != "user");
    CHECK(quoted[i].at("electricity") == "user");
    CHECK(quoted[i].at("cloud") == "user");
  }
}
