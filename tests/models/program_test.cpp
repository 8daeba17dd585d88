// Program invariants over many layouts: dependencies, groups, point-to-point matching, FLOPs,
// and a zero-time in-order execution that proves the schedule cannot deadlock.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"

using namespace tutti;
using tutti::testing::src;

namespace {

Workload load(const std::string& name) {
  return load_workload(src("models/" + name + ".json"));
}

std::uint32_t expected_size(const Layout& l, GroupDim g) {
  switch (g) {
    case GroupDim::TP:
      return l.tp;
    case GroupDim::CP:
      return l.cp;
    case GroupDim::DP:
      return l.dp;
    case GroupDim::DPxCP:
      return l.dp * l.cp;
    case GroupDim::EP:
      return l.ep;
    case GroupDim::PP:
      return l.pp;
    case GroupDim::EDP:
      return l.edp();
  }
  return 0;
}

/// Runs every stage's ops with zero duration: streams in order, deps respected, a Recv only after
/// its matching Send. Returns the number of ops that never ran (0: no deadlock).
std::size_t stuck_ops(const Program& p) {
  std::size_t n = p.classes.size();
  std::vector<std::vector<std::vector<std::uint32_t>>> queues(
      n, std::vector<std::vector<std::uint32_t>>(kNumStreams));
  std::vector<std::vector<std::size_t>> head(n, std::vector<std::size_t>(kNumStreams, 0));
  std::vector<std::vector<char>> done(n);
  std::set<std::pair<int, std::uint32_t>> sent;  // (destination stage, tag)
  std::size_t total = 0;
  for (std::size_t c = 0; c < n; ++c) {
    const auto& ops = p.classes[c].ops;
    done[c].assign(ops.size(), 0);
    total += ops.size();
    for (std::uint32_t i = 0; i < ops.size(); ++i) queues[c][int(ops[i].stream)].push_back(i);
  }
  std::size_t ran = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    for (std::size_t c = 0; c < n; ++c) {
      const auto& rc = p.classes[c];
      for (int s = 0; s < kNumStreams; ++s) {
        while (head[c][s] < queues[c][s].size()) {
          std::uint32_t i = queues[c][s][head[c][s]];
          const Op& o = rc.ops[i];
          bool ready = true;
          for (std::uint32_t d = 0; d < o.dep_count; ++d)
            ready = ready && done[c][rc.deps[o.dep_begin + d]];
          if (o.kind == OpKind::Recv) ready = ready && sent.count({int(c), o.tag});
          if (!ready) break;
          if (o.kind == OpKind::Send) sent.insert({int(c) + o.peer_delta, o.tag});
          done[c][i] = 1;
          ++head[c][s];
          ++ran;
          progress = true;
        }
      }
    }
  }
  return total - ran;
}

