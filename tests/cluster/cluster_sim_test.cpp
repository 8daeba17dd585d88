// The cluster simulator: schedulers, placement, interference, failures, accounting, determinism.
#include "tutti/cluster/cluster_sim.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

// 8 DGX H100 on 2 leaves (4 nodes each), 32 NICs per leaf, 8:1 oversubscribed (4 uplinks each) so
// rings of two jobs that cross leaves must share uplinks.
const Cluster& small_cluster() {
  static Cluster c = load_cluster(testing::src("topologies/h100-64gpu-fattree.json"),
                                  {"fabric.oversubscription=8", "fabric.leaf_down_ports=32"});
  return c;
}

JobSpec job(const std::string& id, double submit, int gpus, double dur, double wall = 0,
            double comm = 0) {
  JobSpec j;
  j.id = id;
  j.submit_s = submit;
  j.gpus = gpus;
  j.work.duration_s = dur;
  j.work.comm_fraction = comm;
  j.walltime_s = wall;
  return j;
}

JobList list(std::vector<JobSpec> jobs) {
  JobList l;
  l.file = "test";
  l.users = {"u"};
  l.teams = {"t"};
  l.jobs = std::move(jobs);
  return l;
}

ClusterSimOptions quiet(SchedulerKind s, PlacementKind p) {
  ClusterSimOptions o;
  o.scheduler = s;
  o.placement = p;
  o.failures = false;
  return o;
}

const JobOutcome& outcome(const ClusterResult& r, const std::string& id) {
  for (const auto& o : r.outcomes)
    if (o.id == id) return o;
  FAIL("no job " << id);
  return r.outcomes.front();
}

}  // namespace

TEST_CASE(
    "EASY backfill starts small jobs in the head's shadow without delaying it and FIFO does not") {
  // 64 GPUs. A holds 48 for 2 h; B wants all 64 (starts at 2 h); C, D (8 GPUs, 1 h) fit beside A.
  JobList l = list({job("A", 0, 48, 7200, 7200), job("B", 1, 64, 3600, 3600),
                    job("C", 2, 8, 3600, 3600), job("D", 3, 8, 3600, 3600)});
  ClusterResult fifo =
      simulate_cluster(small_cluster(), l, quiet(SchedulerKind::Fifo, PlacementKind::Packed));
  ClusterResult easy =
      simulate_cluster(small_cluster(), l, quiet(SchedulerKind::Easy, PlacementKind::Packed));
  ClusterResult cons = simulate_cluster(small_cluster(), l,
                                        quiet(SchedulerKind::Conservative, PlacementKind::Packed));
  CHECK(outcome(fifo, "B").start_s == doctest::Approx(7200));
  CHECK(outcome(easy, "B").start_s == doctest::Approx(7200));  // the head is not delayed
  CHECK(outcome(cons, "B").start_s == doctest::Approx(7200));
  CHECK(outcome(fifo, "C").start_s == doctest::Approx(7200 + 3600));
  CHECK(outcome(easy, "C").start_s == doctest::Approx(2));
  CHECK(outcome(cons, "D").start_s == doctest::Approx(3));
  CHECK(easy.wait_s.mean < fifo.wait_s.mean);
  CHECK(easy.makespan_s < fifo.makespan_s);
  // FIFO's idle GPUs while B waits are queue-head blocking.
  CHECK(fifo.idle.head_blocking == doctest::Approx(16 * 7200 / 3600.0).epsilon(0.01));
  CHECK(easy.idle.head_blocking < fifo.idle.head_blocking);
}

TEST_CASE(
    "EASY does not backfill a job that would delay the head and gang preempts lower priority") {
  JobList l = list({job("A", 0, 48, 7200, 7200), job("B", 1, 64, 3600, 3600),
                    job("long", 2, 8, 3 * 3600, 3 * 3600)});
  ClusterResult easy =
      simulate_cluster(small_cluster(), l, quiet(SchedulerKind::Easy, PlacementKind::Packed));
  // "long" would end after B's reservation and B needs every GPU: it waits behind B.
  CHECK(outcome(easy, "long").start_s == doctest::Approx(7200 + 3600));
  l.jobs[1].priority = 5;
  ClusterResult gang =
      simulate_cluster(small_cluster(), l, quiet(SchedulerKind::Gang, PlacementKind::Packed));
  CHECK(outcome(gang, "B").start_s == doctest::Approx(1));
  CHECK(outcome(gang, "A").preemptions == 1);
  CHECK(gang.preemptions >= 1);
  CHECK(gang.idle.preemption >
        0);  // A loses the work since its last checkpoint (none: no failures)
}

