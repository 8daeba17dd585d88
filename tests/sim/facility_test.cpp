#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "facility_fixture.hpp"

using namespace tutti;

TEST_CASE("facility: JSON carries the keys of issue 7 and is deterministic") {
  FacilityInputs in = testing::small_cluster();
  FacilityOptions o;
  o.seed = 7;
  nlohmann::json a = facility_to_json(evaluate_facility(in, o));
  nlohmann::json b = facility_to_json(evaluate_facility(in, o));
  CHECK(a.dump() == b.dump());
  for (const char* k : {"avg_it_W", "peak_it_W", "facility_W", "swing_W", "swing_period_s", "timeline"})
    CHECK_MESSAGE(a["power"].contains(k), k);
  CHECK(a.contains("energy_per_run_J"));
  for (const char* k : {"throttle_factor", "heat_per_rack_W"}) CHECK_MESSAGE(a["cooling"].contains(k), k);
  for (const char* k : {"capex_usd", "opex_usd_per_year", "cost_per_run_usd", "usd_per_million_tokens",
                        "cloud_cost_per_run_usd", "breakeven_utilization", "usd_per_gpu_hour"})
    CHECK_MESSAGE(a["cost"].contains(k), k);
  for (const char* k : {"mtbf_s", "checkpoint_interval_s", "checkpoint_write_s", "goodput", "monte_carlo"})
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
