// Opens every kind of report in a real headless Chromium (tests/reports/browser_check.mjs with
// playwright-core driving Debian's /usr/bin/chromium): no console error, no request leaves the
// file, every chart drew something (screenshots decoded and counted), tooltips open on hover.
// Skipped (ctest "skipped") only when Chromium is absent; CI installs it (scripts/setup.sh).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/run.hpp"

using namespace tutti::testing;
using nlohmann::json;

namespace {

std::string chromium_path() {
  const char* env = std::getenv("TUTTI_CHROMIUM");
  return env && *env ? env : "/usr/bin/chromium";
}

bool skip_without_chromium() {
  if (access(chromium_path().c_str(), X_OK) == 0) return false;
  std::printf(
      "tutti-skip: %s not found; the browser test needs Debian's chromium (scripts/setup.sh)\n",
      chromium_path().c_str());
  MESSAGE("tutti-skip: chromium not found");
  return true;
}

/// Runs the browser check on `files` and returns its per-file results.
json browse(const std::string& shots, const std::vector<std::string>& files) {
  REQUIRE_MESSAGE(
      std::filesystem::exists(src("reports/assets/node_modules/playwright-core")),
      "reports/assets/node_modules is missing: run scripts/setup.sh (npm ci in reports/assets)");
  std::string cmd = "node tests/reports/browser_check.mjs '" + shots + "'";
  for (const auto& f : files) cmd += " '" + f + "'";
  RunResult r = run_shell(cmd);
  INFO("stderr: " << r.err.substr(0, 2000));
  REQUIRE(r.rc == 0);
  json j = r.json();
  REQUIRE(j.at("results").size() == files.size());
  return j.at("results");
}

void check_clean(const json& r) {
  INFO(r.at("file").get<std::string>());
  CHECK_MESSAGE(r.at("console_errors").empty(), r.at("console_errors").dump());
  CHECK_MESSAGE(r.at("page_errors").empty(), r.at("page_errors").dump());
  CHECK_MESSAGE(r.at("external_requests").empty(), r.at("external_requests").dump());
  CHECK(r.at("data_ok") == true);
  CHECK(r.at("charts_rendered") == r.at("canvases"));
  for (const auto& c : r.at("charts")) {
    INFO(c.dump());
    CHECK(c.at("width").get<int>() > 300);
    CHECK(c.at("height").get<int>() > 200);
    // Not blank: axes and labels alone give a few percent of grey; the data adds colour.
    CHECK(c.at("nonwhite_fraction").get<double>() > 0.02);
    CHECK(c.at("coloured_fraction").get<double>() > 0.003);
    CHECK(c.at("colours").get<int>() >= 4);
    CHECK(c.at("tooltip") == true);
  }
}

bool contains_text(const json& list, const std::string& text) {
  for (const auto& s : list)
    if (s.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("browser: comparison and plan reports render in headless Chromium") {
  if (skip_without_chromium()) return;
  std::string dir = temp_dir();
  std::string two = dir + "/compare-two.html", failed = dir + "/compare-one-failed.html";
  std::string plan = dir + "/plan.html", none = dir + "/plan-nothing-fits.html";
  REQUIRE(
      run_tutti({"report", "render", "tests/reports/fixtures/compare-two.json", "-o", two, "-q"})
          .rc == 0);
  REQUIRE(run_tutti({"report", "render", "tests/reports/fixtures/compare-one-failed.json", "-o",
                     failed, "-q"})
              .rc == 0);
  REQUIRE(run_tutti({"report", "plan", "tests/reports/fixtures/plan.json", "-o", plan, "-q"}).rc ==
          0);
  REQUIRE(run_tutti(
              {"report", "plan", "tests/reports/fixtures/plan-nothing-fits.json", "-o", none, "-q"})
              .rc == 0);
  // A real comparison: the native engine on two 64-GPU fabrics.
  std::string real = dir + "/compare-real.html";
  auto rc = run_tutti({"report", "compare", "--workload", "models/llama3-8b.json", "--cluster",
                       "tests/reports/fixtures/clusters/h100-64-rail-ib.json", "--cluster",
                       "tests/reports/fixtures/clusters/h100-64-fattree-roce-2to1.json",
                       "--parallel", "tp=8", "-o", real, "-q"});
  INFO(rc.err);
  REQUIRE(rc.rc == 0);
  // A real plan: `tutti plan --example`, rendered.
  std::string real_plan = dir + "/plan-real.html";
  REQUIRE(run_tutti({"plan", "--example", "--json", "-o", dir + "/plan-real.json", "-q"}).rc == 0);
  REQUIRE(run_tutti({"report", "plan", dir + "/plan-real.json", "-o", real_plan, "-q"}).rc == 0);
  json res = browse(dir + "/shots", {two, failed, plan, none, real, real_plan});
  for (const auto& r : res) check_clean(r);
  // Tables fit or scroll, no cell is squeezed to a few characters per line, no series hides
  // another (issue 24).
  for (const auto& r : res) {
    INFO(r.at("file").get<std::string>());
    CHECK_MESSAGE(r.at("table_problems").empty(), r.at("table_problems").dump());
    CHECK_MESSAGE(r.at("hidden_series").empty(), r.at("hidden_series").dump());
  }

  // Two architectures: every chart of the comparison, a verdict with margins.
  CHECK(res[0].at("canvases") == 7);
  CHECK(res[0].at("verdict").size() == 4);
  CHECK(contains_text(res[0].at("verdict"), "faster than roce-2to1"));
  // One failed: it says so, and still draws the one that worked.
  CHECK(contains_text(res[1].at("callouts"), "Simulation failed on torus-3d"));
  CHECK(contains_text(res[1].at("callouts"), "Only one architecture"));
  CHECK(res[1].at("canvases").get<int>() >= 5);
  // Plan: the Pareto frontier chart, the recommendation card.
  CHECK(res[2].at("canvases") == 1);
  CHECK(contains_text(res[2].at("verdict"), "RECOMMENDED"));
  // Nothing fits: no empty chart, the reason instead.
  CHECK(res[3].at("canvases") == 0);
  CHECK(contains_text(res[3].at("callouts"), "Nothing fits"));
  CHECK(std::filesystem::exists(dir + "/shots/plan-chart-pareto.png"));
  // The real comparison: breakdown, exposed communication, hot links, network capex, sweep.
  CHECK(res[4].at("canvases").get<int>() >= 5);
  CHECK(contains_text(res[4].at("verdict"), "faster than 64 H100"));
  CHECK(std::filesystem::exists(dir + "/shots/compare-real-chart-breakdown.png"));
  CHECK(res[5].at("canvases") == 1);
  CHECK(contains_text(res[5].at("verdict"), "RECOMMENDED"));
}

TEST_CASE("browser: the tutti cluster report renders in headless Chromium") {
  if (skip_without_chromium()) return;
  std::string dir = temp_dir();
  std::string one = dir + "/cluster-simulate.html", cmp = dir + "/cluster-compare.html";
  auto a =
      run_tutti({"cluster", "simulate", "--cluster", "topologies/h100-64gpu-fattree.json", "--jobs",
                 "tests/data/cluster/lublin-256-excerpt.swf", "--processors-per-gpu", "4",
                 "--scheduler", "easy-backfill", "--placement", "topology", "--html", one, "-q"});
  INFO(a.err);
  REQUIRE(a.rc == 0);
  auto b = run_tutti({"cluster", "compare", "--cluster", "topologies/h100-64gpu-fattree.json",
                      "--synthetic", "jobs=200,span=2d,max_gpus=32", "--html", cmp, "-q"});
  INFO(b.err);
  REQUIRE(b.rc == 0);
  json res = browse(dir + "/shots", {one, cmp});
  for (const auto& r : res) check_clean(r);
  // One run: its timeline, the wait CDF, GPU-hours by use.
  CHECK(res[0].at("canvases") == 3);
  // Four runs (fifo/easy x packed/topology): four timelines, the CDF, GPU-hours, waits by policy.
  CHECK(res[1].at("canvases") == 7);
  CHECK(contains_text(res[1].at("verdict"), "lowest mean wait"));
}