TEST_CASE("two jobs sharing a spine slow down while the same jobs on disjoint leaves do not") {
  JobList l = list({job("A", 0, 16, 3600, 0, 0.8), job("B", 0, 16, 3600, 0, 0.8)});
  ClusterResult spread =
      simulate_cluster(small_cluster(), l, quiet(SchedulerKind::Fifo, PlacementKind::Spread));
  ClusterResult topo =
      simulate_cluster(small_cluster(), l, quiet(SchedulerKind::Fifo, PlacementKind::Topology));
  // Spread puts each job on both leaves (its ring crosses the uplinks); topology keeps each on one.
  CHECK(outcome(spread, "A").groups == 2);
  CHECK(outcome(topo, "A").groups == 1);
  CHECK(outcome(topo, "B").groups == 1);
  CHECK(outcome(spread, "A").slowdown > 1.2);
  CHECK(outcome(spread, "B").slowdown > 1.2);
  CHECK(outcome(topo, "A").slowdown == 1.0);
  CHECK(outcome(topo, "B").slowdown == 1.0);
  CHECK(outcome(spread, "A").jct_s > outcome(topo, "A").jct_s * 1.2);
  CHECK(spread.idle.interference > 0);
  CHECK(topo.idle.interference == 0);
  // Alone, a job crossing the spine is not slowed by itself.
  ClusterResult alone = simulate_cluster(small_cluster(), list({job("A", 0, 16, 3600, 0, 0.8)}),
                                         quiet(SchedulerKind::Fifo, PlacementKind::Spread));
  CHECK(outcome(alone, "A").groups == 2);
  CHECK(outcome(alone, "A").slowdown == 1.0);
  // Without interference the stretch is gone.
  ClusterSimOptions o = quiet(SchedulerKind::Fifo, PlacementKind::Spread);
  o.interference = false;
  CHECK(outcome(simulate_cluster(small_cluster(), l, o), "A").slowdown == 1.0);
}

TEST_CASE("under packet spraying two jobs sharing the uplinks slow down no more than under ECMP") {
  // Spraying: each ring flow spreads over the 4 uplinks of its leaf (one flow over the bundle,
  // Topology::link_bundle): the link sharing counts the bundle as 4 cables, so the jobs share
  // the uplinks evenly instead of colliding on hashed ones.
  static const Cluster sprayed = load_cluster(
      testing::src("topologies/h100-64gpu-fattree.json"),
      {"fabric.oversubscription=8", "fabric.leaf_down_ports=32", "fabric.routing=spray"});
  JobList l = list({job("A", 0, 16, 3600, 0, 0.8), job("B", 0, 16, 3600, 0, 0.8)});
  const ClusterSimOptions o = quiet(SchedulerKind::Fifo, PlacementKind::Spread);
  const ClusterResult ecmp = simulate_cluster(small_cluster(), l, o);
  const ClusterResult spray = simulate_cluster(sprayed, l, o);
  for (const char* id : {"A", "B"}) {
    INFO(std::string(id) << ": ECMP slowdown " << outcome(ecmp, id).slowdown << ", spray "
                         << outcome(spray, id).slowdown);
    CHECK(outcome(spray, id).groups == 2);
    CHECK(outcome(spray, id).slowdown > 1.0);  // 8:1: the uplinks are still too few
    CHECK(outcome(spray, id).slowdown <= outcome(ecmp, id).slowdown * (1 + 1e-9));
  }
  const ClusterResult alone = simulate_cluster(sprayed, list({job("A", 0, 16, 3600, 0, 0.8)}), o);
  CHECK(outcome(alone, "A").slowdown == 1.0);
}