void check_program(const Workload& w, const Layout& l) {
  CAPTURE(to_string(l));
  Program p = expand_program(w, l);
  REQUIRE(p.classes.size() == std::size_t(l.pp));
  CHECK(p.world == l.gpus());
  // Names are interned once.
  std::set<std::string> names(p.names.begin(), p.names.end());
  CHECK(names.size() == p.names.size());
  double flops = 0;
  std::map<std::tuple<int, std::uint32_t>, std::tuple<int, double>> sends,
      recvs;  // (dst/src stage, tag)
  for (const auto& rc : p.classes) {
    CHECK(rc.multiplicity == std::uint32_t(l.tp * l.cp * l.dp));
    double f = 0;
    for (std::uint32_t i = 0; i < rc.ops.size(); ++i) {
      const Op& o = rc.ops[i];
      f += o.flops;
      CHECK(o.name < p.names.size());
      for (std::uint32_t d = 0; d < o.dep_count; ++d) {
        std::uint32_t dep = rc.deps[o.dep_begin + d];
        if (dep >= i) FAIL("dependency does not point backward: op ", i, " on ", dep);
      }
      bool comm = o.kind == OpKind::Collective || o.kind == OpKind::Send || o.kind == OpKind::Recv;
      CHECK(comm == (o.stream != Stream::Compute));
      if (o.kind == OpKind::Collective) {
        if (o.group_size != expected_size(l, o.group) || o.group_size < 2)
          FAIL("collective ", p.names[o.name], " over ", to_string(o.group), " has size ",
               o.group_size);
        CHECK(o.bytes > 0);
      }
      // Grouped expert GEMMs keep the mean-load FLOPs and are shaped for the busiest expert.
      if (o.kind == OpKind::Gemm && o.grouped == GroupedDim::None)
        CHECK(o.flops == doctest::Approx(2.0 * o.m * o.n * o.k * o.batch).epsilon(0.02));
      if (o.kind == OpKind::Gemm && o.grouped != GroupedDim::None)
        CHECK(o.flops <= 2.0 * o.m * o.n * o.k * o.batch * (1 + 1e-9));
      if (o.kind == OpKind::Send) {
        int dst = rc.stage + o.peer_delta;
        CHECK((dst >= 0 && dst < l.pp));
        CHECK(
            sends.emplace(std::make_tuple(dst, o.tag), std::make_tuple(rc.stage, o.bytes)).second);
      }
      if (o.kind == OpKind::Recv) {
        int from = rc.stage + o.peer_delta;
        CHECK(
            recvs.emplace(std::make_tuple(rc.stage, o.tag), std::make_tuple(from, o.bytes)).second);
      }
    }
    flops += f * rc.multiplicity;
    // One class per stage: with a single stage every rank does 1/ranks of the work.
    if (l.pp == 1)
      CHECK(f == doctest::Approx(hardware_flops_per_iteration(w, l) / l.gpus()).epsilon(1e-9));
  }
  CHECK(sends.size() == recvs.size());
  for (const auto& [key, val] : sends) {
    auto it = recvs.find(key);
    if (it == recvs.end()) FAIL("send without a matching recv, tag ", std::get<1>(key));
    CHECK(std::get<0>(it->second) == std::get<0>(val));  // the recv names the sender's stage
    CHECK(std::get<1>(it->second) == std::get<1>(val));
  }
  CHECK(flops == doctest::Approx(p.hardware_flops_per_iteration).epsilon(1e-9));
  CHECK(flops == doctest::Approx(hardware_flops_per_iteration(w, l)).epsilon(1e-9));
  CHECK(p.model_flops_per_iteration ==
        doctest::Approx(model_flops_per_iteration(w)).epsilon(1e-12));
  CHECK(stuck_ops(p) == 0);
}

}  // namespace

TEST_CASE(
    "program: invariants for dense transformers over schedules, ZeRO stages, CP, SP, recompute") {
  Workload w = load("tiny-gpt");
  const char* flags[] = {
      "tp=1,pp=1,dp=1",
      "tp=2,pp=2,dp=2",
      "tp=2,pp=2,dp=2,sp=0",
      "tp=2,pp=4,dp=1,vp=3,mb=1",
      "tp=1,pp=3,dp=2,schedule=gpipe",
      "tp=2,pp=2,dp=2,zero=0",
      "tp=2,pp=2,dp=2,zero=2",
      "tp=2,pp=2,dp=2,zero=3",
      "tp=1,pp=1,dp=4,fsdp=1,mb=2",
      "tp=2,pp=2,dp=2,cp=2",
      "tp=2,pp=2,dp=2,recompute=selective",
      "tp=2,pp=2,dp=2,recompute=full",
      "tp=4,pp=4,dp=2,vp=3,cp=2,recompute=full,mb=2",
      "tp=2,pp=2,dp=2,tp_overlap=1",
      "tp=4,pp=2,dp=2,vp=2,recompute=selective,tp_overlap=1",
      "tp=2,pp=2,dp=2,cp=2,recompute=full,zero=3,tp_overlap=1",
      "tp=2,pp=2,dp=2,sp=0,tp_overlap=1",
  };
  for (const char* f : flags) {
    Layout l = parse_layout_flag(f, resolve_layout(w));
    if (std::string(f).find("mb=") == std::string::npos) l.micro_batch = 4;
    check_program(w, l);
  }
}

