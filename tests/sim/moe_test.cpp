// The MoE layer as it runs (issue 18 point 2): router, permutation, grouped expert GEMMs,
// all-to-all, load imbalance, capacity, FP8 dispatch; every engine fills the MoE breakdown.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../support/cluster_fixture.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

Cluster dgx(int nodes) {
  return testing::dgx_h100_fat_tree("moe-test", nodes);
}

// Qwen3-30B-A3B cut to 2 layers and a small batch: the real MoE layer shapes, fast to run.
Workload qwen(std::vector<std::string> extra = {}) {
  std::vector<std::string> o = {"model.layers=2", "training.global_batch=16"};
  o.insert(o.end(), extra.begin(), extra.end());
  return load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/qwen3-30b-a3b.json", o);
}

double part(const SimResult& r, MoePart p) {
  return r.breakdown.moe_s[p];
}

double op_bytes(const Program& p, const std::string& name) {
  double b = 0;
  for (const Op& op : p.classes[0].ops)
    if (p.names[op.name] == name) b += op.bytes;
  return b;
}

}  // namespace

TEST_CASE("moe: the layer's parts are separate ops and every engine reports them") {
  const Cluster c = dgx(2);
  const Workload w = qwen();
  const Layout l = resolve_layout(w, "tp=1,pp=1,ep=8,zero=1", c.gpus());
  const Program prog = expand_program(w, l);
  int grouped = 0;
  EnumArray<MoePart, int> parts{};
  for (const Op& op : prog.classes[0].ops) {
    parts[op.moe_part]++;
    grouped += op.grouped != GroupedDim::None;
  }
  for (MoePart p : enum_values<MoePart>()) {
    CAPTURE(to_string(p));
    if (p == MoePart::SharedExpert)
      CHECK(parts[p] == 0);  // Qwen3: none
    else if (p != MoePart::None)
      CHECK(parts[p] > 0);
  }
  // Forward up/down, backward 2 dgrad + 2 wgrad, per layer and micro-batch.
  CHECK(grouped == 6 * 2 * 1);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const SimResult n = simulate_program(prog, sc, prof);
  const SimResult a = simulate_program_analytic(prog, sc, prof);
  const SimResult s = simulate_program_simgrid(prog, sc, prof);
  for (MoePart p : {MoePart::Router, MoePart::Permute, MoePart::ExpertGemm, MoePart::AllToAll}) {
    CAPTURE(to_string(p));
    CHECK(part(n, p) > 0);
    // Compute parts: the same compute model in every engine.
    if (p != MoePart::AllToAll) {
      CHECK(part(a, p) == doctest::Approx(part(n, p)).epsilon(1e-9));
      CHECK(part(s, p) == doctest::Approx(part(n, p)).epsilon(1e-6));
    } else {
      CHECK(part(a, p) == doctest::Approx(part(n, p)).epsilon(0.05));
      CHECK(part(s, p) == doctest::Approx(part(n, p)).epsilon(0.05));
    }
  }
  CHECK(part(n, MoePart::None) == 0);
  // The parts are inside compute (and the all-to-all's exposure inside exposed EP).
  CHECK(part(n, MoePart::Router) + part(n, MoePart::Permute) + part(n, MoePart::ExpertGemm) <
        n.breakdown.compute_s);
}

