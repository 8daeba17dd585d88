#include <doctest/doctest.h>

#include <cmath>

#include "facility_fixture.hpp"
#include "tutti/core/error.hpp"

using namespace tutti;

TEST_CASE("facility power: timeline states and averages by hand") {
  FacilityInputs in = testing::small_cluster();
  PowerResult p = compute_power(in, in.times, 1.0);
  // T=10: compute stream 6+2 s, comm 3 s of which 2 s fill the compute-free time (exposed)
  // and 1 s overlaps the GEMMs. No idle.
  REQUIRE(p.timeline.size() == 4);
  CHECK(p.timeline[0].state == "compute+comm");
  CHECK(p.timeline[0].duration_s == doctest::Approx(1.0));
  CHECK(p.timeline[0].gpu_W == doctest::Approx(700));  // 700 + 20 capped at TDP
  CHECK(p.timeline[1].state == "compute");
  CHECK(p.timeline[1].duration_s == doctest::Approx(5.0));
  CHECK(p.timeline[2].state == "memory");
  CHECK(p.timeline[2].gpu_W == doctest::Approx(420));
  CHECK(p.timeline[3].state == "comm");
  CHECK(p.timeline[3].start_s == doctest::Approx(8.0));
  CHECK(p.timeline[3].gpu_W == doctest::Approx(280));
  // GPU energy 6*700 + 2*420 + 2*280 = 5600 J -> 560 W average.
  CHECK(p.gpu_avg_W == doctest::Approx(560));
  // Fixed draw: 2 nodes * 1000 W + 500 W network = 2500 W.
  CHECK(p.avg_it_W == doctest::Approx(16 * 560 + 2500));
  CHECK(p.peak_it_W == doctest::Approx(16 * 700 + 2500));
  CHECK(p.min_it_W == doctest::Approx(16 * 280 + 2500));
  CHECK(p.swing_W == doctest::Approx(16 * 420));
  CHECK(p.swing_period_s == doctest::Approx(10));
  CHECK(p.facility_W == doctest::Approx((16 * 560 + 2500) * 1.5));
  CHECK(p.node_avg_W == doctest::Approx(8 * 560 + 1000));
  CHECK(p.nameplate_it_W == doctest::Approx(2 * 10000 + 500));
  CHECK(p.energy_per_iteration_J == doctest::Approx(114600));
  CHECK(p.energy_per_iteration_facility_J == doctest::Approx(114600 * 1.5));
}

TEST_CASE("facility power: energy equals the integral of the power timeline") {
  FacilityInputs in = testing::small_cluster();
  for (IterationTimes t : {IterationTimes{10, 6, 2, 3}, IterationTimes{12, 3, 1, 10},
                           IterationTimes{5, 1, 1, 0}, IterationTimes{7.5, 2, 2, 1}}) {
    for (double f : {1.0, 0.8, 0.5}) {
      PowerResult p = compute_power(in, t, f);
      // The segments tile [0, T) without gaps or overlaps.
      double end = 0, integral = 0;
      for (const auto& s : p.timeline) {
        CHECK(s.start_s == doctest::Approx(end));
        CHECK(s.duration_s > 0);
        end = s.start_s + s.duration_s;
        integral += s.it_W * s.duration_s;
        CHECK(s.it_W <= p.peak_it_W + 1e-9);
        CHECK(s.it_W >= p.min_it_W - 1e-9);
      }
      CHECK(end == doctest::Approx(t.iteration_s));
      CHECK(p.energy_per_iteration_J == doctest::Approx(integral).epsilon(1e-12));
      CHECK(p.avg_it_W * t.iteration_s == doctest::Approx(integral).epsilon(1e-12));
    }
  }
  // Idle time appears when the compute stream and communication leave a gap.
  PowerResult p = compute_power(in, {10, 2, 1, 3}, 1.0);
  CHECK(p.timeline.back().state == "idle");
  CHECK(p.timeline.back().duration_s == doctest::Approx(4));
  CHECK(p.gpu_min_W == doctest::Approx(100));
}

TEST_CASE("facility power: DVFS cube law and the power cap") {
  GpuPowerModel m;
  m.tdp_W = 700;
  m.idle_W = 100;
  CHECK(gpu_state_power_W(m, 700, 0.5, true) == doctest::Approx(100 + 600 * 0.125));
  CHECK(gpu_state_power_W(m, 280, 0.5, false) == doctest::Approx(280));
  CHECK(power_cap_clock_factor(m) == doctest::Approx(1.0));
  m.power_cap_W = 500;
  CHECK(power_cap_clock_factor(m) == doctest::Approx(std::cbrt(400.0 / 600.0)));
  CHECK(gpu_state_power_W(m, 700, 1.0, true) == doctest::Approx(500));
  CHECK(gpu_state_power_W(m, 700, power_cap_clock_factor(m), true) == doctest::Approx(500));
}

