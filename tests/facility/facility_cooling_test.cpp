#include <doctest/doctest.h>

#include <cmath>

#include "facility_fixture.hpp"
#include "tutti/core/error.hpp"

using namespace tutti;

namespace {

// Hand model of the fixture at clock factor f with compute rescaled by 1/f (overlap extra 0):
// GPU energy = 6/f * (100 + 600 f^3) + 2/f * (100 + 320 f^3) + 2 s * 280 W over
// T(f) = 10 + 8 (1/f - 1) seconds; a node is 8 GPUs + 1000 W.
double hand_node_W(double f) {
  double e = 6 / f * (100 + 600 * f * f * f) + 2 / f * (100 + 320 * f * f * f) + 2 * 280;
  double T = 10 + 8 * (1 / f - 1);
  return 8 * e / T + 1000;
}

}  // namespace

TEST_CASE("facility cooling: nodes per rack from rack power and nameplate") {
  FacilityInputs in = testing::small_cluster();
  CHECK(nodes_per_rack(in) == 2);  // 20 kW / 10 kW
  in.rack_power_W = 15000;
  CHECK(nodes_per_rack(in) == 1);
  in.rack_power_W = 5000;  // a node larger than a rack still takes one rack
  CHECK(nodes_per_rack(in) == 1);
  in.nodes_per_rack = 4;  // given by the topology's racks: capped at the node count
  CHECK(nodes_per_rack(in) == 2);
}

TEST_CASE("facility cooling: enough cooling, no throttling") {
  FacilityInputs in = testing::small_cluster();
  CoolingResult c = solve_cooling(in, {});
  CHECK(c.throttle_factor == 1.0);
  CHECK(c.fits);
  CHECK(c.heat_per_rack_W == doctest::Approx(2 * (8 * 560 + 1000)));
  CHECK(c.time_to_train_s == doctest::Approx(1000 * 10.0));
  CHECK(c.racks == 1);
}

TEST_CASE("facility cooling: a room short of cooling throttles and lengthens time to train") {
  FacilityInputs in = testing::small_cluster();
  in.gpu.overlap_extra_W = 0;
  in.rack_cooling_W = 9000;  // 2 nodes need 2 * 5480 = 10,960 W at full clock
  CHECK(2 * hand_node_W(1.0) == doctest::Approx(10960));
  CoolingResult c = solve_cooling(in, {});
  // Independent solution of 2 * node_W(f) = 9000 by bisection on the hand model.
  double lo = 0.2, hi = 1.0;
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    (2 * hand_node_W(mid) <= 9000 ? lo : hi) = mid;
  }
  CHECK(c.fits);
  CHECK(c.throttle_factor < 1.0);
  CHECK(c.throttle_factor == doctest::Approx(lo).epsilon(1e-6));
  CHECK(c.compute_slowdown == doctest::Approx(1 / lo).epsilon(1e-6));
  CHECK(c.heat_per_rack_W == doctest::Approx(9000).epsilon(1e-6));
  CHECK(c.heat_per_rack_unthrottled_W == doctest::Approx(10960));
  // Time to train grows by the compute stream's stretch: 1000 * (10 + 8 (1/f - 1)).
  CHECK(c.time_to_train_unthrottled_s == doctest::Approx(10000));
  CHECK(c.time_to_train_s == doctest::Approx(1000 * (10 + 8 * (1 / lo - 1))).epsilon(1e-6));
  CHECK(c.time_to_train_s > c.time_to_train_unthrottled_s * 1.05);

  // The same through evaluate_facility: the reported power is at the throttled point.
  FacilityResult r = evaluate_facility(in, {});
  CHECK(r.cooling.throttle_factor == doctest::Approx(lo).epsilon(1e-6));
  CHECK(r.power.node_avg_W * 2 == doctest::Approx(9000).epsilon(1e-6));
  CHECK(r.time_to_train_s > 10000 * 1.05);
}

TEST_CASE("facility cooling: total room cooling limits too") {
  FacilityInputs in = testing::small_cluster();
  in.total_cooling_W = 10000;  // IT average is 11,460 W at full clock
  CoolingResult c = solve_cooling(in, {});
  CHECK(c.throttle_factor < 1.0);
  CHECK(c.total_heat_W == doctest::Approx(10000).epsilon(1e-6));
}

TEST_CASE("facility cooling: fixed point with an engine-like re-timer converges") {
  FacilityInputs in = testing::small_cluster();
  in.rack_cooling_W = 9000;
  int calls = 0;
  // A re-timer that is not the linear rescale: slower compute hides more communication.
  Retimer engine = [&](double s) {
    ++calls;
    IterationTimes t = in.times;
    t.gemm_busy_s *= s;
    t.memory_busy_s *= s;
    t.iteration_s = 10 + 8 * (s - 1) - std::min(2.0, 4 * (s - 1));
    return t;
  };
  CoolingResult c = solve_cooling(in, {}, engine);
  CHECK(calls >= 1);
  CHECK(c.fixed_point_iterations >= 2);
  CHECK(c.throttle_factor < 1.0);
  // Self-consistent: the heat at the engine's timing for 1/f is the cooling limit.
  PowerResult p = compute_power(in, engine(c.compute_slowdown), c.throttle_factor);
  CHECK(2 * p.node_avg_W == doctest::Approx(9000).epsilon(1e-4));
}