TEST_CASE("moe: load imbalance slows the grouped GEMMs and the all-to-all, not the FLOP count") {
  const Cluster c = dgx(2);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const Workload w1 = qwen({"model.moe_balancing=forced"}), w2 = qwen({"model.moe_imbalance=1.5"});
  CHECK_FALSE(w1.model.tf.moe_imbalance_set);
  CHECK(w1.model.tf.moe_imbalance == 1.0);
  CHECK(w2.model.tf.moe_imbalance_set);
  const Layout l = resolve_layout(w1, "tp=1,pp=1,ep=8", c.gpus());
  const Program p1 = expand_program(w1, l), p2 = expand_program(w2, l);
  CHECK(p1.hardware_flops_per_iteration == doctest::Approx(p2.hardware_flops_per_iteration));
  CHECK(op_bytes(p2, "moe.dispatch_alltoall") ==
        doctest::Approx(1.5 * op_bytes(p1, "moe.dispatch_alltoall")));
  const SimResult r1 = simulate_program_analytic(p1, sc, prof),
                  r2 = simulate_program_analytic(p2, sc, prof);
  const double g = part(r2, MoePart::ExpertGemm) / part(r1, MoePart::ExpertGemm);
  CHECK(g > 1.3);
  CHECK(g < 1.6);
  CHECK(part(r2, MoePart::AllToAll) > 1.3 * part(r1, MoePart::AllToAll));
  CHECK(part(r2, MoePart::Router) == doctest::Approx(part(r1, MoePart::Router)));
  CHECK(r2.iteration_time_s > r1.iteration_time_s);
  // A capacity factor caps the skew: tokens beyond capacity are dropped.
  const Workload w3 = qwen({"model.moe_imbalance=1.5", "model.moe_capacity_factor=1.25"});
  CHECK(w3.model.tf.moe_load_factor() == doctest::Approx(1.25));
  const Program p3 = expand_program(w3, l);
  CHECK(op_bytes(p3, "moe.dispatch_alltoall") ==
        doctest::Approx(1.25 * op_bytes(p1, "moe.dispatch_alltoall")));
}

TEST_CASE(
    "moe: learned routing defaults to the measured auxiliary-loss skew, forced balance to 1") {
  const Cluster c = dgx(2);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const Workload wd = qwen(), wf = qwen({"model.moe_balancing=forced"}),
                 wl = qwen({"model.moe_balancing=loss_free"}), w1 = qwen({"model.moe_imbalance=1"}),
                 wc = qwen({"model.moe_capacity_factor=1.25"});
  CHECK(wd.model.tf.moe_balancing == MoeBalancing::AuxLoss);
  CHECK_FALSE(wd.model.tf.moe_imbalance_set);
  // arXiv:2408.15664 Table 2: MaxVio_global 0.52 (auxiliary loss), 0.04 (Loss-Free).
  CHECK(wd.model.tf.moe_load_factor() == doctest::Approx(1.52));
  CHECK(wl.model.tf.moe_load_factor() == doctest::Approx(1.04));
  CHECK(wf.model.tf.moe_load_factor() == 1.0);
  CHECK(wc.model.tf.moe_load_factor() == doctest::Approx(1.25));  // capacity caps the default
  // A stated skew overrides the balancing's default.
  CHECK(qwen({"model.moe_balancing=forced", "model.moe_imbalance=2"}).model.tf.moe_load_factor() ==
        doctest::Approx(2.0));
  // Mixtral (8 experts, top-2): the default stays below experts / top_k.
  const Workload mx = load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/mixtral-8x7b.json",
                                    {"model.layers=2", "training.global_batch=16"});
  CHECK(mx.model.tf.moe_load_factor() == doctest::Approx(1.52));
  const Layout l = resolve_layout(wd, "tp=1,pp=1,ep=8", c.gpus());
  const Program pd = expand_program(wd, l), pf = expand_program(wf, l), p1 = expand_program(w1, l),
                pc = expand_program(wc, l);
  // The busiest rank sends and computes 1.52 x the mean copies; the FLOP count stays the mean.
  CHECK(op_bytes(pd, "moe.dispatch_alltoall") ==
        doctest::Approx(1.52 * op_bytes(pf, "moe.dispatch_alltoall")));
  CHECK(op_bytes(pc, "moe.dispatch_alltoall") ==
        doctest::Approx(1.25 * op_bytes(pf, "moe.dispatch_alltoall")));
  CHECK(pd.hardware_flops_per_iteration == doctest::Approx(pf.hardware_flops_per_iteration));
  const SimResult rd = simulate_program_analytic(pd, sc, prof),
                  rf = simulate_program_analytic(pf, sc, prof),
                  r1 = simulate_program_analytic(p1, sc, prof);
  // Forced balance is the old balanced result, to the bit.
  CHECK(rf.iteration_time_s == r1.iteration_time_s);
  CHECK(part(rf, MoePart::ExpertGemm) == part(r1, MoePart::ExpertGemm));
  // Expert GEMM time grows by the skew, to within the grouped-GEMM efficiency of more rows per
  // expert and the tile quantization of the rows.
  const double g = part(rd, MoePart::ExpertGemm) / part(rf, MoePart::ExpertGemm);
  CHECK(g == doctest::Approx(1.52).epsilon(0.05));
  CHECK(part(rd, MoePart::AllToAll) > 1.3 * part(rf, MoePart::AllToAll));
  CHECK(rd.iteration_time_s > rf.iteration_time_s);
}

