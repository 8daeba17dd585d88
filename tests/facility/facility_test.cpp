#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "facility_fixture.hpp"
#include "tutti/core/error.hpp"

using namespace tutti;

TEST_CASE("facility: JSON carries the keys of issue 7 and is deterministic") {
  FacilityInputs in = testing::small_cluster();
  FacilityOptions o;
  o.seed = 7;
  nlohmann::json a = facility_to_json(evaluate_facility(in, o));
  nlohmann::json b = facility_to_json(evaluate_facility(in, o));
  CHECK(a.dump() == b.dump());
  for (const char* k :
       {"avg_it_W", "peak_it_W", "facility_W", "swing_W", "swing_period_s", "timeline"})
    CHECK_MESSAGE(a["power"].contains(k), k);
  CHECK(a.contains("energy_per_run_J"));
  for (const char* k : {"throttle_factor", "heat_per_rack_W"})
    CHECK_MESSAGE(a["cooling"].contains(k), k);
  for (const char* k :
       {"capex_usd", "opex_usd_per_year", "cost_per_run_usd", "usd_per_million_tokens",
        "cloud_cost_per_run_usd", "breakeven_utilization", "usd_per_gpu_hour"})
    CHECK_MESSAGE(a["cost"].contains(k), k);
  for (const char* k :
       {"mtbf_s", "checkpoint_interval_s", "checkpoint_write_s", "goodput", "monte_carlo"})
    CHECK_MESSAGE(a["reliability"].contains(k), k);
  for (const char* k : {"required_read_Bps", "available_read_Bps", "stall_fraction"})
    CHECK_MESSAGE(a["storage"].contains(k), k);
  CHECK(a["reliability"]["monte_carlo"]["seed"] == 7);
  CHECK(facility_table_lines(evaluate_facility(in, o)).size() >= 5);
}

TEST_CASE("facility: run energy adds failure overhead to the iterations' energy") {
  FacilityInputs in = testing::small_cluster();
  FacilityOptions o;
  o.monte_carlo_trials = 0;
  FacilityResult r = evaluate_facility(in, o);
  const double idle_it = 16 * 100 + 2500;
  double expect = 1000 * r.power.energy_per_iteration_J +
                  (r.reliability.checkpoint_overhead_s + r.reliability.restart_total_s) * idle_it +
                  r.reliability.rework_s * r.power.avg_it_W;
  CHECK(r.energy_per_run_it_J == doctest::Approx(expect));
  CHECK(r.energy_per_run_J == doctest::Approx(expect * 1.5));
  CHECK(r.effective_time_to_train_s > r.time_to_train_s);
  CHECK(r.cost.cost_per_run_usd > 0);
}

TEST_CASE("facility: the --facility flag parses every key and rejects bad ones") {
  FacilityOptions o = parse_facility_flag(
      "life=4,facility_life=20,maintenance=0.08,utilization=0.7,power_cap=500W,min_clock=0.3,"
      "profile=meta-rsc1,restart=15min,interval=30min,trials=10");
  CHECK(o.hardware_life_years == 4);
  CHECK(o.facility_life_years == 20);
  CHECK(o.maintenance_frac_per_year == doctest::Approx(0.08));
  CHECK(o.utilization == doctest::Approx(0.7));
  CHECK(o.power_cap_W == doctest::Approx(500));
  CHECK(o.min_clock_factor == doctest::Approx(0.3));
  CHECK(o.reliability_profile == "meta-rsc1");
  CHECK(o.restart_s == doctest::Approx(900));
  CHECK(o.checkpoint_interval_s == doctest::Approx(1800));
  CHECK(o.monte_carlo_trials == 10);
  CHECK(parse_facility_flag("interval=young", o).checkpoint_interval_s == 0);
  CHECK_THROWS_AS(parse_facility_flag("life=0"), InputError);
  CHECK_THROWS_AS(parse_facility_flag("life=abc"), InputError);
  CHECK_THROWS_AS(parse_facility_flag("power_cap=500"), InputError);  // units required
  CHECK_THROWS_AS(parse_facility_flag("restart=5kg"), InputError);
  CHECK_THROWS_AS(parse_facility_flag("colour=blue"), InputError);
  CHECK_THROWS_AS(parse_facility_flag("life"), InputError);
}

TEST_CASE("facility: a power cap option throttles through evaluate_facility") {
  FacilityInputs in = testing::small_cluster();
  FacilityOptions o;
  o.monte_carlo_trials = 0;
  o.power_cap_W = 500;
  FacilityResult r = evaluate_facility(in, o);
  CHECK(r.cooling.throttle_factor == doctest::Approx(std::cbrt(400.0 / 600.0)));
  CHECK(r.power.gpu_peak_W <= 500 + 1e-9);
  nlohmann::json j = facility_to_json(r);
  CHECK(j["assumptions"]["power_cap_W"] == 500.0);
}
