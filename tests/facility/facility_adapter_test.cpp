#include <doctest/doctest.h>

#include "../support/run.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/models/workload.hpp"

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

#include "tutti/sim/result.hpp"
#include "tutti/topologies/cluster.hpp"

TEST_CASE("facility adapter: the SuperPOD cluster fills the inputs from catalog and BOM") {
  Cluster c = load_cluster(testing::src("topologies/dgx-h100-superpod-4su.json"));
  Workload w = load_workload(testing::src("models/llama3-70b.json"));
  SimResult r;
  r.iteration_time_s = 10;
  r.gemm_busy_s = 7;
  r.memory_busy_s = 1;
  r.comm_busy_s = 3;
  r.iterations = 1000;
  FacilityInputs in = facility_inputs(w, c, r);
  CHECK(in.gpus == 1024);
  CHECK(in.nodes == 128);
  CHECK(in.nics == 1024);
  CHECK(in.gpu.tdp_W == doctest::Approx(700));
  CHECK(in.node_max_power_W == doctest::Approx(10200));
  CHECK(in.switches == 48);  // 32 leaves + 16 spines [RA-H100-PDF]
  CHECK(in.network_links >= 2048);
  CHECK(in.network_power_W == doctest::Approx(c.bom.network_power_W));
  CHECK(in.network_capex_usd > 0);
  CHECK(in.storage_write_Bps == doctest::Approx(4 * 62e9));  // 4 x 'best' 1-SU tier
  CHECK(in.racks == c.racks);
  CHECK(in.times.gemm_busy_s == 7);
  CHECK(in.checkpoint_bytes == doctest::Approx(params(w) * 14));
  FacilityResult f = evaluate_facility(in, {});
  CHECK(f.power.avg_it_W > 0);
  CHECK(f.power.avg_it_W < f.power.nameplate_it_W);
  CHECK(f.reliability.goodput > 0.9);
  CHECK(f.cost.cloud_cost_per_run_usd > 0);
}