TEST_CASE("moe: all three engines agree on a skewed MoE layer") {
  const Cluster c = dgx(2);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const Workload w = qwen({"model.moe_imbalance=1.8"});
  const Layout l = resolve_layout(w, "tp=1,pp=1,ep=16,zero=1", c.gpus());
  const Program p = expand_program(w, l);
  const SimResult n = simulate_program(p, sc, prof), a = simulate_program_analytic(p, sc, prof),
                  s = simulate_program_simgrid(p, sc, prof);
  const Workload wf = qwen({"model.moe_balancing=forced"});
  const SimResult nf = simulate_program(expand_program(wf, l), sc, prof);
  CHECK(part(n, MoePart::ExpertGemm) > 1.4 * part(nf, MoePart::ExpertGemm));
  CHECK(part(a, MoePart::ExpertGemm) == doctest::Approx(part(n, MoePart::ExpertGemm)));
  CHECK(part(s, MoePart::ExpertGemm) == doctest::Approx(part(n, MoePart::ExpertGemm)));
  CHECK(part(a, MoePart::AllToAll) == doctest::Approx(part(n, MoePart::AllToAll)).epsilon(0.02));
  CHECK(part(s, MoePart::AllToAll) == doctest::Approx(part(n, MoePart::AllToAll)).epsilon(0.02));
  CHECK(a.iteration_time_s == doctest::Approx(n.iteration_time_s).epsilon(0.02));
  CHECK(s.iteration_time_s == doctest::Approx(n.iteration_time_s).epsilon(0.02));
}

TEST_CASE("moe: FP8 dispatch halves the tokens sent to the experts, the combine stays BF16") {
  const Cluster c = dgx(2);
  // Forced balance: the send buffer is the mean T k h (the skew is tested above).
  const Workload wb = qwen({"model.moe_balancing=forced"}),
                 wf = qwen({"model.moe_balancing=forced", "model.moe_dispatch_dtype=fp8"});
  CHECK(moe_dispatch_dtype(wb) == DType::BF16);
  CHECK(moe_dispatch_dtype(wf) == DType::FP8);
  const Layout l = resolve_layout(wb, "tp=1,pp=1,ep=8", c.gpus());
  const Program pb = expand_program(wb, l), pf = expand_program(wf, l);
  const double fp8 = (1.0 + 4.0 / 128) / 2.0;  // 1 byte + an fp32 scale per 128, over 2 bytes
  CHECK(op_bytes(pf, "moe.dispatch_alltoall") ==
        doctest::Approx(fp8 * op_bytes(pb, "moe.dispatch_alltoall")));
  CHECK(op_bytes(pf, "moe.combine_alltoall_bwd") ==
        doctest::Approx(fp8 * op_bytes(pb, "moe.combine_alltoall_bwd")));
  CHECK(op_bytes(pf, "moe.combine_alltoall") ==
        doctest::Approx(op_bytes(pb, "moe.combine_alltoall")));
  CHECK(op_bytes(pf, "moe.dispatch_alltoall_bwd") ==
        doctest::Approx(op_bytes(pb, "moe.dispatch_alltoall_bwd")));
  // The send buffer is the top-k copies of the local tokens: T * k * h * bytes.
  const double T = 4096, k = 8, h = 2048;
  // 2 MoE layers, 1 micro-batch (global batch 16 over dp 16).
  CHECK(op_bytes(pb, "moe.dispatch_alltoall") == doctest::Approx(2 * T * k * h * 2.0));
}

