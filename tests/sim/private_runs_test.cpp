// Private runs (engine.cpp, Des::begin_comm): a collective whose flows cross only links that no
// other timeline's flows cross (a tensor-parallel group inside one node) takes the duration of its
// first undisturbed run when it runs alone on those links again. The result must be that of
// simulating every run (ProgramSimOptions::memo_private = false), and a run that would overlap a
// memoised one must send the engine back to simulating every run.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "engine_fixture.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;
using namespace tutti::testing;

namespace {

struct Run {
  SimResult r;
  std::size_t memo = 0;
  int timelines = 0;
};

Run run(const Program& prog, const SimCluster& sc, bool memo, const CalibrationProfile& prof) {
  ProgramSimOptions o;
  o.memo_private = memo;
  Run out;
  o.memo_runs = &out.memo;
  o.replica_timelines = &out.timelines;
  out.r = simulate_program(prog, sc, prof, o);
  return out;
}

void same(const SimResult& a, const SimResult& b) {
  CHECK(a.iteration_time_s == doctest::Approx(b.iteration_time_s).epsilon(1e-9));
  CHECK(a.breakdown.compute_s == doctest::Approx(b.breakdown.compute_s).epsilon(1e-9));
  CHECK(a.breakdown.bubble_s == doctest::Approx(b.breakdown.bubble_s).epsilon(1e-9));
  CHECK(a.breakdown.exposed_comm_total() ==
        doctest::Approx(b.breakdown.exposed_comm_total()).epsilon(1e-9));
  REQUIRE(a.bottleneck_links.size() == b.bottleneck_links.size());
  for (std::size_t i = 0; i < a.bottleneck_links.size(); ++i)
    CHECK(a.bottleneck_links[i].bytes ==
          doctest::Approx(b.bottleneck_links[i].bytes).epsilon(1e-9));
}

Program tiny(const std::string& parallel, int gpus, int global_batch) {
  // 16 heads (tiny-gpt has 12), so that a TP group fills an 8-GPU node: its data-parallel rings
  // then leave the NVLink to it (a DP or DPxCP ring through a node crosses the TP group's links).
  const Workload w = load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/tiny-gpt.json",
                                   {"training.global_batch=" + std::to_string(global_batch),
                                    "model.heads=16", "model.layers=8"});
  return expand_program(w, resolve_layout(w, parallel, gpus));
}

/// `nodes` DGX H100 nodes on a 2:1 fat tree with ECMP routing (collisions set replicas apart).
Cluster dgx_ecmp_2to1(const std::string& name, int nodes) {
  ClusterParams p;
  p.name = name;
  p.node = "dgx-h100";
  p.nodes = nodes;
  p.fabric = "fat_tree";
  p.oversubscription = 2;
  p.sets = {"fabric.routing=ecmp"};
  return make_cluster(p);
}

}  // namespace

TEST_CASE("private runs: ECMP replicas on 1,024 GPUs equal simulating every run") {
  const Cluster c = dgx_ecmp_2to1("private", 128);
  const SimCluster sc = sim_cluster(c);
  const Program prog = tiny("tp=8,pp=4", c.gpus(), 1024);
  const Run memo = run(prog, sc, true, default_calibration());
  const Run every = run(prog, sc, false, default_calibration());
  CHECK(memo.timelines > 1);  // ECMP sets replicas apart: many timelines, each with its TP runs
  CHECK(memo.timelines == every.timelines);
  CHECK(memo.memo > 0);
  CHECK(every.memo == 0);
  same(memo.r, every.r);
}

TEST_CASE("private runs: a DP ring through the node keeps the TP runs simulated") {
  // tp 4 on 8-GPU nodes: two replicas share a node and their data-parallel ring crosses both TP
  // groups' NVLink links, so no link is private and nothing comes from the memo.
  const Cluster c = dgx_ecmp_2to1("shared", 16);
  const SimCluster sc = sim_cluster(c);
  const Program prog = tiny("tp=4,pp=4", c.gpus(), 64);
  const Run memo = run(prog, sc, true, default_calibration());
  CHECK(memo.memo == 0);
  same(memo.r, run(prog, sc, false, default_calibration()).r);
}

TEST_CASE("private runs: d-mod-k, pipeline with TP all-reduces, equal simulating every run") {
  auto topo = std::make_shared<TestFatTree>(2, 2, 8, 2, 50e9, 450e9, 50e9, 1e-6);
  const SimCluster sc = make_sim_cluster(topo);
  const Program prog = pipeline_program(4, 8, 8, 64e6, 32e6, 4096, 1);
  const Run memo = run(prog, sc, true, default_calibration());
  const Run every = run(prog, sc, false, default_calibration());
  CHECK(memo.memo > 0);
  same(memo.r, every.r);
}

TEST_CASE("private runs: a run beside a memoised one sends the engine back to every run") {
  // One stage of 8 GPUs in one node: three TP all-reduces in a chain (the first is paced, the
  // second learns that it may run unpaced, the third is taken from the memo), and, with `side`,
  // a fourth that begins after a short kernel that follows the second: beside the third.
  auto topo = std::make_shared<TestFatTree>(1, 1, 8, 1, 50e9, 450e9, 50e9, 1e-6);
  const SimCluster sc = make_sim_cluster(topo);
  auto program = [](bool side) {
    Program prog = small_program(8, 1);
    const auto nm = prog.intern("tp_ar");
    RankClass rc;
    rc.stage = 0;
    rc.multiplicity = 8;
    auto add = [&](Op op, std::vector<std::uint32_t> deps) {
      op.name = nm;
      op.dep_begin = static_cast<std::uint32_t>(rc.deps.size());
      op.dep_count = static_cast<std::uint32_t>(deps.size());
      rc.deps.insert(rc.deps.end(), deps.begin(), deps.end());
      rc.ops.push_back(op);
      return static_cast<std::uint32_t>(rc.ops.size() - 1);
    };
    auto ar = [](Stream stream, double bytes) {
      Op op;
      op.kind = OpKind::Collective;
      op.stream = stream;
      op.coll = Coll::AllReduce;
      op.group = GroupDim::TP;
      op.group_size = 8;
      op.bytes = bytes;
      return op;
    };
    const std::uint32_t a = add(ar(Stream::CommTP, 64e6), {});
    const std::uint32_t b = add(ar(Stream::CommTP, 64e6), {a});
    add(ar(Stream::CommTP, 64e6), {b});
    if (side) {
      Op k;
      k.kind = OpKind::MemBound;
      k.bytes = 1e6;
      const std::uint32_t m = add(k, {b});
      add(ar(Stream::CommDP, 16e6), {m});
    }
    prog.classes.push_back(std::move(rc));
    return prog;
  };
  const Run lone = run(program(false), sc, true, default_calibration());
  CHECK(lone.memo == 1);  // the third all-reduce, alone on the NVLink, came from the memo
  same(lone.r, run(program(false), sc, false, default_calibration()).r);
  const Run memo = run(program(true), sc, true, default_calibration());
  const Run every = run(program(true), sc, false, default_calibration());
  CHECK(memo.memo == 0);  // the fourth began beside the memoised third: every run simulated
  same(memo.r, every.r);
}
