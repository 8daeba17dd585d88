// The breakdown attribution the native and SimGrid engines share
// (sim/include/tutti/sim/attribution.hpp): its rules on a hand-built two-stage timeline, and both
// engines giving the same breakdown term by term (not only the same total) on pipelined iterations.
#include "tutti/sim/attribution.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

Op op_of(OpKind k, Stream s) {
  Op o;
  o.kind = k;
  o.stream = s;
  return o;
}

void add_dep(RankClass& rc, std::size_t i, std::uint32_t dep) {
  rc.ops[i].dep_begin = static_cast<std::uint32_t>(rc.deps.size());
  rc.ops[i].dep_count = 1;
  rc.deps.push_back(dep);
}

/// Stage 0: GEMM [0,1], its TP all-reduce [1,3] (the next GEMM waits on it), GEMM [3,4], send
/// [4,5]. Stage 1: the matching recv (peer arrives at 4, done at 5), then a GEMM [5,6].
struct TwoStages {
  RankClass s0, s1;
  std::vector<double> start0{0, 1, 3, 4}, end0{1, 3, 4, 5}, rv0{0, 1, 3, 4};
  std::vector<double> start1{0, 5}, end1{5, 6}, rv1{4, 5};
  TwoStages() {
    s0.stage = 0;
    s0.ops = {op_of(OpKind::Gemm, Stream::Compute), op_of(OpKind::Collective, Stream::CommTP),
              op_of(OpKind::Gemm, Stream::Compute), op_of(OpKind::Send, Stream::CommTP)};
    s0.ops[1].group = GroupDim::TP;
    s0.ops[3].peer_delta = 1;
    add_dep(s0, 1, 0);
    add_dep(s0, 2, 1);
    add_dep(s0, 3, 2);
    s1.stage = 1;
    s1.ops = {op_of(OpKind::Recv, Stream::CommTP), op_of(OpKind::Gemm, Stream::Compute)};
    s1.ops[0].peer_delta = -1;
    s1.ops[1].moe_part = MoePart::ExpertGemm;
    add_dep(s1, 1, 0);
  }
  OpTimeline t0() const { return {&s0, start0.data(), end0.data(), rv0.data()}; }
  OpTimeline t1() const { return {&s1, start1.data(), end1.data(), rv1.data()}; }
};

double total(const Breakdown& b) {
  return b.compute_s + b.exposed_comm_total() + b.bubble_s + b.other_s;
}

}  // namespace

TEST_CASE(
    "attribution: a wait for the peer stage is that stage's exposed collective where it was "
    "blocked on one, else bubble") {
  const TwoStages f;
  const OpTimeline peer0 = f.t0();
  const Attribution a = attribute_timeline(
      f.t1(), [&](int d) { return d == -1 ? &peer0 : nullptr; }, 6.0);
  const Breakdown& b = a.breakdown;
  CHECK(b.compute_s == doctest::Approx(1.0));
  CHECK(b.exposed_comm_s[GroupDim::TP] ==
        doctest::Approx(2.0));                // stage 0 waited on its all-reduce in [1,3]
  CHECK(b.bubble_s == doctest::Approx(2.0));  // the rest of [0,4]
  CHECK(b.exposed_comm_s[GroupDim::PP] == doctest::Approx(1.0));  // the transfer itself [4,5]
  CHECK(b.other_s == doctest::Approx(0.0));
  CHECK(total(b) == doctest::Approx(6.0));
  CHECK(a.gemm_busy_s == doctest::Approx(1.0));
  CHECK(a.comm_busy_s == doctest::Approx(1.0));  // the recv from rendezvous (4) to end (5)
}

TEST_CASE(
    "attribution: without a peer timeline the whole wait is bubble, time after the last op is "
    "other") {
  const TwoStages f;
  const Attribution a = attribute_timeline(
      f.t1(), [](int) { return nullptr; }, 7.0);
  CHECK(a.breakdown.bubble_s == doctest::Approx(4.0));
  CHECK(a.breakdown.exposed_comm_s[GroupDim::TP] == 0);
  CHECK(a.breakdown.other_s == doctest::Approx(1.0));
  CHECK(total(a.breakdown) == doctest::Approx(7.0));
}