TEST_CASE("topology-aware GPU placement avoids fragmenting nodes that packed first-fit splits") {
  // GPU allocation on 8 nodes: 4-GPU jobs and a later 8-GPU job per node.
  std::vector<JobSpec> js;
  for (int i = 0; i < 8; ++i)
    js.push_back(job("small" + std::to_string(i), i, 4, 4 * 3600.0, 4 * 3600.0));
  for (int i = 0; i < 4; ++i) js.push_back(job("s2-" + std::to_string(i), 100 + i, 4, 600, 600));
  js.push_back(job("wide", 200, 16, 3600, 3600));
  ClusterSimOptions o = quiet(SchedulerKind::Fifo, PlacementKind::Spread);
  o.alloc = AllocUnit::Gpu;
  ClusterResult spread = simulate_cluster(small_cluster(), list(js), o);
  o.placement = PlacementKind::Topology;
  ClusterResult topo = simulate_cluster(small_cluster(), list(js), o);
  // Spread puts one small job per node (no whole node left for "wide"); best-fit pairs them on
  // nodes 0-3, the short ones on 4-5, and leaves 6-7 whole.
  CHECK(outcome(topo, "wide").start_s == doctest::Approx(200));
  CHECK(outcome(spread, "wide").start_s > 3600);
  CHECK(spread.idle.fragmentation > topo.idle.fragmentation);
}

TEST_CASE(
    "accounting: GPU-hours add up, utilisation and goodput are consistent, output is "
    "deterministic") {
  JobList l = synthetic_jobs(parse_synthetic("jobs=300,span=3d,max_gpus=32,median=2h,users=5"), 3);
  ClusterSimOptions o;  // easy + topology + node allocation + failures on
  o.seed = 11;
  o.repair_s = 3600;
  o.reliability_profile = "llama3";
  ClusterResult r = simulate_cluster(small_cluster(), l, o);
  CHECK(r.completed == 300);
  // Every GPU-hour of the makespan is useful work or one of the idle/lost causes.
  CHECK(r.useful_gpu_hours + r.idle.total() == doctest::Approx(r.gpu_hours).epsilon(0.01));
  CHECK(r.allocated_utilization >= r.busy_utilization);
  CHECK(r.goodput == doctest::Approx(r.useful_gpu_hours / r.allocated_gpu_hours));
  CHECK(r.wait_s.p50 <= r.wait_s.p90);
  CHECK(r.wait_s.p90 <= r.wait_s.p99);
  CHECK(r.energy_J > 0);
  CHECK(r.cost_usd > r.energy_cost_usd);
  CHECK(r.users.size() == 5);
  ClusterResult again = simulate_cluster(small_cluster(), l, o);
  CHECK(to_json(again).dump() == to_json(r).dump());
  // The llama3 profile on 64 GPUs fails a node every few days: over 3+ days some failures occur
  // for some seed; they cost restarts and lost work.
  o.reliability_profile = "llama3";
  o.seed = 5;
  o.repair_s = 4 * 3600;
  ClusterResult f = simulate_cluster(small_cluster(), l, o);
  if (f.failures > 0) CHECK(f.idle.failures > 0);
  ClusterSimOptions nf = o;
  nf.failures = false;
  CHECK(simulate_cluster(small_cluster(), l, nf).failures == 0);
}

TEST_CASE("a job larger than the cluster is an input error naming it and its line") {
  JobList l = list({job("huge", 0, 128, 10)});
  l.jobs[0].line = 7;
  try {
    simulate_cluster(small_cluster(), l, quiet(SchedulerKind::Fifo, PlacementKind::Packed));
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("test: line 7") != std::string::npos);
    CHECK(std::string(e.what()).find("128 GPUs") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_scheduler("lifo"), InputError);
  CHECK(parse_scheduler("easy") == SchedulerKind::Easy);
  CHECK(parse_placement("topology") == PlacementKind::Topology);
}

TEST_CASE("workload jobs are timed by tutti's engine for the placement they got") {
  JobList l = load_jobs(testing::src("tests/data/cluster/jobs-small.json"));
  ClusterSimOptions o;
  o.failures = false;
  ClusterResult r = simulate_cluster(small_cluster(), l, o);
  const JobOutcome& a = outcome(r, "pretrain-a");
  CHECK(a.gpus == 16);
  CHECK(a.solo_s > 0);
  CHECK(r.runtime_cache_entries >= 1);
  // Native engine on a cross-leaf placement of an all-reduce-heavy job is slower than in-leaf.
  JobList one = l;
  one.jobs.assign(1, l.jobs[4]);  // tiny, dp=16
  one.jobs[0].submit_s = 0;
  ClusterSimOptions n = quiet(SchedulerKind::Fifo, PlacementKind::Topology);
  n.engine = "native";
  ClusterResult in_leaf = simulate_cluster(small_cluster(), one, n);
  n.placement = PlacementKind::Spread;
  ClusterResult cross = simulate_cluster(small_cluster(), one, n);
  CHECK(outcome(in_leaf, "tiny").groups == 1);
  CHECK(outcome(cross, "tiny").groups == 2);
  CHECK(outcome(cross, "tiny").solo_s >= outcome(in_leaf, "tiny").solo_s);
}

