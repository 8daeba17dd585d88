// Issue 22 (3): the collective tuner chooses among NCCL's own algorithms under NCCL's enabling
// conditions (src/graph/tuning.cc, src/enqueue.cc of NVIDIA/nccl), on the shipped clusters:
// single-node NVSwitch H100, multi-node InfiniBand with and without SHARP, GB200 NVL72, RoCE.
// `hierarchical` (not NCCL) is never chosen unless the profile asks for it; mid-size bandwidth
// changes with size.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tutti/core/error.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

Cluster cluster(const std::string& node, int nodes, const std::string& transport = "infiniband") {
  ClusterParams p;
  p.name = "nccl-choice";
  p.node = node;
  p.nodes = nodes;
  p.fabric = nodes > 1 ? "rail_optimized" : "none";
  p.transport = transport;
  return make_cluster(p);
}

std::vector<int> range(int n, int first = 0, int stride = 1) {
  std::vector<int> g;
  for (int i = 0; i < n; ++i) g.push_back(first + i * stride);
  return g;
}

// nccl-tests' default sweep: 8 B .. 8 GiB, factor 2.
std::vector<double> sweep() {
  std::vector<double> s;
  for (double b = 8; b <= 8.0 * (1ull << 30); b *= 2) s.push_back(b);
  return s;
}

std::set<CollAlgo> algos_over_sweep(Coll coll, const std::vector<int>& g,
                                    const CollectiveContext& ctx) {
  std::set<CollAlgo> out;
  for (double s : sweep()) out.insert(plan_collective(coll, s, g, ctx).algo);
  return out;
}

double busbw(Coll coll, double bytes, const std::vector<int>& g, const CollectiveContext& ctx) {
  const CollectivePlan p = plan_collective(coll, bytes, g, ctx);
  const double t = simulate_collectives({p}, *ctx.topo, *ctx.profile);
  const double n = static_cast<double>(g.size());
  return bytes / t * (coll == Coll::AllReduce ? 2 * (n - 1) / n : (n - 1) / n);
}

}  // namespace

TEST_CASE(
    "NCCL choice: single-node NVSwitch H100 - ring LL for small, NVLS for large all-reduce, "
    "nothing multi-node") {
  const Cluster c = cluster("dgx-h100", 1);
  const SimCluster sc = sim_cluster(c);
  REQUIRE(sc.nvls);  // a catalog capability of the node's NVSwitch
  const CalibrationProfile& prof = default_calibration();
  const CollectiveContext ctx = make_collective_context(*sc.topology, prof, sc.nvls, sc.sharp);
  const auto g = range(8);
  const CollectivePlan small = plan_collective(Coll::AllReduce, 1024, g, ctx);
  CHECK(small.algo == CollAlgo::Ring);
  CHECK(small.proto == NcclProto::LL);
  CHECK(plan_collective(Coll::AllReduce, 1 << 30, g, ctx).algo == CollAlgo::Nvls);
  // One node: no tree (NCCL's tree here is multi-node), no NVLS tree ("disabled on a single
  // node"), no CollNet, no PAT (8 GPUs per node), never hierarchical.
  for (Coll coll : {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter})
    for (CollAlgo a : algos_over_sweep(coll, g, ctx)) {
      INFO(to_string(coll) << " chose " << to_string(a));
      CHECK((a == CollAlgo::Ring || a == CollAlgo::Nvls));
      if (coll != Coll::AllReduce) CHECK(a == CollAlgo::Ring);
    }
  // NVLS needs NVLS-capable switches: without them, ring throughout.
  const CollectiveContext no_nvls = make_collective_context(*sc.topology, prof, false, false);
  CHECK(algos_over_sweep(Coll::AllReduce, g, no_nvls) == std::set<CollAlgo>{CollAlgo::Ring});
}

