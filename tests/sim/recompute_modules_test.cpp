// Selective recompute by module (Megatron-Core --recompute-modules; issue 18): the layout key,
// the recomputed forward ops in backward (the MoE module with its all-to-alls), the memory it
// frees, the FLOP counts, and the three engines agreeing on it.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "../support/cluster_fixture.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

Cluster dgx(int nodes) {
  return testing::dgx_h100_fat_tree("recompute-test", nodes);
}

Workload qwen() {
  return load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/qwen3-30b-a3b.json",
                       {"model.layers=2", "training.global_batch=16"});
}

// Recompute-phase ops of class 0 by name, and their FLOPs.
std::map<std::string, int> recomputed(const Program& p, double* flops = nullptr) {
  std::map<std::string, int> n;
  for (const Op& op : p.classes[0].ops)
    if (op.phase == Phase::Recompute) {
      n[p.names[op.name]]++;
      if (flops) *flops += op.flops;
    }
  return n;
}

}  // namespace

TEST_CASE("recompute modules: the layout key parses, prints and refuses what is not a module") {
  Layout l = parse_layout_flag("tp=2,recompute_modules=layernorm+moe");
  CHECK(l.recompute == Recompute::Selective);
  CHECK(l.recomputes(RecomputeModule::LayerNorm));
  CHECK(l.recomputes(RecomputeModule::Moe));
  CHECK_FALSE(l.recomputes(RecomputeModule::CoreAttn));
  CHECK_FALSE(l.recomputes(RecomputeModule::MoeAct));
  CHECK(to_string(l).find(",recompute_modules=layernorm+moe") != std::string::npos);
  CHECK(to_compact_string(l).find("sel:layernorm+moe") != std::string::npos);
  const Layout back = parse_layout_flag(to_string(l));
  CHECK(back.recompute_modules == l.recompute_modules);
  CHECK(back.recompute == Recompute::Selective);
  // Megatron's default list is plain selective, printed as before.
  const Layout sel = parse_layout_flag("recompute=selective");
  const Layout core = parse_layout_flag("recompute_modules=core_attn");
  CHECK(core.recompute_modules == 0);
  CHECK(to_string(core) == to_string(sel));
  CHECK(sel.recomputes(RecomputeModule::CoreAttn));
  CHECK_FALSE(sel.recomputes(RecomputeModule::LayerNorm));
  CHECK_FALSE(parse_layout_flag("recompute=full").recomputes(RecomputeModule::CoreAttn));
  try {
    parse_layout_flag("recompute_modules=layernorm+norm");
    FAIL("an unknown module name was accepted");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(m.find("\"norm\"") != std::string::npos);
    CHECK(m.find("shared_experts") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_layout_flag("recompute=full,recompute_modules=moe"), InputError);
  // tutti models no MLA: its up projection cannot be recomputed.
  Workload w = qwen();
  CHECK_THROWS_AS(check_layout(w, parse_layout_flag("recompute_modules=mla_up_proj"), 0),
                  InputError);
}

TEST_CASE("recompute modules: each module re-runs its own forward ops in backward") {
  const Workload w = qwen();
  const Layout base = resolve_layout(w, "tp=2,pp=1,ep=8,zero=1,sp=1,recompute=none", 16);
  const int M = microbatches(w, base), layers = w.model.tf.layers;
  // layernorm + moe: both norms, the router, permutations, both all-to-alls and the experts.
  const Layout lm = parse_layout_flag("recompute_modules=layernorm+moe", base);
  double flops = 0;
  auto n = recomputed(expand_program(w, lm), &flops);
  CHECK(n["attn.norm"] == layers * M);
  CHECK(n["mlp.norm"] == layers * M);
  CHECK(n["moe.dispatch_alltoall"] == layers * M);
  CHECK(n["moe.combine_alltoall"] == layers * M);
  CHECK(n["moe.router"] == layers * M);
  CHECK(n["moe.expert_up"] == layers * M);
  CHECK(n["mlp.tp_allgather"] == layers * M);  // the TP all-gather into the MoE layer
  CHECK(n.count("attn.core_recompute") == 0);
  CHECK(n.count("attn.qkv") == 0);
  // The recomputed FLOPs are the MoE layers' forward FLOPs.
  double moe_fwd = 0;
  const Program pb = expand_program(w, base);
  for (const Op& op : pb.classes[0].ops)
    if (op.phase == Phase::Forward && op.moe_part != MoePart::None) moe_fwd += op.flops;
  CHECK(flops == doctest::Approx(moe_fwd));
  CHECK(recomputed(pb).empty());
  // moe_act: only the experts' activation, no communication.
  n = recomputed(expand_program(w, parse_layout_flag("recompute_modules=moe_act", base)));
  CHECK(n.size() == 1);
  CHECK(n["moe.expert_act"] == layers * M);
  // core_attn is the default selective recompute.
  n = recomputed(expand_program(w, parse_layout_flag("recompute=selective", base)));
  CHECK(n.size() == 1);
  CHECK(n["attn.core_recompute"] == layers * M);
}

TEST_CASE("recompute modules: activations of recomputed modules are freed, FLOP counts follow") {
  const Workload w = qwen();
  const Layout none = resolve_layout(w, "tp=2,pp=1,ep=8,zero=1,sp=1,recompute=none", 16);
  auto act = [&](const std::string& mods) {
    return activation_bytes_per_layer(w, parse_layout_flag("recompute_modules=" + mods, none), 0);
  };
  const double a0 = activation_bytes_per_layer(w, none, 0);
  const auto& t = w.model.tf;
  const double sb = double(w.training.seq_len) * none.micro_batch, h = t.hidden, B = 2;
  // layernorm: the two norm outputs (sequence-parallel shards).
  CHECK(a0 - act("layernorm") == doctest::Approx(2.0 * B * h * sb / none.tp));
  // moe_act: the routed experts' activation output, f per routed copy (busiest rank).
  CHECK(a0 - act("moe_act") ==
        doctest::Approx(B * t.top_k * t.moe_load_factor() * t.moe_ffn_hidden * sb / none.tp));
  CHECK(act("moe") < act("moe_act"));
  CHECK(act("layernorm+moe") < act("moe"));
  // The whole-stage estimate drops, minus what one layer rebuilds in backward.
  const Layout lm = parse_layout_flag("recompute_modules=layernorm+moe", none);
  CHECK(memory_per_gpu(w, lm).activations_bytes < memory_per_gpu(w, none).activations_bytes);
  CHECK(memory_per_gpu(w, lm).temporary_bytes > memory_per_gpu(w, none).temporary_bytes);
  // Hardware FLOPs count the recomputed MoE forward; Megatron-Core's reported FLOPs do not.
  CHECK(hardware_flops_per_iteration(w, lm) > hardware_flops_per_iteration(w, none));
  CHECK(megatron_flops_per_iteration(w, lm.recompute, lm.recompute_modules) ==
        model_flops_per_iteration(w));
  const Layout cm = parse_layout_flag("recompute_modules=core_attn+moe", none);
  CHECK(megatron_flops_per_iteration(w, cm.recompute, cm.recompute_modules) ==
        megatron_flops_per_iteration(w, Recompute::Selective));
}

TEST_CASE("recompute modules: all three engines agree, the MoE recompute adds its all-to-alls") {
  const Cluster c = dgx(2);
  const SimCluster sc = sim_cluster(c);
  const CalibrationProfile& prof = default_calibration();
  const Workload w = qwen();
  const Layout base = resolve_layout(w, "tp=1,pp=1,ep=16,zero=1,recompute=none", c.gpus());
  const Layout lm = parse_layout_flag("recompute_modules=layernorm+moe", base);
  const Program p = expand_program(w, lm);
  const SimResult n = simulate_program(p, sc, prof), a = simulate_program_analytic(p, sc, prof),
                  s = simulate_program_simgrid(p, sc, prof);
  const SimResult nb = simulate_program(expand_program(w, base), sc, prof);
  // Forward and backward run two all-to-alls each; the recomputed forward two more.
  CHECK(n.breakdown.moe_s[MoePart::AllToAll] ==
        doctest::Approx(1.5 * nb.breakdown.moe_s[MoePart::AllToAll]).epsilon(0.05));
  CHECK(n.iteration_time_s > nb.iteration_time_s);
  CHECK(a.breakdown.moe_s[MoePart::AllToAll] ==
        doctest::Approx(n.breakdown.moe_s[MoePart::AllToAll]).epsilon(0.02));
  CHECK(s.breakdown.moe_s[MoePart::AllToAll] ==
        doctest::Approx(n.breakdown.moe_s[MoePart::AllToAll]).epsilon(0.02));
  CHECK(a.iteration_time_s == doctest::Approx(n.iteration_time_s).epsilon(0.02));
  CHECK(s.iteration_time_s == doctest::Approx(n.iteration_time_s).epsilon(0.02));
}
