// Issue 18 point 1: an expert-parallel case without pipeline parallelism. The EDP (expert
// data-parallel) gradient group is the seventh GroupDim; per-dimension arrays once had six
// slots, so its time landed in the bubble (native, SimGrid) or in compute (analytic). Every
// engine must report bubble = 0 with pp = 1 and agree on each dimension of the breakdown.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../support/cluster_fixture.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

struct Case {
  Program program;
  SimCluster cluster;
  Cluster c;
};

Cluster fat_tree(int nodes) {
  return testing::dgx_h100_fat_tree("ep-test", nodes, {"fabric.routing=dmodk"});
}

Cluster shipped_cluster(const char* file) {
  return load_cluster(std::string(TUTTI_SOURCE_DIR) + "/topologies/" + file);
}

Program mixtral_program(const Cluster& c, const std::string& parallel,
                        const std::vector<std::string>& sets) {
  const Workload w =
      load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/mixtral-8x7b.json", sets);
  const Layout l = resolve_layout(w, parallel, c.gpus());
  return expand_program(w, l);
}

void print(const char* what, const SimResult& r) {
  std::printf("%-9s %s iter %.6f compute %.6f bubble %.6f other %.6f |", what, r.engine.c_str(),
              r.iteration_time_s, r.breakdown.compute_s, r.breakdown.bubble_s, r.breakdown.other_s);
  for (GroupDim d : enum_values<GroupDim>())
    std::printf(" %s %.6f", to_string(d), r.breakdown.exposed_comm_s[d]);
  std::printf("\n");
}

bool has_edp_collective(const Program& p) {
  for (const RankClass& rc : p.classes)
    for (const Op& op : rc.ops)
      if (op.kind == OpKind::Collective && op.group == GroupDim::EDP) return true;
  return false;
}

/// Each breakdown term of `a` within `rel` of `b`'s (relative to the larger of the two; terms
/// under 5% of the iteration are compared against that floor instead, so a 2% term may differ
/// by 0.1% of the iteration). The term of dimension `odd` is held to `odd_rel` instead, when given.
void agree(const SimResult& a, const SimResult& b, double rel, GroupDim odd = GroupDim::TP,
           double odd_rel = -1) {
  const double floor = 0.05 * b.iteration_time_s;
  auto close = [&](const char* what, double x, double y, double r = -1) {
    if (r < 0) r = rel;
    INFO(what << ": " << a.engine << " " << x << " vs " << b.engine << " " << y);
    CHECK(std::abs(x - y) <= r * std::max({std::abs(x), std::abs(y), floor}));
  };
  close("iteration", a.iteration_time_s, b.iteration_time_s);
  close("compute", a.breakdown.compute_s, b.breakdown.compute_s);
  close("bubble", a.breakdown.bubble_s, b.breakdown.bubble_s);
  close("other", a.breakdown.other_s, b.breakdown.other_s);
  for (GroupDim d : enum_values<GroupDim>())
    close(to_string(d), a.breakdown.exposed_comm_s[d], b.breakdown.exposed_comm_s[d],
          d == odd && odd_rel >= 0 ? odd_rel : rel);
}

void sums_to_iteration(const SimResult& r) {
  const Breakdown& b = r.breakdown;
  CHECK(b.compute_s + b.exposed_comm_total() + b.bubble_s + b.other_s ==
        doctest::Approx(r.iteration_time_s).epsilon(1e-6));
}

}  // namespace

TEST_CASE(
    "ep with pp=1: mixtral-8x7b tp=4,ep=8,zero=3 on 256 GPUs (one SuperPOD SU) has no bubble in "
    "any engine") {
  const Cluster c = shipped_cluster("dgx-h100-superpod-1su.json");
  const Program prog = mixtral_program(c, "tp=4,pp=1,ep=8,zero=3", {});
  REQUIRE(prog.layout.pp == 1);
  REQUIRE(has_edp_collective(prog));
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const SimResult rn = simulate_program(prog, sc, prof);
  const SimResult ra = simulate_program_analytic(prog, sc, prof);
  print("256 GPUs", rn);
  print("256 GPUs", ra);
  CHECK(rn.breakdown.bubble_s == 0);
  CHECK(ra.breakdown.bubble_s == 0);
  sums_to_iteration(rn);
  sums_to_iteration(ra);
  // The expert gradients' time is reported under edp, not lost in the bubble or in compute.
  CHECK(rn.breakdown.exposed_comm_s[GroupDim::EDP] > 0);
  CHECK(ra.breakdown.exposed_comm_s[GroupDim::EDP] > 0);
  // With pp = 1 the analytic engine list-schedules the class and times each collective in all
  // of its groups at once (one dispatch all-to-all: 1.086 ms in one EP group alone, 1.626 ms in
  // all 32 at once), and attributes with the native engine's rules: every term agrees. Before,
  // it timed one group alone: EP 2.22 s against 3.33 s native. Measured now: iteration 9.582 vs
  // 9.594 s, EP 3.330 and EDP 3.375 s in both, DP 0.112 s in both, TP 0.457 vs 0.469 s: the TP
  // collectives share NVLink with the DP-stream gathers' in-node hop, which the analytic engine
  // does not model (2.5% of the TP term, 0.12% of the iteration), so TP is held to 3%.
  agree(ra, rn, 0.02, GroupDim::TP, 0.03);
}

TEST_CASE(
    "ep with pp=1: mixtral (2 layers) tp=4,ep=8,zero=3 on 64 GPUs, no bubble in any engine, native "
    "and SimGrid agree per dimension") {
  const Cluster c = fat_tree(8);
  const Program prog =
      mixtral_program(c, "tp=4,pp=1,ep=8,zero=3", {"model.layers=2", "training.global_batch=32"});
  REQUIRE(has_edp_collective(prog));
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const SimResult rn = simulate_program(prog, sc, prof);
  const SimResult ra = simulate_program_analytic(prog, sc, prof);
  const SimResult rs = simulate_program_simgrid(prog, sc, prof);
  print("64 GPUs", rn);
  print("64 GPUs", ra);
  print("64 GPUs", rs);
  for (const SimResult* r : {&rn, &ra, &rs}) {
    CHECK(r->breakdown.bubble_s == 0);
    sums_to_iteration(*r);
  }
  agree(rn, rs, 0.02);
  CHECK(ra.breakdown.exposed_comm_s[GroupDim::EDP] > 0);
  // The analytic engine's list schedule, before it 0.068 s against 0.615 s here (it timed each
  // collective alone and split the DP tail by traffic). Measured now: the iteration equal to
  // SimGrid's, DP 0.1738 vs 0.1731 s, EDP 0.3983 vs 0.3979 s, EP 17.4 vs 18.4 ms, TP 4.07 vs
  // 4.14 ms: the EP all-to-alls share NICs and the spine with the DP-stream gathers, which the
  // analytic engine does not model (each collective is timed beside every group of its own kind,
  // not beside the other streams'), 5.3% of the EP term and 0.16% of the iteration.
  agree(ra, rs, 0.02, GroupDim::EP, 0.06);
}
