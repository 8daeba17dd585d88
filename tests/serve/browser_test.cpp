// The serving HTML report opens in headless Chromium (tests/reports/browser_check.mjs): no console
// error, no external request, every chart drew. Skipped only when Chromium is absent.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "../support/run.hpp"

using namespace tutti::testing;

TEST_CASE("serve browser: the serving report renders in headless Chromium") {
  const char* env = std::getenv("TUTTI_CHROMIUM");
  const std::string chromium = env && *env ? env : "/usr/bin/chromium";
  if (access(chromium.c_str(), X_OK) != 0) {
    std::printf("tutti-skip: %s not found; the browser test needs Debian's chromium\n",
                chromium.c_str());
    MESSAGE("tutti-skip: chromium not found");
    return;
  }
  REQUIRE(std::filesystem::exists(src("reports/assets/node_modules/playwright-core")));
  const std::string dir = temp_dir();
  const std::string html = dir + "/serve.html";
  auto r = run_tutti({"--set", "traffic.requests=80", "--set", "serving.gpu_memory_utilization=0.3",
                      "serve", "simulate", "-w", "models/llama3-70b.json", "-c",
                      "topologies/dgx-h100-single.json", "--config",
                      "sim/serve/examples/chat-llama3-70b.json", "--html", html});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  RunResult b =
      run_shell("node tests/reports/browser_check.mjs '" + dir + "/shots' '" + html + "'");
  INFO("stderr: " << b.err.substr(0, 2000));
  REQUIRE(b.rc == 0);
  nlohmann::json res = b.json().at("results").at(0);
  CHECK_MESSAGE(res.at("console_errors").empty(), res.at("console_errors").dump());
  CHECK_MESSAGE(res.at("page_errors").empty(), res.at("page_errors").dump());
  CHECK_MESSAGE(res.at("external_requests").empty(), res.at("external_requests").dump());
  CHECK(res.at("data_ok") == true);
  CHECK(res.at("canvases").get<int>() == 2);
  CHECK(res.at("charts_rendered") == res.at("canvases"));
  for (const auto& c : res.at("charts")) {
    INFO(c.dump());
    CHECK(c.at("width").get<int>() > 300);
    CHECK(c.at("height").get<int>() > 200);
    CHECK(c.at("nonwhite_fraction").get<double>() > 0.02);
    CHECK(c.at("coloured_fraction").get<double>() > 0.003);
    CHECK(c.at("tooltip") == true);
  }
}