TEST_CASE("facility power: rescaled iteration times") {
  IterationTimes t{10, 6, 2, 3};
  IterationTimes r = rescale_times(t, 1.25);
  CHECK(r.gemm_busy_s == doctest::Approx(7.5));
  CHECK(r.memory_busy_s == doctest::Approx(2.5));
  CHECK(r.comm_busy_s == doctest::Approx(3));
  CHECK(r.iteration_s == doctest::Approx(12));
}

TEST_CASE("facility power: bad inputs are input errors") {
  FacilityInputs in = testing::small_cluster();
  CHECK_THROWS_AS(compute_power(in, {0, 0, 0, 0}, 1.0), InputError);
  in.gpus = 0;
  CHECK_THROWS_AS(compute_power(in, in.times, 1.0), InputError);
}

#include <algorithm>
#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "tutti/core/config.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"

TEST_CASE("facility power: the per-activity draws come from the cited catalog file") {
  const GpuPowerCoefficients& k = builtin_gpu_power();
  // Every coefficient cites docs/hardware-facts.md 6.5; each one that is not listed as an estimate
  // cites a measurement by its reference key (tests/topologies/citations_test.cpp resolves keys).
  REQUIRE(k.sources.size() == 5);
  for (const auto& [key, text] : k.sources) {
    const std::string key_name = key;  // clang 14 cannot capture a structured binding
    CAPTURE(key_name);
    CHECK(text.find("docs/hardware-facts.md 6.5") != std::string::npos);
    const bool estimate =
        std::find(k.estimates.begin(), k.estimates.end(), key) != k.estimates.end();
    if (!estimate) CHECK(text.find("[") != std::string::npos);
  }
  // The compute draw is measured, not an estimate; the measured node peak rests on it.
  CHECK(std::find(k.estimates.begin(), k.estimates.end(), "compute_frac") == k.estimates.end());
  CHECK(k.compute_frac == doctest::Approx(1.0));
  // Activity ordering the sources state: idle < communication < memory-bound < dense compute.
  CHECK(k.idle_frac < k.comm_frac);
  CHECK(k.comm_frac < k.memory_frac);
  CHECK(k.memory_frac < k.compute_frac);
  // Hand-built inputs default to the same values (no second, uncited copy in the code).
  GpuPowerModel d;
  CHECK(d.compute_frac == k.compute_frac);
  CHECK(d.memory_frac == k.memory_frac);
  CHECK(d.comm_frac == k.comm_frac);
  CHECK(d.overlap_extra_W == k.overlap_extra_W);
  // The cluster path (simulate and plan) copies the file; the catalog GPU keeps its idle draw.
  Cluster c = load_cluster(testing::src("topologies/dgx-h100-superpod-4su.json"));
  FacilityInputs in;
  fill_cluster_inputs(in, c);
  CHECK(in.gpu.tdp_W == doctest::Approx(700));
  CHECK(in.gpu.memory_frac == k.memory_frac);
  CHECK(in.gpu.comm_frac == k.comm_frac);
  CHECK(in.gpu.overlap_extra_W == k.overlap_extra_W);
  CHECK(in.gpu.idle_W == doctest::Approx(c.gpu.idle_W));
  // A GPU without an idle draw idles at the file's fraction of TDP.
  CHECK(gpu_power_model(k, 1000, 0).idle_W == doctest::Approx(k.idle_frac * 1000));
}

TEST_CASE("facility power: gpu_power.json is read strictly") {
  nlohmann::json base = Catalog::builtin().file("gpu_power").json();
  auto parse = [](const nlohmann::json& j) {
    return parse_gpu_power(Doc::from_json(j, "gpu_power.json"));
  };
  CHECK(parse(base).comm_frac == doctest::Approx(base["comm_frac"].get<double>()));
  auto fails = [&](nlohmann::json j, const std::string& key) {
    CAPTURE(key);
    try {
      parse(j);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(key) != std::string::npos);
    }
  };
  nlohmann::json j = base;
  j["sources"].erase("comm_frac");  // a coefficient without a citation
  fails(j, "comm_frac");
  j = base;
  j["sources"]["gemm_frac"] = "a source for a coefficient that does not exist";
  fails(j, "gemm_frac");
  j = base;
  j["sources"]["memory_frac"] = "";
  fails(j, "memory_frac");
  j = base;
  j["estimates"].push_back("gemm_frac");
  fails(j, "estimates");
  j = base;
  j["memory_frac"] = 2.0;
  fails(j, "memory_frac");
  j = base;
  j["overlap_extra"] = 30;  // units required
  fails(j, "overlap_extra");
  j = base;
  j["zz_unknown"] = 1;
  fails(j, "zz_unknown");
}