TEST_CASE("moe: an all-to-all across NVLink domains is slower than one inside") {
  const Cluster c = dgx(2);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const Workload w = qwen();
  const Program in = expand_program(w, resolve_layout(w, "tp=1,pp=1,ep=8", c.gpus()));
  const Program across = expand_program(w, resolve_layout(w, "tp=1,pp=1,ep=16", c.gpus()));
  const SimResult a = simulate_program(in, sc, prof), b = simulate_program(across, sc, prof);
  // Same bytes per rank; ep 16 spans both nodes (InfiniBand), ep 8 stays on NVSwitch.
  CHECK(op_bytes(in, "moe.dispatch_alltoall") ==
        doctest::Approx(op_bytes(across, "moe.dispatch_alltoall")));
  CHECK(part(b, MoePart::AllToAll) > 2.0 * part(a, MoePart::AllToAll));
}

TEST_CASE("moe: node-limited routing sends each token once per node across the fabric") {
  // 4 DGX nodes, an all-to-all over all 32 GPUs of top-8 tokens limited to 2 nodes:
  // D = min(2, 4 (1 - (3/4)^8)) = 2 nodes per token, 3/4 of them remote. Each GPU sends
  // S D/(t N) = S/16 to its rail peer in each of the 3 other nodes (S 3/16 across, against
  // S 24/32 without the limit) and S/8 to each of its 7 domain-mates over NVLink.
  const Cluster c = dgx(4);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  CollectiveContext ctx = make_collective_context(*sc.topology, prof, sc.nvls, sc.sharp);
  std::vector<int> g(32);
  for (int i = 0; i < 32; ++i) g[i] = i;
  const double S = 64e6;
  const CollectivePlan plain = plan_collective(Coll::AllToAll, S, g, ctx);
  CHECK(plain.algo == CollAlgo::Direct);
  ctx.a2a_topk = 8;
  ctx.a2a_max_nodes = 2;
  const CollectivePlan lim = plan_collective(Coll::AllToAll, S, g, ctx);
  REQUIRE(lim.algo == CollAlgo::NodeLimited);
  CHECK_FALSE(is_nccl_algorithm(CollAlgo::NodeLimited));
  REQUIRE(lim.phases.size() == 1);
  auto sent = [&](const CollectivePlan& p, int gpu, bool cross) {
    double b = 0;
    for (const auto& ph : p.phases)
      for (const CollFlow& f : ph.flows)
        if (f.src_gpu == gpu && (f.dst_gpu / 8 != gpu / 8) == cross) b += f.bytes * ph.repeat;
    return b;
  };
  const double wire = sent(plain, 5, true) / (S * 24 / 32);  // the protocol's wire factor
  for (int gpu : {0, 13, 31}) {
    CAPTURE(gpu);
    CHECK(sent(lim, gpu, true) == doctest::Approx(wire * S * 3 / 16));
    CHECK(sent(lim, gpu, false) == doctest::Approx(wire * S * 7 / 8));
    for (const CollFlow& f : lim.phases[0].flows)  // rail-aligned across the fabric
      if (f.src_gpu / 8 != f.dst_gpu / 8) CHECK(f.src_gpu % 8 == f.dst_gpu % 8);
  }
  CHECK(lim.estimate_s < 0.5 * plain.estimate_s);
  // A limit above the expected distinct nodes still de-duplicates: D = 4 (1 - (3/4)^8).
  ctx.a2a_max_nodes = 8;
  const CollectivePlan dedup = plan_collective(Coll::AllToAll, S, g, ctx);
  const double D = 4 * (1 - std::pow(0.75, 8));
  CHECK(sent(dedup, 0, true) == doctest::Approx(wire * S * D * 3 / 32));
  // Inside one NVLink domain there is nothing to limit.
  std::vector<int> node(g.begin(), g.begin() + 8);
  CHECK(plan_collective(Coll::AllToAll, S, node, ctx).algo == CollAlgo::Direct);
}