TEST_CASE("program: invariants for MoE, encoder, ResNet, DLRM") {
  Workload mx = load("mixtral-8x7b");
  mx.training.global_batch = 64;
  check_program(mx, parse_layout_flag("tp=2,pp=2,dp=4,ep=4", resolve_layout(mx)));
  check_program(mx, parse_layout_flag("tp=1,pp=2,dp=4,ep=2,cp=2,zero=3", resolve_layout(mx)));
  check_program(mx, parse_layout_flag("tp=2,pp=1,dp=2,ep=1", resolve_layout(mx)));
  check_program(mx, parse_layout_flag("tp=2,pp=2,dp=4,ep=4,tp_overlap=1", resolve_layout(mx)));
  Workload ds = load("deepseek-v3");
  ds.training.global_batch = 64;
  check_program(ds, parse_layout_flag("tp=1,pp=4,dp=8,ep=8", resolve_layout(ds)));
  // Interleaved MoE/dense layers (moe_layer_freq 2), a shared expert, FP8 GEMMs.
  Workload l4 = load("llama4-maverick");
  l4.training.global_batch = 64;
  check_program(l4, parse_layout_flag("tp=2,pp=4,dp=8,ep=8", resolve_layout(l4)));
  // Parallel folding: EP over tp x dp, experts not TP-sharded, the shared expert keeps TP.
  check_program(l4, parse_layout_flag("tp=2,pp=4,dp=4,ep=8,etp=1,sp=1", resolve_layout(l4)));
  Workload q3 = load("qwen3-30b-a3b");
  q3.training.global_batch = 64;
  q3.model.tf.moe_imbalance = 1.3;
  q3.model.tf.moe_dispatch_dtype = DType::FP8;
  q3.model.tf.moe_dispatch_dtype_set = true;
  check_program(q3, parse_layout_flag("tp=2,pp=2,dp=8,ep=8,zero=3", resolve_layout(q3)));
  check_program(q3, parse_layout_flag("tp=4,pp=1,dp=4,ep=16,etp=1,sp=1", resolve_layout(q3)));
  // Selective recompute of modules (Megatron --recompute-modules): the recomputed forward ops
  // keep the invariants and their FLOPs are the formula's.
  check_program(mx, parse_layout_flag("tp=2,pp=1,dp=2,ep=1,recompute_modules=moe+layernorm",
                                      resolve_layout(mx)));
  check_program(q3, parse_layout_flag("tp=4,pp=1,dp=4,ep=16,etp=1,sp=1,recompute_modules=moe",
                                      resolve_layout(q3)));
  check_program(l4, parse_layout_flag("tp=2,pp=1,dp=8,ep=8,recompute_modules=mlp+shared_experts+"
                                      "moe_act+core_attn",
                                      resolve_layout(l4)));
  check_program(l4, parse_layout_flag("tp=2,pp=4,dp=4,ep=8,etp=1,sp=1,recompute_modules=moe+mlp",
                                      resolve_layout(l4)));
  Workload bert = load("bert-large");
  check_program(bert, parse_layout_flag("tp=2,pp=2,dp=2", resolve_layout(bert)));
  Workload vit = load("vit-b16");
  vit.training.global_batch = 16;
  check_program(vit, parse_layout_flag("tp=2,pp=2,dp=2,mb=2", resolve_layout(vit)));
  Workload rn = load("resnet50");
  check_program(rn, parse_layout_flag("dp=8", resolve_layout(rn)));
  check_program(rn, parse_layout_flag("dp=8,zero=1", resolve_layout(rn)));
  Workload dl = load("dlrm");
  check_program(dl, resolve_layout(dl));
}

TEST_CASE("program: layer and micro-batch counts follow the layout") {
  Workload w = load("tiny-gpt");
  Layout l = parse_layout_flag("tp=2,pp=2,dp=2,mb=4", resolve_layout(w));
  Program p = expand_program(w, l);
  int M = microbatches(w, l);
  CHECK(M == 4);
  for (const auto& rc : p.classes) {
    int qkv = 0, sends = 0, dp_reduce = 0;
    for (const auto& o : rc.ops) {
      if (p.names[o.name] == "attn.qkv") ++qkv;
      if (o.kind == OpKind::Send) ++sends;
      if (o.kind == OpKind::Collective && (o.group == GroupDim::DP)) ++dp_reduce;
    }
    CHECK(qkv == M * 6);
    CHECK(sends == M);
    CHECK(dp_reduce >= 2);  // gradient reduce-scatter + parameter all-gather
  }
}

