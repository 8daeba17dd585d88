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
