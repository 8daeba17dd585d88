// The rail quotient (engine.cpp, Des::quotient_rails): where the traffic between nodes and the
// links it crosses map onto themselves when every GPU is replaced by the next GPU of its node,
// only the flows from each node's first GPU are simulated and the links every rail shares get
// 1/(GPUs per node) of their capacity. The result must be that of simulating every rail
// (ProgramSimOptions::quotient_rails = false); where a check fails (ECMP hashing, a failed cable,
// a plan routed during the run that crosses the quotient's links) every rail is simulated.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "engine_fixture.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"
#include "tutti/topologies/failures.hpp"

using namespace tutti;
using namespace tutti::testing;

namespace {

struct Run {
  SimResult r;
  std::size_t images = 0;
};

Run run(const Program& prog, const SimCluster& sc, bool rails) {
  ProgramSimOptions o;
  o.quotient_rails = rails;
  Run out;
  o.rail_images = &out.images;
  out.r = simulate_program(prog, sc, default_calibration(), o);
  return out;
}

void same(const SimResult& a, const SimResult& b) {
  CHECK(a.iteration_time_s == doctest::Approx(b.iteration_time_s).epsilon(1e-12));
  CHECK(a.breakdown.bubble_s == doctest::Approx(b.breakdown.bubble_s).epsilon(1e-9));
  CHECK(a.breakdown.exposed_comm_total() ==
        doctest::Approx(b.breakdown.exposed_comm_total()).epsilon(1e-9));
  REQUIRE(a.bottleneck_links.size() == b.bottleneck_links.size());
  for (std::size_t i = 0; i < a.bottleneck_links.size(); ++i) {
    CHECK(a.bottleneck_links[i].link == b.bottleneck_links[i].link);
    CHECK(a.bottleneck_links[i].bytes ==
          doctest::Approx(b.bottleneck_links[i].bytes).epsilon(1e-12));
  }
}

/// Llama 3 8B cut to 8 layers (a few ms of CPU per run).
Program llama(const std::string& parallel, int gpus, int global_batch) {
  const Workload w =
      load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/llama3-8b.json",
                    {"training.global_batch=" + std::to_string(global_batch), "model.layers=8"});
  return expand_program(w, resolve_layout(w, parallel, gpus));
}

/// `nodes` DGX H100 on a rail-optimized fabric of `tiers` tiers, 8 nodes per scalable unit: with
/// 3 tiers the spine-to-core bundles carry every rail (the quotient gives them 1/8 of their
/// capacity).
Cluster cluster(int tiers, double oversub, const std::string& routing, int nodes) {
  ClusterParams p;
  p.name = "rails-" + routing;
  p.node = "dgx-h100";
  p.nodes = nodes;
  p.fabric = "rail_optimized";
  p.oversubscription = oversub;
  p.nodes_per_su = 8;
  p.sets = {"fabric.routing=" + routing, "fabric.tiers=" + std::to_string(tiers)};
  return make_cluster(p);
}

/// Two stages of one 8-GPU node each: a pipeline transfer of 64 MB from every GPU of stage 0 to
/// its peer, and with `across` a collective between the stages (GroupDim::PP) after it.
Program two_stage(bool across) {
  Program prog = small_program(8, 2);
  const auto nm = prog.intern("p");
  for (int stage = 0; stage < 2; ++stage) {
    RankClass rc;
    rc.stage = stage;
    rc.multiplicity = 8;
    Op gemm;
    gemm.kind = OpKind::MemBound;
    gemm.bytes = 1e6;
    gemm.name = nm;
    rc.ops.push_back(gemm);
    Op p2p;
    p2p.kind = stage == 0 ? OpKind::Send : OpKind::Recv;
    p2p.stream = Stream::CommPP;
    p2p.peer_delta = static_cast<std::int16_t>(stage == 0 ? 1 : -1);
    p2p.tag = 1;
    p2p.bytes = 64e6;
    p2p.name = nm;
    p2p.dep_begin = static_cast<std::uint32_t>(rc.deps.size());
    p2p.dep_count = 1;
    rc.deps.push_back(0);
    rc.ops.push_back(p2p);
    if (across) {
      Op ar;
      ar.kind = OpKind::Collective;
      ar.stream = Stream::CommDP;
      ar.coll = Coll::AllReduce;
      ar.group = GroupDim::PP;
      ar.group_size = 2;
      ar.bytes = 32e6;
      ar.name = prog.intern("embedding_sync");
      ar.dep_begin = static_cast<std::uint32_t>(rc.deps.size());
      ar.dep_count = 1;
      rc.deps.push_back(1);
      rc.ops.push_back(ar);
    }
    prog.classes.push_back(std::move(rc));
  }
  return prog;
}

}  // namespace

