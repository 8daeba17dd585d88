// The least-squares fits of the compute curves and alpha-beta links (calibrate/fit.hpp) recover
// known parameters.
#include "tutti/calibrate/fit.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "tutti/core/error.hpp"

using namespace tutti;
using namespace tutti::calibrate;

TEST_CASE("calibrate: the GEMM fit recovers known parameters") {
  GemmFit truth;
  truth.peak_flops_per_s = 1e11;
  truth.eff_max = 0.8;
  truth.half_flops = 1e6;
  truth.half_dim = 16;
  truth.launch_overhead_s = 2e-6;
  std::vector<GemmSample> s;
  for (double m : {32, 128, 512})
    for (double n : {64, 256, 1024})
      for (double k : {16, 128, 1024}) s.push_back({m, n, k, truth.predict_s(m, n, k)});
  GemmFit f = fit_gemm(s, 1e11);
  CHECK(f.rms_rel_error < 0.02);
  CHECK(f.eff_max == doctest::Approx(0.8).epsilon(0.05));
  CHECK(f.launch_overhead_s == doctest::Approx(2e-6).epsilon(0.25));
  for (const auto& x : s)
    CHECK(f.predict_s(x.m, x.n, x.k) == doctest::Approx(x.time_s).epsilon(0.05));
  CHECK_THROWS_AS(fit_gemm({s[0], s[1]}, 0), InputError);
}

TEST_CASE("calibrate: memory and alpha-beta fits") {
  MemFit truth;
  truth.peak_Bps = 2e10;
  truth.eff_max = 0.9;
  truth.half_bytes = 1e5;
  truth.launch_overhead_s = 1e-6;
  std::vector<MemSample> m;
  for (double b = 1e4; b < 1e9; b *= 4) m.push_back({b, truth.predict_s(b)});
  MemFit f = fit_membound(m, 2e10);
  CHECK(f.rms_rel_error < 0.03);
  for (const auto& x : m) CHECK(f.predict_s(x.bytes) == doctest::Approx(x.time_s).epsilon(0.06));

  std::vector<CollSample> c;
  for (double b = 8; b < 1e8; b *= 4) c.push_back({b, 5e-6 + b * 1.5 / 4e9});
  AlphaBetaFit ab = fit_alpha_beta(c, 1.5);
  CHECK(ab.latency_s == doctest::Approx(5e-6).epsilon(0.01));
  CHECK(ab.busbw_Bps == doctest::Approx(4e9).epsilon(0.01));
  CHECK(ab.max_rel_error < 1e-6);
}