TEST_CASE("fair share: a light user's job overtakes a heavy user's queue") {
  // heavy has used the whole cluster for an hour; light submits after heavy's next jobs.
  JobList l = list({job("h0", 0, 64, 3600, 3600), job("h1", 10, 64, 3600, 3600),
                    job("h2", 11, 64, 3600, 3600), job("l0", 20, 64, 3600, 3600)});
  l.users = {"heavy", "light"};
  l.jobs[3].user = 1;
  ClusterResult fifo =
      simulate_cluster(small_cluster(), l, quiet(SchedulerKind::Easy, PlacementKind::Packed));
  ClusterResult fair =
      simulate_cluster(small_cluster(), l, quiet(SchedulerKind::FairShare, PlacementKind::Packed));
  CHECK(outcome(fifo, "l0").start_s == doctest::Approx(3 * 3600));  // behind h1, h2
  CHECK(outcome(fair, "l0").start_s == doctest::Approx(3600));      // heavy's usage puts it first
  CHECK(outcome(fair, "h1").start_s == doctest::Approx(2 * 3600));
  REQUIRE(fair.users.size() == 2);
  CHECK(fair.users[1].wait_s.p50 < fifo.users[1].wait_s.p50);
}

TEST_CASE("topology-aware placement keeps a job in one leaf where packed first-fit splits it") {
  // Nodes 1 and 3 free up on leaf 0 while leaf 1 (nodes 4-7) is empty; a 3-node job arrives.
  JobList l =
      list({job("n0", 0, 8, 36000, 36000), job("n1", 0, 8, 100, 100), job("n2", 0, 8, 36000, 36000),
            job("n3", 0, 8, 100, 100), job("wide", 200, 24, 3600, 3600, 0.5)});
  ClusterResult packed =
      simulate_cluster(small_cluster(), l, quiet(SchedulerKind::Fifo, PlacementKind::Packed));
  ClusterResult topo =
      simulate_cluster(small_cluster(), l, quiet(SchedulerKind::Fifo, PlacementKind::Topology));
  CHECK(outcome(packed, "wide").groups == 2);  // nodes 1, 3, 4
  CHECK(outcome(topo, "wide").groups == 1);    // nodes 4, 5, 6
}

TEST_CASE(
    "elastic jobs grow into idle GPUs, shrink for the queue head, stay in their range and finish "
    "earlier") {
  // 64 GPUs. E (16 GPUs for 4 h nominal, elastic 8..40) beside A (16 GPUs, 2 h); R (32 GPUs, 1 h)
  // at 1 h. Rigid: E ends at 4 h. Elastic: E works on 40 GPUs for 1 h (40 GPU-h), shrinks to 16 for
  // R (16 GPU-h), regrows to 40 at 2 h for the last 8 GPU-h: ends at 2.2 h; R is not delayed.
  JobSpec e = job("E", 0, 16, 4 * 3600.0, 5 * 3600.0);
  e.min_gpus = 8;
  e.max_gpus = 40;
  JobList l = list({e, job("A", 0, 16, 2 * 3600.0, 2 * 3600.0), job("R", 3600, 32, 3600, 3600)});
  for (AllocUnit alloc : {AllocUnit::Gpu, AllocUnit::Node}) {
    CAPTURE(to_string(alloc));
    ClusterSimOptions o = quiet(SchedulerKind::Easy, PlacementKind::Packed);
    o.alloc = alloc;
    ClusterResult rigid = simulate_cluster(small_cluster(), l, o);
    o.elastic = true;
    ClusterResult el = simulate_cluster(small_cluster(), l, o);
    CHECK(outcome(rigid, "E").end_s == doctest::Approx(4 * 3600.0));
    CHECK(outcome(rigid, "E").resizes == 0);
    CHECK(outcome(rigid, "E").min_gpus_used == 0);
    CHECK(outcome(el, "E").end_s == doctest::Approx(2.2 * 3600.0));
    CHECK(outcome(el, "R").start_s == doctest::Approx(3600));  // the rigid job is not delayed
    CHECK(outcome(el, "E").min_gpus_used >= 8);
    CHECK(outcome(el, "E").max_gpus_used ==
          40);                             // never above its maximum, though 48 GPUs were free
    CHECK(outcome(el, "E").resizes >= 3);  // grow, shrink for R, regrow
    CHECK(outcome(el, "E").gpus == 16);
    CHECK(el.makespan_s < rigid.makespan_s);
    CHECK(el.busy_utilization > rigid.busy_utilization);
    CHECK(el.useful_gpu_hours == doctest::Approx(rigid.useful_gpu_hours));  // work conserved
    CHECK(el.resizes > 0);
    CHECK(el.idle.total() + el.useful_gpu_hours == doctest::Approx(el.gpu_hours).epsilon(1e-6));
  }
}

