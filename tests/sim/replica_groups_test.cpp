// Replica groups (engine.cpp, replica_groups): the native engine runs one timeline per group of
// data-parallel replicas that meet the same link loads; the result must be the per-replica
// simulation's (ProgramSimOptions::per_replica), at thousands of GPUs, with ECMP collisions.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

struct Run {
  SimResult r;
  int timelines = 0;
};

Run run(const Program& prog, const SimCluster& sc, bool per_replica, bool strict = false) {
  ProgramSimOptions o;
  o.per_replica = per_replica;
  o.strict_replica_groups = strict;
  Run out;
  o.replica_timelines = &out.timelines;
  out.r = simulate_program(prog, sc, default_calibration(), o);
  return out;
}

struct Case {
  Program prog;
  Cluster cluster;
};

Case make_case(const std::string& routing, int nodes, double oversub, const std::string& parallel,
               int global_batch) {
  ClusterParams p;
  p.name = "replicas";
  p.node = "dgx-h100";
  p.nodes = nodes;
  p.fabric = "fat_tree";
  p.oversubscription = oversub;
  p.sets = {"fabric.routing=" + routing};
  Cluster c = make_cluster(p);
  const Workload w = load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/tiny-gpt.json",
                                   {"training.global_batch=" + std::to_string(global_batch)});
  const Layout l = resolve_layout(w, parallel, c.gpus());
  return {expand_program(w, l), std::move(c)};
}

void same(const SimResult& a, const SimResult& b) {
  // Equal up to the rounding of the incremental max-min solver (network_test: 1e-9 relative).
  CHECK(a.iteration_time_s == doctest::Approx(b.iteration_time_s).epsilon(1e-9));
  CHECK(a.mfu == doctest::Approx(b.mfu).epsilon(1e-9));
  CHECK(a.breakdown.compute_s == doctest::Approx(b.breakdown.compute_s).epsilon(1e-9));
  CHECK(a.breakdown.bubble_s == doctest::Approx(b.breakdown.bubble_s).epsilon(1e-9));
  CHECK(a.breakdown.exposed_comm_total() ==
        doctest::Approx(b.breakdown.exposed_comm_total()).epsilon(1e-9));
}

}  // namespace

TEST_CASE(
    "replica groups: ECMP on 8,192 GPUs (2:1), grouped timelines equal the per-replica "
    "simulation") {
  const Case k = make_case("ecmp", 1024, 2, "tp=4,pp=4", 8192);
  const SimCluster sc = sim_cluster(k.cluster);
  const Run g = run(k.prog, sc, false), each = run(k.prog, sc, true);
  std::printf(
      "8,192 GPUs ECMP 2:1 tp4 pp4 dp%d: grouped %d timelines per class %.9e s, per replica %d: "
      "%.9e s\n",
      k.prog.layout.dp, g.timelines, g.r.iteration_time_s, each.timelines, each.r.iteration_time_s);
  CHECK(each.timelines == k.prog.layout.dp);
  CHECK(g.timelines >
        1);  // ECMP collisions set replicas apart: one lock-stepped class would not be exact
  CHECK(g.r.approximations.empty());  // one timeline per replica: nothing approximated
  same(g.r, each.r);
}

TEST_CASE(
    "replica groups: d-mod-k routing on 8,192 GPUs (1:1): one timeline, and the strict grouping "
    "agrees") {
  // Every replica's transfers meet the same loads: one timeline per class. The strict grouping,
  // which also refines by the DP collectives' flows (they cross the transfers' links at different
  // places for different replicas), sets replicas apart; all three give the same iteration.
  const Case k = make_case("dmodk", 1024, 1, "tp=4,pp=4", 8192);
  const SimCluster sc = sim_cluster(k.cluster);
  const Run g = run(k.prog, sc, false), strict = run(k.prog, sc, false, true),
            each = run(k.prog, sc, true);
  std::printf(
      "8,192 GPUs d-mod-k 1:1: %d timelines (strict %d of %d): %.12e s, per replica %.12e s\n",
      g.timelines, strict.timelines, k.prog.layout.dp, g.r.iteration_time_s,
      each.r.iteration_time_s);
  CHECK(g.timelines == 1);
  CHECK(strict.timelines > 1);
  CHECK(strict.timelines < k.prog.layout.dp);
  // The default groups leave out the DP collectives' flows, and the result says so (strict: not).
  REQUIRE(g.r.approximations.size() == 1);
  CHECK(g.r.approximations[0].find("there would be " + std::to_string(strict.timelines)) !=
        std::string::npos);
  CHECK(strict.r.approximations.empty());
  same(g.r, each.r);
  same(strict.r, each.r);
}

TEST_CASE(
    "replica groups: adaptive routing on 2,048 GPUs, balanced bundles group the replicas, equal to "
    "the per-replica simulation") {
  // Adaptive routing spreads every flow over all cables of each tier (Topology::link_bundle): on a
  // 1:1 fat-tree (32 NICs per leaf, whole nodes) each replica's transfers meet the same bundle
  // loads, so colour refinement puts them in one timeline, as under d-mod-k, where ECMP's
  // collisions set them apart. On the 2:1 fat-tree (42 NICs per leaf: nodes straddle leaves)
  // replicas do differ, and the groups are still exact.
  for (const double oversub : {1.0, 2.0}) {
    const Case k = make_case("adaptive", 256, oversub, "tp=4,pp=4", 2048);
    const Case e = make_case("ecmp", 256, oversub, "tp=4,pp=4", 2048);
    const SimCluster sc = sim_cluster(k.cluster), se = sim_cluster(e.cluster);
    const Run g = run(k.prog, sc, false), each = run(k.prog, sc, true),
              ecmp = run(e.prog, se, false);
    std::printf(
        "2,048 GPUs adaptive %g:1 tp4 pp4 dp%d: grouped %d timelines %.12e s, per replica %d: "
        "%.12e s; ECMP %d timelines %.12e s\n",
        oversub, k.prog.layout.dp, g.timelines, g.r.iteration_time_s, each.timelines,
        each.r.iteration_time_s, ecmp.timelines, ecmp.r.iteration_time_s);
    CHECK(each.timelines == k.prog.layout.dp);
    CHECK(g.timelines < ecmp.timelines);
    if (oversub == 1.0) CHECK(g.timelines == 1);
    same(g.r, each.r);
    // Balanced at every tier, the iteration is no longer than under ECMP's collisions.
    CHECK(g.r.iteration_time_s <= ecmp.r.iteration_time_s * (1 + 1e-9));
  }
}
