#include <doctest/doctest.h>

#include "../support/run.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/facility.hpp"

using namespace tutti;

TEST_CASE("facility adapter: checkpoint size and input bytes from the workload") {
  Workload w = load_workload(testing::src("models/llama3-70b.json"));
  // bf16 weights + fp32 master + Adam m, v = 14 B per parameter.
  CHECK(checkpoint_bytes(w) == doctest::Approx(params(w) * 14));
  CHECK(params(w) == doctest::Approx(70.6e9).epsilon(0.01));
  CHECK(input_bytes_per_sample(w) == doctest::Approx(4.0 * 8192));
  FacilityInputs in;
  fill_workload_inputs(in, w);
  CHECK(in.tokens_per_iteration == doctest::Approx(512.0 * 8192));
  CHECK(in.samples_per_iteration == doctest::Approx(512));
  Workload r = load_workload(testing::src("models/resnet50.json"));
  CHECK(input_bytes_per_sample(r) == doctest::Approx(224.0 * 224 * 3));
}