TEST_CASE("elastic: a job never runs below its minimum, a head that would need that waits") {
  // E (32 GPUs for 2 h nominal = 64 GPU-h, elastic 24..64) starts beside B (8 GPUs, 1 h) and grows
  // to 56. R (48 GPUs) at 10 min: E could give back only 56 - 24 = 32, so R waits; at 1 h B ends,
  // 8 free + 32 is still < 48, so E grows to 64 instead and ends at 1 h + 8/64 h; then R starts.
  JobSpec e = job("E", 0, 32, 2 * 3600.0, 3 * 3600.0);
  e.min_gpus = 24;
  e.max_gpus = 64;
  JobList l = list({e, job("B", 0, 8, 3600, 3600), job("R", 600, 48, 3600, 3600)});
  ClusterSimOptions o = quiet(SchedulerKind::Fifo, PlacementKind::Packed);
  o.alloc = AllocUnit::Gpu;
  o.elastic = true;
  ClusterResult r = simulate_cluster(small_cluster(), l, o);
  CHECK(outcome(r, "E").min_gpus_used == 24);  // its start, before it grows
  CHECK(outcome(r, "E").max_gpus_used == 64);
  CHECK(outcome(r, "E").end_s == doctest::Approx(3600 + 3600 / 8.0));
  CHECK(outcome(r, "R").start_s == doctest::Approx(outcome(r, "E").end_s));
}

TEST_CASE(
    "elastic on a synthetic trace: every scheduler completes, ranges hold, GPU-hours add up") {
  JobList l = synthetic_jobs(parse_synthetic("jobs=200,span=2d,max_gpus=32,median=2h,users=4"), 7);
  for (std::size_t i = 0; i < l.jobs.size(); i += 2) {
    l.jobs[i].min_gpus = std::max(1, l.jobs[i].gpus / 2);
    l.jobs[i].max_gpus = std::min(64, l.jobs[i].gpus * 2);
  }
  for (SchedulerKind s : enum_values<SchedulerKind>())
    for (AllocUnit a : {AllocUnit::Gpu, AllocUnit::Node}) {
      CAPTURE(to_string(s));
      CAPTURE(to_string(a));
      ClusterSimOptions o;  // failures on: restarts of elastic jobs too
      o.scheduler = s;
      o.alloc = a;
      o.seed = 5;
      o.elastic = true;
      ClusterResult r = simulate_cluster(small_cluster(), l, o);
      CHECK(r.completed == 200);
      CHECK(r.resizes > 0);
      for (std::size_t i = 0; i < l.jobs.size(); ++i) {
        const JobOutcome& out = outcome(r, l.jobs[i].id);
        if (l.jobs[i].elastic()) {
          CHECK(out.min_gpus_used >= l.jobs[i].min_gpus);
          CHECK(out.max_gpus_used <= l.jobs[i].max_gpus);
        } else {
          CHECK(out.resizes == 0);
        }
      }
      CHECK(r.useful_gpu_hours + r.idle.total() == doctest::Approx(r.gpu_hours).epsilon(0.01));
      ClusterSimOptions rigid = o;
      rigid.elastic = false;
      CHECK(simulate_cluster(small_cluster(), l, rigid).resizes == 0);
    }
}