TEST_CASE("moe: node-limited routing in every engine: less EP time across nodes, engines agree") {
  const Cluster c = dgx(4);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const Workload w = qwen({"training.global_batch=32"}),
                 wl = qwen({"training.global_batch=32", "model.moe_max_nodes_per_token=2"});
  CHECK(wl.model.tf.moe_max_nodes == 2);
  const Layout l = resolve_layout(w, "tp=1,pp=1,ep=32,zero=1", c.gpus());
  const Program p = expand_program(w, l), pl = expand_program(wl, l);
  CHECK(pl.moe_max_nodes == 2);
  CHECK(pl.moe_top_k == 8);
  // The Program's bytes are the send buffer either way; the plan carries the limit.
  CHECK(op_bytes(pl, "moe.dispatch_alltoall") ==
        doctest::Approx(op_bytes(p, "moe.dispatch_alltoall")));
  const SimResult n = simulate_program(p, sc, prof), nl = simulate_program(pl, sc, prof);
  const SimResult al = simulate_program_analytic(pl, sc, prof);
  const SimResult sl = simulate_program_simgrid(pl, sc, prof);
  CHECK(part(nl, MoePart::AllToAll) < 0.6 * part(n, MoePart::AllToAll));
  CHECK(nl.iteration_time_s < n.iteration_time_s);
  CHECK(part(al, MoePart::AllToAll) == doctest::Approx(part(nl, MoePart::AllToAll)).epsilon(0.02));
  CHECK(part(sl, MoePart::AllToAll) == doctest::Approx(part(nl, MoePart::AllToAll)).epsilon(0.02));
  CHECK(al.iteration_time_s == doctest::Approx(nl.iteration_time_s).epsilon(0.02));
  CHECK(sl.iteration_time_s == doctest::Approx(nl.iteration_time_s).epsilon(0.02));
  // EP inside one node: the limit changes nothing.
  const Layout l8 = resolve_layout(w, "tp=1,pp=1,ep=8,zero=1", c.gpus());
  CHECK(simulate_program(expand_program(wl, l8), sc, prof).iteration_time_s ==
        doctest::Approx(simulate_program(expand_program(w, l8), sc, prof).iteration_time_s)
            .epsilon(1e-12));
}

TEST_CASE("moe: grouped GEMMs with few tokens per expert run below the dense rate") {
  const Cluster c = dgx(1);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  REQUIRE(prof.grouped_gemm_half_tokens > 0);
  Op dense;
  dense.kind = OpKind::Gemm;
  dense.m = 256;
  dense.n = 4096;
  dense.k = 7168;
  dense.batch = 16;
  dense.flops = 2.0 * 256 * 4096 * 7168 * 16;
  Op grouped = dense;
  grouped.grouped = GroupedDim::M;
  const double td = op_time_s(dense, sc.gpu, prof), tg = op_time_s(grouped, sc.gpu, prof);
  const double h = prof.grouped_gemm_half_tokens;
  CHECK(tg > td);
  // The factor divides the FLOP-rate term only (the HBM term and the launch overhead stay).
  CHECK(tg / td > 1.2);
  CHECK(tg / td <= (256 + h) / 256 * (1 + 1e-9));
  // The wgrad form groups over k: the same factor on its token dimension.
  Op wg = dense;
  wg.m = 4096;
  wg.n = 7168;
  wg.k = 256;
  Op wgg = wg;
  wgg.grouped = GroupedDim::K;
  CHECK(op_time_s(wgg, sc.gpu, prof) > op_time_s(wg, sc.gpu, prof));
}

TEST_CASE("moe: an MXFP8 grouped GEMM on GB200 runs at the measured multi-stream cuBLAS rate") {
  // sim/calibration/microbench/mxfp8-grouped-gb200.csv: 2,672 TFLOP/s at K=7168, N=2048
  // (8 experts x 4096 tokens assumed); the fp8 value (0.731) alone gave 3,374.
  const GpuSpec& gb200 = Catalog::builtin().gpu("gb200");
  const CalibrationProfile& prof = default_calibration();
  Op g;
  g.kind = OpKind::Gemm;
  g.dtype = DType::MXFP8;
  g.grouped = GroupedDim::M;
  g.m = 4096;
  g.n = 2048;
  g.k = 7168;
  g.batch = 8;
  g.flops = 2.0 * 4096 * 2048 * 7168 * 8;
  CHECK(g.flops / op_time_s(g, gb200, prof) / 1e12 == doctest::Approx(2672).epsilon(0.01));
  Op f = g;  // per-tensor FP8 keeps the device's FP8 GEMM efficiency
  f.dtype = DType::FP8;
  CHECK(f.flops / op_time_s(f, gb200, prof) / 1e12 == doctest::Approx(3374).epsilon(0.01));
}

