#include <doctest/doctest.h>

#include "facility_fixture.hpp"

using namespace tutti;

TEST_CASE("facility storage: input bandwidth and stall by hand") {
  FacilityInputs in = testing::small_cluster();
  // 4M tokens * 4 B = 16 MB per 10 s iteration = 1.6 MB/s needed.
  in.storage_read_Bps = 1e6;
  StorageResult s = compute_storage(in, in.times);
  CHECK(s.required_read_Bps == doctest::Approx(1.6e6));
  CHECK(s.available_read_Bps == doctest::Approx(1e6));
  CHECK(s.iteration_s == doctest::Approx(16));
  CHECK(s.stall_fraction == doctest::Approx(0.375));
  // Checkpoint bursts: 1 TB at 100 GB/s.
  CHECK(s.checkpoint_burst_Bps == doctest::Approx(1e11));
  CHECK(s.checkpoint_burst_s == doctest::Approx(10));
  CHECK(s.checkpoint_bytes_per_node == doctest::Approx(5e11));

  in.storage_read_Bps = 1e9;
  s = compute_storage(in, in.times);
  CHECK(s.stall_fraction == 0);
  CHECK(s.iteration_s == doctest::Approx(10));

  // Samples (images) instead of tokens.
  in.input_bytes_per_sample = 3e6;
  in.samples_per_iteration = 4096;
  s = compute_storage(in, in.times);
  CHECK(s.required_read_Bps == doctest::Approx(4096 * 3e6 / 10));
  CHECK(s.stall_fraction == doctest::Approx(1 - 1e9 / (4096 * 3e6 / 10)));
}

TEST_CASE("facility storage: a data stall stretches the run and costs idle energy") {
  FacilityInputs in = testing::small_cluster();
  FacilityOptions o;
  o.monte_carlo_trials = 0;
  FacilityResult fast = evaluate_facility(in, o);
  in.storage_read_Bps = 1e6;
  FacilityResult slow = evaluate_facility(in, o);
  CHECK(fast.time_to_train_s == doctest::Approx(10000));
  CHECK(slow.time_to_train_s == doctest::Approx(16000));
  CHECK(slow.energy_per_run_it_J > fast.energy_per_run_it_J);
}