TEST_CASE("attribution: MoE busy time per part") {
  const TwoStages f;
  double tot = -1;
  const EnumArray<MoePart, double> m = moe_busy(f.t1(), &tot);
  CHECK(m[MoePart::ExpertGemm] == doctest::Approx(1.0));
  CHECK(tot == doctest::Approx(1.0));
  CHECK(m[MoePart::None] == 0);
}

namespace {

/// Each breakdown term of native and SimGrid within `rel` of the larger (terms under 5% of the
/// iteration compared against that floor), and at least one peer wait charged to a collective.
void same_breakdown(const SimResult& rn, const SimResult& rs, double rel) {
  const double floor = 0.05 * rs.iteration_time_s;
  auto close = [&](const char* what, double x, double y) {
    INFO(what << ": native " << x << " vs simgrid " << y);
    CHECK(std::abs(x - y) <= rel * std::max({std::abs(x), std::abs(y), floor}));
  };
  close("iteration", rn.iteration_time_s, rs.iteration_time_s);
  close("compute", rn.breakdown.compute_s, rs.breakdown.compute_s);
  close("bubble", rn.breakdown.bubble_s, rs.breakdown.bubble_s);
  close("other", rn.breakdown.other_s, rs.breakdown.other_s);
  for (GroupDim d : enum_values<GroupDim>())
    close(to_string(d), rn.breakdown.exposed_comm_s[d], rs.breakdown.exposed_comm_s[d]);
  close("gemm busy", rn.gemm_busy_s, rs.gemm_busy_s);
  close("comm busy", rn.comm_busy_s, rs.comm_busy_s);
}

void print(const SimResult& r) {
  std::printf("%-8s iter %.6f compute %.6f bubble %.6f other %.6f |", r.engine.c_str(),
              r.iteration_time_s, r.breakdown.compute_s, r.breakdown.bubble_s, r.breakdown.other_s);
  for (GroupDim d : enum_values<GroupDim>())
    std::printf(" %s %.6f", to_string(d), r.breakdown.exposed_comm_s[d]);
  std::printf("\n");
}

}  // namespace

TEST_CASE(
    "attribution: native and SimGrid give the same breakdown on pipelined tiny-gpt iterations (TP "
    "x PP x DP)") {
  struct Run {
    const char* parallel;
    int nodes, global_batch;
  };
  for (const Run& run : {Run{"tp=4,pp=2", 8, 32}, Run{"tp=2,pp=4", 8, 64}}) {
    ClusterParams p;
    p.name = "fat_tree";
    p.node = "dgx-h100";
    p.nodes = run.nodes;
    p.fabric = "fat_tree";
    p.nodes_per_su = 4;
    p.sets = {"fabric.routing=dmodk"};
    const Cluster c = make_cluster(p);
    const Workload w = load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/tiny-gpt.json",
                                     {"training.global_batch=" + std::to_string(run.global_batch)});
    const Program prog = expand_program(w, resolve_layout(w, run.parallel, c.gpus()));
    REQUIRE(prog.layout.pp > 1);
    const SimCluster sc = sim_cluster(c);
    const CalibrationProfile& prof = default_calibration();
    const SimResult rn = simulate_program(prog, sc, prof);
    const SimResult rs = simulate_program_simgrid(prog, sc, prof);
    INFO(run.parallel);
    std::printf("tiny-gpt %s on %d GPUs\n", run.parallel, c.gpus());
    print(rn);
    print(rs);
    CHECK(rn.breakdown.bubble_s > 0);
    CHECK(rn.breakdown.exposed_comm_s[GroupDim::PP] > 0);
    CHECK(total(rn.breakdown) == doctest::Approx(rn.iteration_time_s).epsilon(1e-9));
    CHECK(total(rs.breakdown) == doctest::Approx(rs.iteration_time_s).epsilon(1e-9));
    same_breakdown(rn, rs, 0.01);
  }
}