TEST_CASE(
    "NCCL choice: multi-node InfiniBand without SHARP - tree for small, NVLS tree for large, never "
    "CollNet") {
  const Cluster c = cluster("dgx-h100", 4);
  const SimCluster sc = sim_cluster(c);
  REQUIRE(sc.sharp);  // Quantum switches can reduce; NCCL still needs NCCL_COLLNET_ENABLE=1
  const CalibrationProfile& prof = default_calibration();
  REQUIRE_FALSE(prof.nccl.enable_sharp);  // NCCL's default
  const CollectiveContext ctx = make_collective_context(*sc.topology, prof, sc.nvls, sc.sharp);
  const auto g = range(32);
  const CollectivePlan small = plan_collective(Coll::AllReduce, 1024, g, ctx);
  CHECK(small.algo == CollAlgo::Tree);
  CHECK(small.proto == NcclProto::LL);
  // Two nodes: each NIC carries S/k per direction in the NVLS tree, twice the ring's rate
  // (NCCL: "Handle 2 node case of NVLSTree"); 2 x p5 measure 487 GB/s busbw at 16 GiB, above any
  // ring's NVLink bound (sim/calibration/microbench/nccl-sweep-p5-h100-2node.json).
  CHECK(plan_collective(Coll::AllReduce, 4.0 * (1 << 30), range(16), ctx).algo ==
        CollAlgo::NvlsTree);
  CHECK(plan_collective(Coll::AllReduce, 64.0 * (1 << 20), g, ctx).algo == CollAlgo::NvlsTree);
  for (CollAlgo a : algos_over_sweep(Coll::AllReduce, g, ctx)) {
    INFO("all_reduce chose " << to_string(a));
    CHECK((a == CollAlgo::Ring || a == CollAlgo::Tree || a == CollAlgo::NvlsTree));
  }
  // 8 GPUs per node: no PAT; all-gather and reduce-scatter run rings.
  CHECK(algos_over_sweep(Coll::AllGather, g, ctx) == std::set<CollAlgo>{CollAlgo::Ring});
  CHECK(algos_over_sweep(Coll::ReduceScatter, g, ctx) == std::set<CollAlgo>{CollAlgo::Ring});
  // One GPU per node (rank 0 of each node): PAT is enabled and wins somewhere in the sweep.
  const auto rails = range(4, 0, 8);
  const auto ag = algos_over_sweep(Coll::AllGather, rails, ctx);
  CHECK(ag.count(CollAlgo::Pat) == 1);
  for (CollAlgo a : ag) CHECK((a == CollAlgo::Pat || a == CollAlgo::Ring));
  // One GPU per node: no NVLS (nothing to reduce in the switch), no NVLS tree.
  for (CollAlgo a : algos_over_sweep(Coll::AllReduce, rails, ctx))
    CHECK((a == CollAlgo::Ring || a == CollAlgo::Tree));
  CalibrationProfile no_pat = prof;
  no_pat.nccl.enable_pat = false;
  const CollectiveContext ctx_np = make_collective_context(*sc.topology, no_pat, sc.nvls, sc.sharp);
  CHECK(algos_over_sweep(Coll::AllGather, rails, ctx_np) == std::set<CollAlgo>{CollAlgo::Ring});
}

TEST_CASE(
    "NCCL choice: multi-node InfiniBand with SHARP enabled - CollNet or NVLS+SHARP for large "
    "all-reduces") {
  const Cluster c = cluster("dgx-h100", 4);
  const SimCluster sc = sim_cluster(c);
  CalibrationProfile prof = default_calibration();
  prof.nccl.enable_sharp = true;  // NCCL_COLLNET_ENABLE=1 with the SHARP plugin
  const CollectiveContext ctx = make_collective_context(*sc.topology, prof, sc.nvls, sc.sharp);
  const auto g = range(32);
  const CollAlgo big = plan_collective(Coll::AllReduce, 4.0 * (1 << 30), g, ctx).algo;
  INFO("4 GiB chose " << to_string(big));
  CHECK((big == CollAlgo::Nvls || big == CollAlgo::CollNet || big == CollAlgo::CollNetChain));
  // Every in-network algorithm can run here when forced.
  for (CollAlgo a :
       {CollAlgo::Nvls, CollAlgo::CollNet, CollAlgo::CollNetChain, CollAlgo::NvlsTree}) {
    const CollectivePlan p =
        plan_collective_with(Coll::AllReduce, 256e6, g, ctx, a, NcclProto::Simple);
    const double t = simulate_collectives({p}, *sc.topology, prof);
    INFO(to_string(a) << ": " << t << " s, estimate " << p.estimate_s << " s");
    CHECK(t > 0);
    // The estimate is the busiest link's (an inner tree node's NIC): the flows take at most that.
    CHECK(t <= 1.05 * p.estimate_s);
    CHECK(t >= 0.5 * p.estimate_s);
  }
  // All-gather and reduce-scatter: CollNet would need the plugin's iallgather; rings.
  CHECK(algos_over_sweep(Coll::AllGather, g, ctx) == std::set<CollAlgo>{CollAlgo::Ring});
  // More than 8 local ranks: CollNet direct and chain are out (NCCL_MAX_DIRECT_ARITY + 1).
  const Cluster nvl =
      load_cluster(std::string(TUTTI_SOURCE_DIR) + "/topologies/gb200-nvl72-576.json");
  const SimCluster snvl = sim_cluster(nvl);
  const CollectiveContext cn = make_collective_context(*snvl.topology, prof, snvl.nvls, true);
  CHECK_THROWS_AS(plan_collective_with(Coll::AllReduce, 1e9, range(144), cn, CollAlgo::CollNet,
                                       NcclProto::Simple),
                  InputError);
}