TEST_CASE("moe: bad MoE keys are input errors naming the key") {
  auto fails = [](std::vector<std::string> o, const std::string& needle) {
    try {
      qwen(std::move(o));
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, e.what());
    }
  };
  fails({"model.moe_capacity_factor=0.5"}, "moe_capacity_factor");
  fails({"model.moe_imbalance=0.9"}, "moe_imbalance");
  fails({"model.moe_balancing=sinkhorn"}, "moe_balancing");
  fails({"model.moe_dispatch_dtype=int4"}, "moe_dispatch_dtype");
  fails({"model.moe_layer_freq=0"}, "moe_layer_freq");
  fails({"model.moe_max_nodes_per_token=0"}, "moe_max_nodes_per_token");
  try {
    load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/llama3-8b.json",
                  {"model.moe_imbalance=1.2"});
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("moe_imbalance") != std::string::npos);
  }
}

TEST_CASE("moe: dense models report no MoE parts") {
  const Cluster c = dgx(1);
  const Workload w = load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/tiny-gpt.json");
  const Layout l = resolve_layout(w, "", c.gpus());
  const SimResult r = simulate_program(expand_program(w, l), sim_cluster(c), default_calibration());
  for (double x : r.breakdown.moe_s) CHECK(x == 0);
}

TEST_CASE(
    "node mirroring: one node's inside flows stand for the stage's, same result as every flow") {
  // 8 DGX nodes, two stages of 4 nodes, ep 16: every all-to-all has NVLink flows in all 4 nodes
  // of its stage (mirrored from the stage's first node) and rail flows across the fabric.
  const Cluster c = dgx(8);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  for (const char* extra : {"model.moe_imbalance=1", "model.moe_max_nodes_per_token=2"}) {
    CAPTURE(extra);
    const Workload w = qwen({"training.global_batch=64", extra});
    const Program p = expand_program(w, resolve_layout(w, "tp=1,pp=2,ep=16,zero=1", c.gpus()));
    ProgramSimOptions on, all;
    std::size_t mirrored = 0, none = 1;
    on.mirrored_flows = &mirrored;
    on.mirror_ep_groups = false;  // nodes only (EP groups as well: the cases below)
    all.mirror_nodes = false;
    all.mirrored_flows = &none;
    const SimResult m = simulate_program(p, sc, prof, on), a = simulate_program(p, sc, prof, all);
    CHECK(mirrored > 0);
    CHECK(none == 0);
    CHECK(m.iteration_time_s == doctest::Approx(a.iteration_time_s).epsilon(1e-12));
    CHECK(part(m, MoePart::AllToAll) == doctest::Approx(part(a, MoePart::AllToAll)).epsilon(1e-12));
    // The mirrored flows' bytes still count on their links: the same busiest links.
    REQUIRE(m.bottleneck_links.size() == a.bottleneck_links.size());
    for (std::size_t i = 0; i < m.bottleneck_links.size(); ++i) {
      CHECK(m.bottleneck_links[i].link == a.bottleneck_links[i].link);
      CHECK(m.bottleneck_links[i].bytes == a.bottleneck_links[i].bytes);
    }
  }
}

