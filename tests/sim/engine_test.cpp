// Native DES and analytic engine on hand-built Programs.
#include <doctest/doctest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "engine_fixture.hpp"
#include "tutti/core/error.hpp"
#include "tutti/sim/compute_model.hpp"

using namespace tutti;
using tutti::testing::TestFatTree;

TEST_CASE("1F1B on a compute-only program: bubble = (p-1)/m of compute") {
  const int p = 4, m = 8, n = 4096;
  auto topo = std::make_shared<TestFatTree>(1, p, 1, 1, 50e9, 0, 50e9, 0.0);
  SimCluster cl = testing::make_sim_cluster(topo);
  CalibrationProfile prof = testing::ideal_profile();
  Program prog = testing::pipeline_program(p, m, 1, 0.0, 0.0, n);
  SimResult r = simulate_program(prog, cl, prof);
  const double F = 2.0 * n * n * n / 1000e12, B = 2 * F;
  CHECK(r.iteration_time_s == doctest::Approx((m + p - 1) * (F + B)).epsilon(1e-9));
  CHECK(r.breakdown.compute_s == doctest::Approx(m * (F + B)).epsilon(1e-9));
  CHECK(r.breakdown.bubble_s ==
        doctest::Approx((p - 1.0) / m * r.breakdown.compute_s).epsilon(1e-9));
  CHECK(r.breakdown.exposed_comm_total() == doctest::Approx(0.0));
  CHECK(r.mfu == doctest::Approx(double(m) / (m + p - 1)).epsilon(1e-9));
  // The analytic engine gives the same closed form here.
  SimResult a = simulate_program_analytic(prog, cl, prof);
  CHECK(a.iteration_time_s == doctest::Approx(r.iteration_time_s).epsilon(1e-9));
  CHECK(a.breakdown.bubble_s == doctest::Approx(r.breakdown.bubble_s).epsilon(1e-9));
}

TEST_CASE("analytic and event engines agree within 2% on uncongested pipelines with TP and DP") {
  // 4 stages x tp 4 x dp 2 on nodes of 4 GPUs: TP inside nodes, PP and DP across nodes,
  // one flow per NIC (no congestion). Default profile (real latencies and efficiencies).
  const CalibrationProfile& prof = default_calibration();
  for (int m : {4, 8, 16}) {
    auto topo = std::make_shared<TestFatTree>(2, 4, 4, 4, 50e9, 450e9, 200e9, 1e-6);
    SimCluster cl = testing::make_sim_cluster(topo);
    Program prog = testing::pipeline_program(4, m, 4, 8e6, 32e6, 4096, 2, 200e6);
    SimResult r = simulate_program(prog, cl, prof);
    SimResult a = simulate_program_analytic(prog, cl, prof);
    CAPTURE(m);
    CHECK(a.iteration_time_s == doctest::Approx(r.iteration_time_s).epsilon(0.02));
    CHECK(r.breakdown.exposed_comm_s[GroupDim::TP] > 0);
    double sum = r.breakdown.compute_s + r.breakdown.exposed_comm_total() + r.breakdown.bubble_s +
                 r.breakdown.other_s;
    CHECK(sum == doctest::Approx(r.iteration_time_s).epsilon(1e-9));
  }
}

TEST_CASE("fabric contention: a pipeline on an oversubscribed spine is slower") {
  const CalibrationProfile& prof = default_calibration();
  auto full = std::make_shared<TestFatTree>(2, 4, 4, 4, 50e9, 450e9, 200e9, 1e-6);
  auto thin = std::make_shared<TestFatTree>(2, 4, 4, 1, 50e9, 450e9, 50e9, 1e-6);
  Program prog = testing::pipeline_program(4, 8, 4, 64e6, 32e6, 4096, 2, 2e9);
  SimResult a = simulate_program(prog, testing::make_sim_cluster(full), prof);
  SimResult b = simulate_program(prog, testing::make_sim_cluster(thin), prof);
  CHECK(b.iteration_time_s > 1.05 * a.iteration_time_s);
  REQUIRE(!b.bottleneck_links.empty());
  CHECK(b.bottleneck_links[0].tier == Tier::LeafSpine);
  auto max_ls = [](const SimResult& r) {
    double u = 0;
    for (const auto& l : r.bottleneck_links)
      if (l.tier == Tier::LeafSpine) u = std::max(u, l.utilization);
    return u;
  };
  CHECK(max_ls(b) > max_ls(a));
  CHECK(b.bottleneck_links[0].utilization <= 1.0 + 1e-9);
}

TEST_CASE("determinism: two runs give identical JSON") {
  auto topo = std::make_shared<TestFatTree>(2, 4, 4, 2, 50e9, 450e9, 100e9, 1e-6);
  SimCluster cl = testing::make_sim_cluster(topo);
  Program prog = testing::pipeline_program(4, 8, 4, 8e6, 32e6, 2048, 2, 100e6);
  auto dump = [&] {
    SimResult r = simulate_program(prog, cl, default_calibration());
    r.wall_s = 0;
    nlohmann::json j;
    to_json(j, r);
    return j.dump();
  };
  CHECK(dump() == dump());
}

TEST_CASE("trace: one process per rank class, every op once, a compute track in each") {
  auto topo = std::make_shared<TestFatTree>(1, 4, 1, 1, 50e9, 0, 50e9, 0.0);
  SimCluster cl = testing::make_sim_cluster(topo);
  Program prog = testing::pipeline_program(4, 4, 1, 1e6, 0.0, 1024);
  ProgramSimOptions o;
  o.trace.path = tutti::testing::temp_dir() + "/trace.json";
  simulate_program(prog, cl, default_calibration(), o);
  std::ifstream in(o.trace.path);
  nlohmann::json j = nlohmann::json::parse(in);
  std::size_t ops = 0, xs = 0, processes = 0, compute = 0;
  for (const auto& rc : prog.classes) ops += rc.ops.size();
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") ++xs;
    if (e["ph"] == "M" && e["name"] == "process_name") ++processes;
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "compute") ++compute;
  }
  CHECK(xs == ops);
  CHECK(processes == 4);
  CHECK(compute == 4);
}

TEST_CASE("a send without its recv is reported as a deadlock, too many ranks is an input error") {
  auto topo = std::make_shared<TestFatTree>(1, 2, 1, 1, 50e9, 0, 50e9, 0.0);
  SimCluster cl = testing::make_sim_cluster(topo);
  Program prog = testing::pipeline_program(2, 2, 1, 1e6, 0.0, 512);
  // Drop the recvs of stage 1.
  auto& ops = prog.classes[1].ops;
  for (auto& op : ops)
    if (op.kind == OpKind::Recv) op.tag += 100000;
  CHECK_THROWS_AS(simulate_program(prog, cl, default_calibration()), InternalError);
  Program big = testing::pipeline_program(4, 2, 1, 0, 0, 512);
  CHECK_THROWS_AS(simulate_program(big, cl, default_calibration()), InputError);
}
