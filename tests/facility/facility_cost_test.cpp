#include <doctest/doctest.h>

#include "facility_fixture.hpp"
#include "tutti/core/error.hpp"

using namespace tutti;

TEST_CASE("facility cost: capex, amortisation, opex and owned vs rented by hand") {
  FacilityInputs in = testing::small_cluster();
  FacilityOptions o;  // 5-year hardware life, 15-year facility life, 5% maintenance, u = 1
  PowerResult p = compute_power(in, in.times, 1.0);
  const double year = 365 * 86400.0;
  CostResult c = compute_cost(in, o, p, /*run_wall_s=*/20000, /*energy J=*/3.6e9);
  CHECK(c.servers_usd == doctest::Approx(600000));
  CHECK(c.network_usd == doctest::Approx(100000));
  CHECK(c.storage_usd == doctest::Approx(50000));
  CHECK(c.facility_usd == doctest::Approx(10 * 20500));  // $10/W * nameplate 20.5 kW
  CHECK(c.capex_usd == doctest::Approx(955000));
  CHECK(c.amortized_usd_per_year == doctest::Approx(750000 / 5.0 + 205000 / 15.0));
  CHECK(c.maintenance_usd_per_year == doctest::Approx(37500));
  // 17,190 W facility for a year at $0.10/kWh.
  CHECK(c.electricity_usd_per_year == doctest::Approx(17190 * year / 3.6e6 * 0.10));
  CHECK(c.opex_usd_per_year == doctest::Approx(17190 * year / 3.6e6 * 0.10 + 37500));
  const double fixed = 150000 + 205000 / 15.0 + 37500;
  const double gpu_h = 16 * year / 3600;
  const double elec_gpu_h = 17190 / 16.0 / 1000 * 0.10;  // kWh per GPU-hour * price
  CHECK(c.usd_per_gpu_hour == doctest::Approx(fixed / gpu_h + elec_gpu_h));
  // Run: the fixed cost of 20,000 s of the cluster plus 1 MWh at $0.10/kWh.
  CHECK(c.energy_cost_per_run_usd == doctest::Approx(100));
  CHECK(c.cost_per_run_usd == doctest::Approx(fixed / year * 20000 + 100));
  CHECK(c.usd_per_million_tokens == doctest::Approx(c.cost_per_run_usd / (1000 * 4.0)));
  CHECK(c.cloud_cost_per_run_usd == doctest::Approx(16 * 20000 / 3600.0 * 4.0));
  // Break-even: fixed / (G H u) + e == cloud.
  CHECK(c.breakeven_utilization == doctest::Approx(fixed / (gpu_h * (4.0 - elec_gpu_h))));
  o.utilization = c.breakeven_utilization;
  CHECK(compute_cost(in, o, p, 20000, 3.6e9).usd_per_gpu_hour == doctest::Approx(4.0));
}

TEST_CASE(
    "facility cost: no server price falls back to GPU prices, no cloud price, no comparison") {
  FacilityInputs in = testing::small_cluster();
  in.node_price_usd = 0;
  in.gpu_price_usd = 30000;
  in.cloud_usd_per_gpu_hour = 0;
  PowerResult p = compute_power(in, in.times, 1.0);
  CostResult c = compute_cost(in, {}, p, 1000, 0);
  CHECK(c.servers_usd == doctest::Approx(16 * 30000));
  CHECK(c.cloud_cost_per_run_usd == 0);
  CHECK(c.breakeven_utilization == 0);
}

TEST_CASE("facility cost: options out of range are input errors") {
  FacilityOptions o;
  o.hardware_life_years = 0;
  CHECK_THROWS_AS(check_options(o), InputError);
  o = {};
  o.utilization = 1.5;
  CHECK_THROWS_AS(check_options(o), InputError);
  o = {};
  o.monte_carlo_trials = -1;
  CHECK_THROWS_AS(check_options(o), InputError);
}