namespace {

// One run per mirroring level (2 nodes and EP groups, 1 nodes only, 0 none) on a Program; the
// level each run ended with and the flows it mirrored.
struct MirrorRuns {
  SimResult r[3];
  int level[3] = {-1, -1, -1};
  std::size_t mirrored[3] = {0, 0, 0};
};

MirrorRuns mirror_runs(const Program& p, const SimCluster& sc) {
  MirrorRuns m;
  for (int want = 0; want < 3; ++want) {
    ProgramSimOptions o;
    o.mirror_nodes = want >= 1;
    o.mirror_ep_groups = want >= 2;
    o.mirror_level = &m.level[want];
    o.mirrored_flows = &m.mirrored[want];
    m.r[want] = simulate_program(p, sc, default_calibration(), o);
  }
  return m;
}

// Iteration, all-to-all time and the busiest links' bytes of run `i` equal the unmirrored run's.
void same_as_unmirrored(const MirrorRuns& m, int i) {
  const SimResult& a = m.r[0];
  const SimResult& x = m.r[i];
  CHECK(x.iteration_time_s == doctest::Approx(a.iteration_time_s).epsilon(1e-9));
  CHECK(part(x, MoePart::AllToAll) == doctest::Approx(part(a, MoePart::AllToAll)).epsilon(1e-9));
  REQUIRE(x.bottleneck_links.size() == a.bottleneck_links.size());
  for (std::size_t k = 0; k < x.bottleneck_links.size(); ++k) {
    CHECK(x.bottleneck_links[k].bytes ==
          doctest::Approx(a.bottleneck_links[k].bytes).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("EP-group mirroring: one EP group's rail flows stand for the stage's, same result") {
  // 16 DGX nodes, two stages of 8 nodes, ep 16: 4 EP groups of 2 nodes per stage, each under one
  // leaf (4 nodes per scalable unit); the all-to-all's flows between nodes stay in the EP group.
  const Cluster c = dgx(16);
  const SimCluster sc = sim_cluster(c);
  for (const char* extra : {"model.moe_imbalance=1", "model.moe_max_nodes_per_token=2"}) {
    CAPTURE(extra);
    const Workload w = qwen({"training.global_batch=128", extra});
    const Program p = expand_program(w, resolve_layout(w, "tp=1,pp=2,ep=16,zero=1", c.gpus()));
    const MirrorRuns m = mirror_runs(p, sc);
    CHECK(m.level[0] == 0);
    CHECK(m.level[1] == 1);
    CHECK(m.level[2] == 2);
    CHECK(m.mirrored[0] == 0);
    CHECK(m.mirrored[1] > 0);
    CHECK(m.mirrored[2] > m.mirrored[1]);  // the other EP groups' rail flows as well
    same_as_unmirrored(m, 1);
    same_as_unmirrored(m, 2);
  }
}

TEST_CASE("EP-group mirroring: EP groups across scalable units fall back to node mirroring") {
  // Rail-optimized, 3 nodes per scalable unit: the EP group of nodes 2-3 spans two rail leaves
  // (its flows go up to the spine), the stage's first does not, so the EP groups' flows differ
  // and the check fails.
  ClusterParams cp;
  cp.name = "moe-test";
  cp.nodes = 12;
  cp.fabric = "rail_optimized";
  cp.nodes_per_su = 3;
  const Cluster c = make_cluster(cp);
  const SimCluster sc = sim_cluster(c);
  const Workload w = qwen({"training.global_batch=96", "model.moe_max_nodes_per_token=2"});
  const Program p = expand_program(w, resolve_layout(w, "tp=1,pp=2,ep=16,zero=1", c.gpus()));
  const MirrorRuns m = mirror_runs(p, sc);
  CHECK(m.level[2] == 1);
  CHECK(m.mirrored[2] == m.mirrored[1]);
  same_as_unmirrored(m, 2);
}

TEST_CASE("node mirroring: an NVLink domain across trays falls back to every flow") {
  // One GB200 NVL72 domain, trays of 4 GPUs: the ep 8 all-to-all runs over NVLink between two
  // trays, so the GPUs' NVLink ports carry flows inside a tray and between trays: node mirroring
  // (and EP-group mirroring, whose EP groups are 2 trays) must be off.
  ClusterParams cp;
  cp.name = "moe-test";
  cp.node = "gb200-nvl72";
  cp.nodes = 18;
  cp.fabric = "fat_tree";
  const Cluster c = make_cluster(cp);
  const SimCluster sc = sim_cluster(c);
  const Workload w = qwen({"training.global_batch=72"});
  const Program p = expand_program(w, resolve_layout(w, "tp=1,pp=1,ep=8,zero=1", c.gpus()));
  const MirrorRuns m = mirror_runs(p, sc);
  CHECK(m.level[1] == 0);
  CHECK(m.level[2] == 0);
  CHECK(m.mirrored[1] == 0);
  same_as_unmirrored(m, 1);
  same_as_unmirrored(m, 2);
}