TEST_CASE("rail quotient: spraying, adaptive and d-mod-k routing equal simulating every rail") {
  // 64 DGX H100 (512 GPUs) in 8 scalable units of 8: the pipeline transfers and data-parallel
  // rings cross the spines (and with 3 tiers the cores, over links every rail shares); 2:1 makes
  // them contend there.
  for (int tiers : {2, 3})
    for (double oversub : {1.0, 2.0})
      for (const char* routing : {"spray", "adaptive", "dmodk"}) {
        CAPTURE(tiers);
        CAPTURE(oversub);
        CAPTURE(routing);
        const Cluster c = cluster(tiers, oversub, routing, 64);
        const SimCluster sc = sim_cluster(c);
        const Program prog = llama("tp=8,pp=4,mb=1", c.gpus(), 256);
        const Run q = run(prog, sc, true);
        const Run every = run(prog, sc, false);
        // Applied: 7 of 8 flows between nodes left to symmetry. (d-mod-k on 3 tiers sends a
        // flow's image through another core: orbits of neither 1 nor 8 links, so it does not.)
        if (tiers == 2 || std::string(routing) != "dmodk") CHECK(q.images > 0);
        CHECK(every.images == 0);
        same(q.r, every.r);
      }
}

TEST_CASE("rail quotient: tensor parallelism of 4 (rings through two GPUs of a node) falls back") {
  // Two tensor-parallel groups per node: a data-parallel ring passes through GPUs 0 and 4 of a
  // node, and that hop inside the node (NVLink, loaded by the TP groups {0-3} and {4-7}, which the
  // next-GPU map does not preserve) paces its group. Dropping the images here read 0.08% long.
  const Cluster c = cluster(3, 2.0, "spray", 32);
  const SimCluster sc = sim_cluster(c);
  const Program prog = llama("tp=4,pp=2,mb=1", c.gpus(), 256);
  const Run q = run(prog, sc, true);
  CHECK(q.images == 0);
  same(q.r, run(prog, sc, false).r);
}

TEST_CASE("rail quotient: ECMP hashing and a failed cable leave every rail simulated") {
  {
    const Cluster c = cluster(2, 2.0, "ecmp", 64);
    const SimCluster sc = sim_cluster(c);
    const Program prog = llama("tp=8,pp=4,mb=1", c.gpus(), 256);
    const Run q = run(prog, sc, true);
    CHECK(q.images == 0);  // a flow and its image hash onto unrelated paths
    same(q.r, run(prog, sc, false).r);
  }
  {
    Cluster c = cluster(2, 2.0, "dmodk", 64);
    FailureRequest fr;
    fr.items = {"link=leaf0-spine0#0"};
    apply_failures(c, fr);
    const SimCluster sc = sim_cluster(c);
    const Program prog = llama("tp=8,pp=4,mb=1", c.gpus(), 256);
    const Run q = run(prog, sc, true);
    CHECK(q.images == 0);  // rail 0's leaf lost a cable its images' leaves still have
    same(q.r, run(prog, sc, false).r);
  }
}

TEST_CASE("rail quotient: a link every rail shares gets 1/8 of its capacity") {
  // One spine: the 8 transfers between the two leaves share the leaf-spine links (which the
  // next-GPU map leaves in place), each at 1/8 of it; in the quotient GPU 0's transfer alone has
  // 1/8 of the link.
  auto topo = std::make_shared<TestFatTree>(2, 1, 8, 1, 50e9, 450e9, 50e9, 1e-6);
  const SimCluster sc = make_sim_cluster(topo);
  const Run q = run(two_stage(false), sc, true);
  CHECK(q.images == 7);
  const Run every = run(two_stage(false), sc, false);
  same(q.r, every.r);
  // The transfer: 64 MB at 50/8 GB/s, over the default calibration's bandwidth efficiency (0.94)
  // and latencies; at 50/4 GB/s it would take half as long.
  CHECK(every.r.iteration_time_s > 64e6 / (50e9 / 8));
  CHECK(every.r.iteration_time_s < 64e6 / (50e9 / 8) * 1.1);
}

TEST_CASE("rail quotient: a plan routed during the run across its links restarts every rail") {
  // Two stages of one 8-GPU node each, on two leaves and 8 spines (d-mod-k: spine = destination
  // mod 8, so rails map onto rails): a pipeline transfer, routed before the run, lets the quotient
  // apply; a collective between the stages (GroupDim::PP) is routed when it starts and crosses
  // the same leaf-spine links, so the run starts again with every rail.
  auto topo = std::make_shared<TestFatTree>(2, 1, 8, 8, 50e9, 450e9, 50e9, 1e-6);
  const SimCluster sc = make_sim_cluster(topo);
  const Run lone = run(two_stage(false), sc, true);
  CHECK(lone.images == 7);  // the transfer's flows from GPUs 1-7 mirror GPU 0's
  same(lone.r, run(two_stage(false), sc, false).r);
  const Run both = run(two_stage(true), sc, true);
  CHECK(both.images == 0);  // the collective between stages broke it: every rail simulated
  same(both.r, run(two_stage(true), sc, false).r);
  CHECK(both.r.iteration_time_s > lone.r.iteration_time_s);
}