TEST_CASE("program: tp_overlap moves TP collectives beside the GEMMs, same FLOPs and bytes") {
  Workload w = load("tiny-gpt");
  for (const char* f : {"tp=4,pp=2,dp=2,mb=2", "tp=2,pp=2,dp=2,vp=2,recompute=selective",
                        "tp=4,pp=1,dp=2,recompute=full"}) {
    CAPTURE(f);
    Layout l = parse_layout_flag(f, resolve_layout(w));
    Layout lo = l;
    lo.tp_overlap = true;
    Program a = expand_program(w, l), b = expand_program(w, lo);
    ProgramSummary sa = summarize(a), sb = summarize(b);
    CHECK(sb.flops_all_ranks == doctest::Approx(sa.flops_all_ranks).epsilon(1e-12));
    CHECK(b.hardware_flops_per_iteration ==
          doctest::Approx(a.hardware_flops_per_iteration).epsilon(1e-12));
    REQUIRE(sa.collectives.size() == sb.collectives.size());
    for (std::size_t i = 0; i < sa.collectives.size(); ++i) {
      CHECK(sa.collectives[i].coll == sb.collectives[i].coll);
      CHECK(sb.collectives[i].bytes_all_ranks ==
            doctest::Approx(sa.collectives[i].bytes_all_ranks).epsilon(1e-12));
    }
    // Modest growth: per layer, a third GEMM op for each ring exchange, a second GEMM and
    // reduce-scatter op for each pipelined reduce-scatter.
    CHECK(sb.ops > sa.ops);
    CHECK(sb.ops < sa.ops * 13 / 10);
    // Some GEMM runs beside a TP collective (flagged), and some TP collective has a GEMM that
    // does not wait for it; without tp_overlap, none.
    auto flagged = [](const Program& p) {
      int n = 0;
      for (const auto& rc : p.classes)
        for (const auto& o : rc.ops) n += o.tp_overlap ? 1 : 0;
      return n;
    };
    CHECK(flagged(a) == 0);
    CHECK(flagged(b) > 0);
  }
  // Without sequence parallelism (or tp = 1) tp_overlap changes nothing.
  for (const char* f : {"tp=2,pp=2,dp=2,sp=0", "tp=1,pp=2,dp=4"}) {
    Layout l = parse_layout_flag(f, resolve_layout(w));
    Layout lo = l;
    lo.tp_overlap = true;
    CHECK(summarize(expand_program(w, lo)).ops == summarize(expand_program(w, l)).ops);
  }
}

TEST_CASE("program: Llama 3 405B on 16,384 GPUs stays small") {
  Workload w = load("llama3-405b");
  Layout l = resolve_layout(w, "", 16384);
  Program p = expand_program(w, l);
  ProgramSummary s = summarize(p);
  CHECK(p.classes.size() == 16);
  CHECK(p.world == 16384);
  CHECK(s.ops < 200000);
  CHECK(p.names.size() < 100);
  MESSAGE("llama3-405b ops: ", s.ops);
  l.tp_overlap = true;
  ProgramSummary so = summarize(expand_program(w, l));
  CHECK(so.ops < s.ops * 13 / 10);
  MESSAGE("llama3-405b ops with tp_overlap: ", so.ops);
}

TEST_CASE("program: the deadlock check itself catches a recv posted before its send") {
  Workload w = load("tiny-gpt");
  Program p = expand_program(w, parse_layout_flag("tp=1,pp=2,dp=1,mb=4", resolve_layout(w)));
  CHECK(stuck_ops(p) == 0);
  // Stage 0 waits for the gradient of micro-batch 0 before sending any activation: a deadlock.
  auto& ops = p.classes[0].ops;
  auto recv =
      std::find_if(ops.begin(), ops.end(), [](const Op& o) { return o.kind == OpKind::Recv; });
  REQUIRE(recv != ops.end());
  Op r = *recv;
  ops.erase(recv);
  for (auto& o : ops) o.dep_count = 0;  // indices shifted; dependencies are not what is tested here
  ops.insert(ops.begin(), r);
  CHECK(stuck_ops(p) > 0);
}

TEST_CASE("program: FSDP gathers each layer before forward and backward, reduce-scatters after") {
  Workload w = load("tiny-gpt");
  Layout l = parse_layout_flag("tp=1,pp=1,dp=4,fsdp=1,mb=2", resolve_layout(w));
  Program p = expand_program(w, l);
  int M = microbatches(w, l);
  REQUIRE(M == 4);
  int gathers = 0, scatters = 0, prefetched = 0;
  const auto& rc = p.classes[0];
  for (const auto& o : rc.ops) {
    if (o.kind != OpKind::Collective) continue;
    CHECK(o.stream == Stream::CommDP);
    if (p.names[o.name] == "fsdp.param_allgather") {
      ++gathers;
      if (o.dep_count > 0) ++prefetched;  // issued once the previous layer started
    }
    if (p.names[o.name] == "fsdp.grad_reducescatter" ||
        p.names[o.name] == "zero3.grad_reducescatter")
      ++scatters;
  }
  // Per micro-batch: 12 layers + embedding + head in forward, 12 layers + head in backward.
  CHECK(gathers == M * (12 + 1 + 1 + 12 + 1));
  // Per micro-batch: 12 layers + embedding + head.
  CHECK(scatters == M * 14);
  CHECK(prefetched > M * 20);
  // No parameter all-gather after the optimizer: the parameters stay sharded.
  CHECK(p.names.end() == std::find(p.names.begin(), p.names.end(), "dp.param_allgather"));
  // Memory: every state is sharded over the 4 ranks.
  auto m3 = memory_per_gpu(w, l);
  Layout z0 = l;
  z0.zero = 0;
  z0.fsdp = false;
  auto m0 = memory_per_gpu(w, z0);
  CHECK(m3.weights_bytes == doctest::Approx(m0.weights_bytes / 4));
  CHECK(m3.gradients_bytes == doctest::Approx(m0.gradients_bytes / 4));
  CHECK(m3.optimizer_bytes == doctest::Approx(m0.optimizer_bytes / 4));
  CHECK(m3.temporary_bytes > m0.temporary_bytes);  // gathered layers
}