TEST_CASE("NCCL choice: GB200 NVL72 - NVLS across the 72-GPU domain, NVLS tree between domains") {
  const Cluster c =
      load_cluster(std::string(TUTTI_SOURCE_DIR) + "/topologies/gb200-nvl72-576.json");
  const SimCluster sc = sim_cluster(c);
  REQUIRE(sc.nvls);
  const CalibrationProfile& prof = default_calibration();
  const CollectiveContext ctx = make_collective_context(*sc.topology, prof, sc.nvls, sc.sharp);
  CHECK(plan_collective(Coll::AllReduce, 1 << 30, range(72), ctx).algo == CollAlgo::Nvls);
  CHECK(plan_collective(Coll::AllReduce, 1 << 30, range(144), ctx).algo == CollAlgo::NvlsTree);
  for (CollAlgo a : algos_over_sweep(Coll::AllReduce, range(144), ctx))
    CHECK((a == CollAlgo::Ring || a == CollAlgo::Tree || a == CollAlgo::NvlsTree));
}

TEST_CASE("NCCL choice: RoCE has no SHARP - never CollNet, even with NCCL_COLLNET_ENABLE") {
  const Cluster c = cluster("dgx-h100", 4, "roce");
  const SimCluster sc = sim_cluster(c);
  CHECK_FALSE(sc.sharp);
  CalibrationProfile prof = default_calibration();
  prof.nccl.enable_sharp = true;
  const CollectiveContext ctx = make_collective_context(*sc.topology, prof, sc.nvls, sc.sharp);
  for (CollAlgo a : algos_over_sweep(Coll::AllReduce, range(32), ctx))
    CHECK((a == CollAlgo::Ring || a == CollAlgo::Tree || a == CollAlgo::NvlsTree));
  CHECK_THROWS_AS(plan_collective_with(Coll::AllReduce, 1e9, range(32), ctx, CollAlgo::CollNetChain,
                                       NcclProto::Simple),
                  InputError);
}

TEST_CASE("hierarchical is never chosen by default and is labelled non-NCCL when asked for") {
  const Cluster c = cluster("dgx-h100", 4);
  const SimCluster sc = sim_cluster(c);
  CalibrationProfile prof = default_calibration();
  REQUIRE_FALSE(prof.nccl.allow_hierarchical);
  CollectiveContext ctx = make_collective_context(*sc.topology, prof, sc.nvls, sc.sharp);
  CollectiveContext plain = make_collective_context(*sc.topology, prof, false, false);
  for (const CollectiveContext* x : {&ctx, &plain})
    for (CollAlgo a : algos_over_sweep(Coll::AllReduce, range(32), *x))
      CHECK(a != CollAlgo::Hierarchical);
  CHECK_FALSE(is_nccl_algorithm(CollAlgo::Hierarchical));
  CHECK(std::string(to_string(CollAlgo::Hierarchical)).find("non-NCCL") != std::string::npos);
  // Opt in: the tuner may now pick it (on a ring-only profile it beats the flat ring at size).
  prof.nccl.allow_hierarchical = true;
  prof.nccl.enable_tree = false;
  ctx = make_collective_context(*sc.topology, prof, false, false);
  const auto opt = algos_over_sweep(Coll::AllReduce, range(32), ctx);
  CHECK(opt.count(CollAlgo::Hierarchical) == 1);
  // The file key: "non_nccl_algorithms": ["hierarchical"]; anything else is an input error.
  nlohmann::json j;
  to_json(j, default_calibration());
  CHECK(j["nccl"]["non_nccl_algorithms"].empty());
  j["nccl"]["non_nccl_algorithms"] = {"hierarchical"};
  CHECK(parse_calibration(j.dump(), "opt-in.json").nccl.allow_hierarchical);
  j["nccl"]["non_nccl_algorithms"] = {"bruck"};
  CHECK_THROWS_WITH_AS(parse_calibration(j.dump(), "bad.json"),
                       doctest::Contains("nccl.non_nccl_algorithms"), InputError);
}

TEST_CASE("mid-size all-reduce bandwidth rises smoothly with size (no flat plateau)") {
  const Cluster c = cluster("dgx-h100", 1);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const CollectiveContext ctx = make_collective_context(*sc.topology, prof, sc.nvls, sc.sharp);
  const auto g = range(8);
  double prev = 0;
  for (double s = 64 * 1024; s <= 256.0 * (1 << 20); s *= 2) {
    const double bw = busbw(Coll::AllReduce, s, g, ctx);
    INFO("size " << s << " busbw " << bw / 1e9 << " GB/s, previous " << prev / 1e9);
    CHECK(bw > prev * 1.02);               // rises with size
    if (prev > 0) CHECK(bw < prev * 2.0);  // no step: at most doubling per doubling of size
    prev = bw;
  }
  // 1 MiB sits between the latency-bound and the bandwidth-bound ends.
  const double mib = busbw(Coll::AllReduce, 1 << 20, g, ctx),
               big = busbw(Coll::AllReduce, 1 << 30, g, ctx);
  CHECK(mib < 0.5 * big);
  CHECK(busbw(Coll::AllReduce, 2 << 20, g, ctx) > 1.2 * mib);
}