TEST_CASE("facility cooling: no re-simulation when nothing throttles") {
  FacilityInputs in = testing::small_cluster();
  int calls = 0;
  Retimer engine = [&](double s) {
    ++calls;
    return rescale_times(in.times, s);
  };
  CoolingResult c = solve_cooling(in, {}, engine);
  CHECK(c.throttle_factor == 1.0);
  CHECK(calls == 0);
}

TEST_CASE("facility cooling: heat that cannot fit is reported, not hidden") {
  FacilityInputs in = testing::small_cluster();
  in.rack_cooling_W = 3000;  // below the node overhead alone
  CoolingResult c = solve_cooling(in, {});
  CHECK_FALSE(c.fits);
  FacilityOptions o;
  CHECK(c.throttle_factor == doctest::Approx(o.min_clock_factor));
}

TEST_CASE("facility cooling: a power cap throttles without any cooling shortage") {
  FacilityInputs in = testing::small_cluster();
  in.gpu.power_cap_W = 500;
  CoolingResult c = solve_cooling(in, {});
  double f = std::cbrt(400.0 / 600.0);
  CHECK(c.power_cap_factor == doctest::Approx(f));
  CHECK(c.throttle_factor == doctest::Approx(f));
  CHECK(c.time_to_train_s == doctest::Approx(1000 * (10 + 8 * (1 / f - 1))));
  in.gpu.power_cap_W = 100.5;  // leaves a clock below the floor
  CHECK_THROWS_AS(solve_cooling(in, {}), InputError);
}

TEST_CASE("facility cooling: a jumpy engine re-timing still settles (bracketed fixed point)") {
  // An engine whose iteration time jumps with the slowdown (a schedule flipping between two
  // orders) made the plain iteration s <- g(s) cycle for 50 steps and end in an internal error.
  FacilityInputs in = testing::small_cluster();
  in.gpu.overlap_extra_W = 0;
  in.rack_cooling_W = 9000;
  int calls = 0;
  Retimer jumpy = [&](double s) {
    ++calls;
    IterationTimes t = rescale_times(in.times, s);
    if (std::fmod(s * 1000, 2.0) < 1.0) t.iteration_s += 0.5;  // non-smooth in s
    return t;
  };
  CoolingResult c = solve_cooling(in, {}, jumpy);
  CHECK(c.throttle_factor < 1.0);
  CHECK(c.throttle_factor >= 0.2);
  CHECK(c.fixed_point_iterations <= 60);
  CHECK(calls <= 62);
  // The answer fits the cooling.
  CHECK(c.heat_per_rack_W <= in.rack_cooling_W * (1 + 1e-6));
}

// The time it takes is a benchmark (bench/facility.md), not an assertion here; what the test
// holds is the work: a handful of re-timings, not a search that runs for minutes.
TEST_CASE("facility cooling: the 1,024-GPU partial throttle settles in a few re-timings") {
  FacilityInputs in = testing::small_cluster();
  in.gpus = 1024;
  in.nodes = 128;
  in.nodes_per_rack = 4;
  in.rack_cooling_W = 4 * 5000;
  CoolingResult c = solve_cooling(in, {});
  CHECK(c.throttle_factor < 1.0);
  CHECK(c.fits);
  CHECK(c.fixed_point_iterations <= 20);
}

TEST_CASE(
    "facility cooling: a fixed point that does not settle answers 'no' with the bracket (not an "
    "input error)") {
  FacilityInputs in = testing::small_cluster();
  in.gpu.overlap_extra_W = 0;
  in.rack_cooling_W = 9000;
  Retimer jumpy = [&](double s) {
    IterationTimes t = rescale_times(in.times, s);
    if (std::fmod(s * 1000, 2.0) < 1.0) t.iteration_s += 0.5;
    return t;
  };
  FacilityOptions o;
  o.max_retimings = 2;
  try {
    solve_cooling(in, o, jumpy);
    FAIL("expected NoAnswerError");
  } catch (const NoAnswerError& e) {
    std::string what = e.what();
    CHECK(what.find("did not settle in 2 re-timings") != std::string::npos);
    CHECK(what.find("clock factor between") != std::string::npos);
  }
  o.max_retimings = 1;
  CHECK_THROWS_AS(check_options(o), InputError);
  CHECK(parse_facility_flag("retimings=100").max_retimings == 100);
}
