// `tutti validate --cases` on the published measurements kept in tests/validation/.
// The MAPE bound below is the documented regression bound (docs/validation.md states the current
// figure and the goal); the test fails when accuracy gets worse than that.
#include <doctest/doctest.h>

#include <cmath>

#include "../support/run.hpp"

using namespace tutti::testing;

namespace {
// Regression bounds at the measured values rounded up to the next whole percent (issue 16): since
// the default calibration was refitted to non-reserved microbenchmarks only (`tutti calibrate
// defaults`), MAPE 13.1% over the public cases and 4.6% on the Korthikanti et al. 2022 subset.
// The goals stay as documented in docs/validation.md ("Goals"): 10%, and below Calculon's 3.65%.
constexpr double kMapeBoundPct = 14.0;
constexpr double kKorthikantiBoundPct = 5.0;
}  // namespace

TEST_CASE("validation: published cases are predicted, errors reported, MAPE within bound") {
  auto r = run_tutti({"validate", "--cases", "tests/validation/published-public.json", "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  auto j = r.json();
  auto& cases = j["cases"];
  auto& skipped = j["skipped"];
  // Nothing is dropped silently: every case is either predicted or skipped with a reason.
  CHECK(cases.size() + skipped.size() == 91);
  CHECK(cases.size() >= 80);
  for (auto& s : skipped) CHECK_FALSE(s["reason"].get<std::string>().empty());
  double sum = 0;
  for (auto& c : cases) {
    double m = c["measured"], p = c["predicted"], e = c["error_pct"];
    CHECK(std::isfinite(p));
    CHECK(p > 0);
    CHECK(e == doctest::Approx((p - m) / m * 100).epsilon(1e-9));
    sum += std::fabs(e);
  }
  double mape = sum / cases.size();
  CHECK(j["summary"]["mape_pct"].get<double>() == doctest::Approx(mape).epsilon(1e-9));
  CHECK(j["summary"]["n"] == cases.size());
  CHECK_MESSAGE(mape <= kMapeBoundPct, "MAPE " << mape << "% above the documented bound");
  // The Korthikanti et al. 2022 subset (unfused attention, selective/full recompute, TP+SP+PP on
  // A100): the target is 3.65%.
  bool seen = false;
  for (auto& g : j["by_source"])
    if (g["group"] == "korthikanti2022") {
      seen = true;
      CHECK(g["mape_pct"].get<double>() < kKorthikantiBoundPct);
    }
  CHECK(seen);
}

TEST_CASE("validation: the attention kernel follows the date the source states") {
  auto assumptions = [](const std::string& only) {
    auto r = run_tutti({"validate", "--cases", "tests/validation/published-public.json", "--json",
                        "--only", only});
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    auto j = r.json();
    REQUIRE(j["cases"].size() == 1);
    std::string all;
    for (auto& a : j["cases"][0]["assumptions"]) all += a.get<std::string>() + "\n";
    return all;
  };
  // arXiv 2205.05198 predates FlashAttention (2205.14135): unfused attention.
  CHECK(assumptions("korthikanti22-22b-8gpu-sp-selective").find("unfused attention") != std::string::npos);
  // MosaicML's tables state flash attention and predate torch 2.0: FlashAttention-1.
  std::string mosaic = assumptions("mosaic-mpt-1b-h100-80gb-8gpu-seq8192");
  CHECK(mosaic.find("FlashAttention-1") != std::string::npos);
  // NeMo 24.07 (2024): the current kernels.
  std::string nemo = assumptions("nemo2407-llama3-8b-8gpu-gbs128");
  CHECK(nemo.find("FlashAttention-1") == std::string::npos);
  CHECK(nemo.find("unfused") == std::string::npos);
}

TEST_CASE("validation: deterministic output and clear errors on bad input") {
  auto a = run_tutti({"validate", "--cases", "tests/validation/published-public.json", "--json",
                      "--only", "korthikanti"});
  auto b = run_tutti({"validate", "--cases", "tests/validation/published-public.json", "--json",
                      "--only", "korthikanti"});
  CHECK(a.rc == 0);
  CHECK(a.out == b.out);
  auto bad = run_tutti({"validate", "--cases", "-"}, "");
  CHECK(bad.rc == 2);
  std::string dir = temp_dir();
  auto notarray = run_shell("echo '{\"id\": 1}' > " + dir + "/x.json && " + std::string(TUTTI_BINARY_DIR) +
                            "/tutti validate --cases " + dir + "/x.json");
  CHECK(notarray.rc == 2);
  CHECK(notarray.err.find("expected an array of cases") != std::string::npos);
}