TEST_CASE("program: flash_attention_version 1 marks every fused attention op, nothing else") {
  Workload w = load("tiny-gpt");
  Layout l = parse_layout_flag("tp=2,pp=2,dp=2,recompute=selective", resolve_layout(w));
  w.training.flash_attention_version = 1;
  Program p = expand_program(w, l);
  std::size_t attn = 0, marked = 0;
  for (const auto& rc : p.classes)
    for (const auto& o : rc.ops) {
      attn += o.kind == OpKind::Attention;
      marked += o.flash_v1;
      if (o.flash_v1) CHECK(o.kind == OpKind::Attention);
    }
  CHECK(attn > 0);
  CHECK(marked == attn);
  w.training.flash_attention_version = 2;
  for (const auto& rc : expand_program(w, l).classes)
    for (const auto& o : rc.ops) CHECK_FALSE(o.flash_v1);
  // The key is checked: only 1 or 2.
  CHECK_THROWS_WITH_AS(
      load_workload(src("models/tiny-gpt.json"), {"training.flash_attention_version=3"}),
      doctest::Contains("training.flash_attention_version: got 3"), InputError);
}

TEST_CASE("program: unfused attention and frozen (LoRA) weights keep the invariants") {
  Workload w = load("tiny-gpt");
  Layout l = parse_layout_flag("tp=2,pp=2,dp=2,recompute=selective", resolve_layout(w));
  Program fused = expand_program(w, l);
  w.training.flash_attention = false;
  check_program(w, l);
  check_program(w, parse_layout_flag("tp=2,pp=1,dp=4", resolve_layout(w)));
  Program unfused = expand_program(w, l);
  auto count = [](const Program& p, const char* name) {
    std::size_t n = 0;
    for (const auto& rc : p.classes)
      for (const auto& o : rc.ops) n += p.names[o.name] == name;
    return n;
  };
  // The s x s scores go through HBM: softmax (and dropout: tiny-gpt has it) passes, recomputed
  // under selective recompute; the fused kernel is gone; causal work is no longer halved.
  CHECK(count(fused, "attn.softmax") == 0);
  CHECK(count(unfused, "attn.core") == 0);
  CHECK(count(unfused, "attn.softmax") == 2 * count(unfused, "attn.softmax_bwd"));
  CHECK(count(unfused, "attn.dropout") == count(unfused, "attn.softmax"));
  CHECK(unfused.hardware_flops_per_iteration > fused.hardware_flops_per_iteration);
  // Frozen base weights: no weight-gradient GEMMs, no DP gradient reduction, no optimizer bytes.
  w.training.frozen_weights = true;
  check_program(w, l);
  Program lora = expand_program(w, l);
  CHECK(count(lora, "mlp.up_wgrad") == 0);
  CHECK(count(lora, "attn.qkv_wgrad") == 0);
  CHECK(count(lora, "dp.grad_reduce") == 0);
  CHECK(count(unfused, "mlp.up_wgrad") > 0);
  for (const auto& rc : lora.classes)
    for (const auto& o : rc.ops)
      if (lora.names[o.name] == "optimizer.step") CHECK(o.bytes == 0);
  CHECK(lora.hardware_flops_per_iteration < unfused.hardware_flops_per_iteration);
  MemoryBreakdown m = memory_per_gpu(w, l);
  CHECK(m.gradients_bytes == 0);
  CHECK(m.optimizer_bytes == 0);
}
