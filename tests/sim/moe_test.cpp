// The MoE layer as it runs (issue 18 point 2): router, permutation, grouped expert GEMMs,
// all-to-all, load imbalance, capacity, FP8 dispatch; every engine fills the MoE breakdown.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

Cluster dgx(int nodes) {
  ClusterParams p;
  p.name = "moe-test";
  p.node = "dgx-h100";
  p.nodes = nodes;
  p.fabric = "fat_tree";
  p.nodes_per_su = 4;
  return make_cluster(p);
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
  const Workload w1 = qwen(), w2 = qwen({"model.moe_imbalance=1.5"});
  CHECK_FALSE(w1.model.tf.moe_imbalance_set);
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

TEST_CASE("moe: FP8 dispatch halves the tokens sent to the experts, the combine stays BF16") {
  const Cluster c = dgx(2);
  const Workload wb = qwen(), wf = qwen({"model.moe_dispatch_dtype=fp8"});
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
  fails({"model.moe_dispatch_dtype=int4"}, "moe_dispatch_dtype");
  fails({"model.moe_layer_freq=0"}, "moe_layer_freq");
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
