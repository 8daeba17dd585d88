// Issue 18 point 3: every sharding stage runs in the three engines; the native engine agrees
// with SimGrid (which runs every rank) within 1% on the iteration.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

void run(const std::string& parallel) {
  constexpr double tolerance = 0.01;
  ClusterParams p;
  p.name = "fat_tree";
  p.node = "dgx-h100";
  p.nodes = 4;
  p.fabric = "fat_tree";
  p.nodes_per_su = 4;
  p.sets = {"fabric.routing=dmodk"};
  const Cluster c = make_cluster(p);
  const Workload w = load_workload(
      std::string(TUTTI_SOURCE_DIR) + "/models/tiny-gpt.json",
      {"training.global_batch=32", "model.layers=4", "parallel.pp=1", "parallel.micro_batch=1"});
  // tiny-gpt's file layout has pp=2 and mb=4: the file is set to pp=1, mb=1, then `parallel`.
  const Layout l = resolve_layout(w, parallel, c.gpus());
  check_layout(w, l, c.gpu.hbm_bytes);
  const Program prog = expand_program(w, l);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const SimResult rn = simulate_program(prog, sc, prof);
  const SimResult ra = simulate_program_analytic(prog, sc, prof);
  const SimResult rs = simulate_program_simgrid(prog, sc, prof);
  auto dp = [](const SimResult& r) {
    const auto& e = r.breakdown.exposed_comm_s;
    return e[GroupDim::DP] + e[GroupDim::DPShard] + e[GroupDim::DPReplica];
  };
  std::printf(
      "tiny-gpt(4 layers) %-32s native %.6e  analytic %.6e  simgrid %.6e  ratio %.5f  dp exposed n "
      "%.3e s %.3e  mem %.2f GiB\n",
      to_string(l).c_str(), rn.iteration_time_s, ra.iteration_time_s, rs.iteration_time_s,
      rn.iteration_time_s / rs.iteration_time_s, dp(rn), dp(rs),
      memory_per_gpu(w, l).total_bytes / 1073741824.0);
  INFO(parallel);
  CHECK(std::abs(rn.iteration_time_s / rs.iteration_time_s - 1) < tolerance);
  // (The split of exposed time among overlapping collectives is attributed differently by the
  // two engines' blame rules; the DP share is printed, not held to 1%.)
  CHECK(ra.iteration_time_s > 0);
  CHECK(rs.memory_per_gpu_bytes == doctest::Approx(rn.memory_per_gpu_bytes));
}

}  // namespace

TEST_CASE("sharding in the engines: zero=0..3 on 32 GPUs, native within 1% of SimGrid") {
  // reshard=0 was 1.4% long until the native engine learnt pacing per neighbourhood
  // (engine.cpp, RoutedPlan::quiet): the gathers' first runs had no TP collective beside them.
  for (const char* p :
       {"tp=2,zero=0", "tp=2,zero=1", "tp=2,zero=2", "tp=2,zero=3", "tp=2,zero=3,reshard=0"})
    run(p);
}
TEST_CASE(
    "sharding in the engines: ZeRO-3 with pipelining, reshard 0 and 1, native within 1% of "
    "SimGrid") {
  for (const char* p : {"tp=2,pp=2,zero=3,reshard=0", "tp=2,pp=2,zero=3,reshard=1"}) run(p);
}
TEST_CASE("sharding in the engines: hybrid sharding groups, native within 1% of SimGrid") {
  for (const char* p : {"tp=2,zero=3,shard_group=4", "tp=2,zero=1,shard_group=4"}) run(p);
}
