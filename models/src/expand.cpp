// Expansion of one training iteration into the Program (one RankClass per pipeline stage).
// Why the structure: every op of a class is appended once, in program order, through Builder,
// which records dependencies as index ranges; names are interned once up front (Names), so the
// per-op cost is a push_back. See models/README.md for the op sequence of each layer.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shapes.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"

namespace tutti {
namespace {

using namespace detail;
constexpr std::uint32_t kNone = 0xffffffffu;
/// Megatron-LM DDP bucket size: max(40M, 1M * dp) parameters (megatron/core/distributed).
constexpr double kMegatronBucketParams = 40e6;
/// Cross entropy over the (vocab-parallel) logits, in fp32 as Megatron-LM's
/// vocab_parallel_cross_entropy runs it (megatron/core/tensor_parallel/cross_entropy.py), HBM bytes
/// per logit. Forward: cast the bf16 logits to fp32 (2 read + 4 write), max (4), subtract the max
/// in place (8), exp in place (8), sum (4), divide in place, saved for backward (8) = 38.
/// Backward: scale the saved softmax by the incoming gradient in place (8), cast back to bf16 for
/// the logits' dgrad (4 + 2) = 14.
constexpr double kCrossEntropyFwdBytes = 38.0;
constexpr double kCrossEntropyBwdBytes = 14.0;
/// PyTorch DDP bucket: 25 MiB of gradients (torch.nn.parallel.DistributedDataParallel).
constexpr double kTorchBucketBytes = 25.0 * 1024 * 1024;

/// Bytes a quantize-and-transpose pass moves per element of a GEMM input: read BF16 (2), write the
/// quantized copy and its transpose with their scale factors (2 * dtype_bytes; fp8: 1 + 1 = 4 in
/// all).
double cast_bytes_per_element(DType dt) {
  return 2.0 + 2.0 * dtype_bytes(dt);
}

class Builder {
 public:
  Builder(Program& p, RankClass& rc) : p_(p), rc_(rc) {}

  std::uint32_t add(Op op, std::initializer_list<std::uint32_t> deps = {}) {
    // FP8 and block-scaled (MXFP8, NVFP4, ...) recipes (Transformer Engine, DeepSeek-V3) run GEMMs
    // in that format; attention, element-wise ops and communication stay in BF16.
    if (is_gemm_only_dtype(op.dtype) && op.kind != OpKind::Gemm) op.dtype = DType::BF16;
    op.dep_begin = static_cast<std::uint32_t>(rc_.deps.size());
    for (auto d : deps)
      if (d != kNone) rc_.deps.push_back(d);
    op.dep_count = static_cast<std::uint32_t>(rc_.deps.size()) - op.dep_begin;
    rc_.ops.push_back(op);
    return static_cast<std::uint32_t>(rc_.ops.size() - 1);
  }
  /// Appends `op` to the current data-flow chain: it depends on the previous chain op when that
  /// op ran on another stream (same-stream order is implicit), plus `extra`.
  std::uint32_t chain(Op op, std::uint32_t extra = kNone) {
    std::uint32_t dep = (prev_ != kNone && rc_.ops[prev_].stream != op.stream) ? prev_ : kNone;
    std::uint32_t i = add(op, {dep, extra == dep ? kNone : extra});
    prev_ = i;
    return i;
  }
  std::uint32_t prev() const { return prev_; }
  void set_prev(std::uint32_t p) { prev_ = p; }
  const Op& op(std::uint32_t i) const { return rc_.ops[i]; }
  /// Interned id of a string literal; cached by address so the hot path does not allocate.
  std::uint16_t name(const char* n) {
    for (const auto& [ptr, id] : name_cache_)
      if (ptr == n) return id;
    std::uint16_t id = p_.intern(n);
    name_cache_.emplace_back(n, id);
    return id;
  }
  std::size_t size() const { return rc_.ops.size(); }

 private:
  Program& p_;
  RankClass& rc_;
  std::uint32_t prev_ = kNone;
  std::vector<std::pair<const char*, std::uint16_t>> name_cache_;
};

// ---- op constructors ---------------------------------------------------------------------------

Op gemm(std::uint16_t name, double m, double n, double k, double batch, Phase ph, DType dt,
        std::uint32_t mb) {
  Op o;
  o.kind = OpKind::Gemm;
  o.name = name;
  o.phase = ph;
  o.dtype = dt;
  o.microbatch = mb;
  o.m = std::llround(m);
  o.n = std::llround(n);
  o.k = std::llround(k);
  o.batch = std::llround(batch);
  o.flops = 2.0 * m * n * k * batch;
  return o;
}
Op membound(std::uint16_t name, double bytes, Phase ph, DType dt, std::uint32_t mb) {
  Op o;
  o.kind = OpKind::MemBound;
  o.name = name;
  o.phase = ph;
  o.dtype = dt;
  o.microbatch = mb;
  o.bytes = bytes;
  return o;
}
Op coll(std::uint16_t name, Coll c, GroupDim g, std::uint32_t size, double bytes, Stream s,
        Phase ph, DType dt, std::uint32_t mb) {
  Op o;
  o.kind = OpKind::Collective;
  o.name = name;
  o.coll = c;
  o.group = g;
  o.group_size = size;
  o.bytes = bytes;
  o.stream = s;
  o.phase = ph;
  o.dtype = dt;
  o.microbatch = mb;
  return o;
}

// ---- per-class context -----------------------------------------------------------------------

struct Ctx {
  const Workload& w;
  const Layout& l;
  Program& p;
  int stage = 0;
  int M = 1;  // micro-batches
  int V = 1;  // virtual stages
  DType dt = DType::BF16;
  double B = 2, Bp = 2, Bg = 2;
  // Data-parallel groups.
  GroupDim dp_dim = GroupDim::DP;
  std::uint32_t dp_size = 1, edp_size = 1;
  // Dense-state sharding group (hybrid sharding: shard_group ranks, else the whole DP group) and
  // the number of its replicas (> 1 only with hybrid sharding).
  GroupDim shard_dim = GroupDim::DP;
  std::uint32_t shard_size = 1, replicas = 1;
  double bucket_params = kMegatronBucketParams;
  bool frozen = false;  // LoRA / adapter fine-tuning: the base weights get no gradients
};

/// Gradient buckets of one chunk, flushed as collectives on the DP stream.
struct Buckets {
  double dense = 0, expert = 0;                  // parameters per rank accumulated
  std::vector<std::uint32_t> reduce_ops;         // every reduce emitted (optimizer waits on them)
  std::vector<std::pair<double, double>> sizes;  // (dense, expert) params of each bucket
};

/// The dense gradient reduction of `params` parameters after op `after`: a reduce-scatter (or,
/// with zero=0, an all-reduce) over the sharding group, then with hybrid sharding an all-reduce
/// of the reduced shard (params/shard_size) across the group's replicas (FSDP HYBRID_SHARD).
/// Appends the ops the optimizer must wait for to `out`.
void dense_grad_reduce(Ctx& c, Builder& b, const char* name, Coll kind, double params,
                       std::uint32_t after, std::uint32_t mb, std::vector<std::uint32_t>& out) {
  const DType gd = c.w.training.grad_dtype;
  std::uint32_t r = after;
  if (c.shard_size > 1) {
    r = b.add(coll(b.name(name), kind, c.shard_dim, c.shard_size, params * c.Bg, Stream::CommDP,
                   Phase::Backward, gd, mb),
              {after});
    out.push_back(r);
  }
  if (c.replicas > 1)
    out.push_back(b.add(
        coll(b.name("dp.grad_allreduce_replicas"), Coll::AllReduce, GroupDim::DPReplica, c.replicas,
             params * c.Bg / c.shard_size, Stream::CommDP, Phase::Backward, gd, mb),
        {r}));
}

void flush_bucket(Ctx& c, Builder& b, Buckets& bk, std::uint32_t after, bool force) {
  if (c.frozen) return;
  if (!force && bk.dense + bk.expert < c.bucket_params) return;
  if (bk.dense + bk.expert <= 0) return;
  Coll kind = c.l.zero == 0 ? Coll::AllReduce : Coll::ReduceScatter;
  if (bk.dense > 0 && c.dp_size > 1)
    dense_grad_reduce(c, b, "dp.grad_reduce", kind, bk.dense, after, 0, bk.reduce_ops);
  if (bk.expert > 0 && c.edp_size > 1)
    bk.reduce_ops.push_back(
        b.add(coll(b.name("edp.grad_reduce"), kind, GroupDim::EDP, c.edp_size, bk.expert * c.Bg,
                   Stream::CommDP, Phase::Backward, c.w.training.grad_dtype, 0),
              {after}));
  bk.sizes.emplace_back(bk.dense, bk.expert);
  bk.dense = bk.expert = 0;
}

// ---- transformer layers ------------------------------------------------------------------------

struct TfShape {
  double T = 0;   // tokens per micro-batch on this rank (b*s/cp)
  double Ts = 0;  // tokens of sequence-sharded tensors (T/tp with SP)
  double h = 0, a = 0, g = 0, d = 0, t = 1, s = 0, sq = 0, b = 1;
  bool sp = false, causal = true;
  bool flash = true;      // fused (flash-style) attention kernel
  bool flash_v1 = false;  // the original FlashAttention kernel (slower than FA2)
  bool dropout = false;   // dropout on the attention probabilities and the residual branches
};

TfShape tf_shape(const Ctx& c) {
  const auto& t = c.w.model.tf;
  TfShape s;
  s.b = c.l.micro_batch;
  s.s = c.w.training.seq_len;
  s.sq = s.s / c.l.cp;
  s.T = s.b * s.sq;
  s.sp = c.l.sequence_parallel && c.l.tp > 1;
  s.t = c.l.tp;
  s.Ts = s.sp ? s.T / s.t : s.T;
  s.h = t.hidden;
  s.a = t.heads;
  s.g = t.kv_heads;
  s.d = t.hd();
  s.causal = c.w.model.family == ModelFamily::Transformer;
  s.flash = c.w.training.flash_attention;
  s.flash_v1 = s.flash && c.w.training.flash_attention_version == 1;
  s.dropout = t.dropout;
  return s;
}

/// TP collective entering a block (forward): all-gather with SP; nothing without (Megatron's f).
void tp_enter(Ctx& c, Builder& b, const TfShape& s, const char* name, Phase ph, std::uint32_t mb) {
  if (c.l.tp > 1 && s.sp)
    b.chain(coll(b.name(name), Coll::AllGather, GroupDim::TP, c.l.tp, s.T * s.h * c.B,
                 Stream::CommTP, ph, c.dt, mb));
}
/// TP collective leaving a block (forward): reduce-scatter with SP, all-reduce without (g).
void tp_exit(Ctx& c, Builder& b, const TfShape& s, const char* rs, const char* ar, Phase ph,
             std::uint32_t mb) {
  if (c.l.tp <= 1) return;
  b.chain(coll(b.name(s.sp ? rs : ar), s.sp ? Coll::ReduceScatter : Coll::AllReduce, GroupDim::TP,
               c.l.tp, s.T * s.h * c.B, Stream::CommTP, ph, c.dt, mb));
}

// ---- TP communication overlap (Megatron --tp-comm-overlap, Transformer Engine userbuffers) --
// Transformer Engine's defaults (transformer_engine/pytorch/module/base.py, initialize_ub):
// "ring_exchange" for the all-gather feeding qkv_fprop, fc1_fprop, proj_dgrad and fc2_dgrad: the
// GEMM runs on the local shard while the next shard arrives over the ring (tp steps, copy
// engines); "pipeline" for the reduce-scatter after proj_fprop and fc2_fprop: the GEMM output is
// split in kTpOverlapRsSplits chunks, chunk i reduce-scattered while chunk i+1 computes; "bulk"
// in backward: the all-gather of the input for the weight gradient runs during the dgrad GEMM,
// and the reduce-scatter of the input gradient during the wgrad GEMM.
// Each is expressed with the aggregate of its chunks (a pipeline of n uniform chunks with comm c
// and compute g per chunk takes the same time as: first chunk, then max((n-1)c, (n-1)g), then the
// last chunk), so a pair of ops becomes three or four, not 2n. GEMMs that run alongside a
// pipeline or bulk collective (TE reserves num_sm = 16 SMs for those; the ring exchange uses copy
// engines and 1 SM) are flagged `tp_overlap`; see the calibration's
// compute.tp_overlap_gemm_slowdown.
constexpr int kTpOverlapRsSplits = 4;  // TE initialize_ub default num_splits for "pipeline"

bool tp_overlap_on(const Ctx& c, const TfShape& s) {
  return c.l.tp_overlap && s.sp && c.l.tp > 1;
}

/// Splits a GEMM along m (tokens): the first part gets `frac` of the rows. FLOPs add up exactly.
std::pair<Op, Op> split_rows(const Op& g, double frac) {
  Op a = g, z = g;
  double m = static_cast<double>(g.m);
  double m1 = std::max(1.0, std::min(m - 1.0, std::round(m * frac)));
  a.m = std::llround(m1);
  z.m = g.m - a.m;
  a.flops = g.flops * m1 / m;
  z.flops = g.flops - a.flops;
  return {a, z};
}

/// TP all-gather (forward with SP, or the backward of a reduce-scatter) then the GEMM that
/// consumes it; with tp_overlap, a ring exchange: the GEMM's first tp-1 chunks run alongside the
/// all-gather, the last chunk after it.
void ag_then_gemm(Ctx& c, Builder& b, const TfShape& s, const char* ag_name, const Op& g, Phase ph,
                  std::uint32_t mb) {
  if (!s.sp || c.l.tp <= 1) {
    b.chain(g);
    return;
  }
  Op ag = coll(b.name(ag_name), Coll::AllGather, GroupDim::TP, c.l.tp, s.T * s.h * c.B,
               Stream::CommTP, ph, c.dt, mb);
  if (!tp_overlap_on(c, s) || g.m < 2) {
    b.chain(ag);
    b.chain(g);
    return;
  }
  const std::uint32_t before = b.prev();
  std::uint32_t ai = b.chain(ag);
  auto [g1, g2] = split_rows(g, double(c.l.tp - 1) / c.l.tp);
  b.set_prev(before);  // ring exchange drives copy engines (num_sm 1): the GEMM keeps its SMs
  b.chain(g1);
  b.chain(g2, ai);
}

/// A GEMM then the TP reduce-scatter of its output (all-reduce without SP); with tp_overlap,
/// pipelined in kTpOverlapRsSplits chunks: the first chunk's GEMM and the last chunk's
/// reduce-scatter stay exposed.
void gemm_then_rs(Ctx& c, Builder& b, const TfShape& s, const Op& g, const char* rs, const char* ar,
                  Phase ph, std::uint32_t mb) {
  if (!tp_overlap_on(c, s) || g.m < 2) {
    b.chain(g);
    tp_exit(c, b, s, rs, ar, ph, mb);
    return;
  }
  const double n = kTpOverlapRsSplits, full = s.T * s.h * c.B;
  auto [g0, g1] = split_rows(g, 1.0 / n);
  std::uint32_t gi0 = b.chain(g0);
  g1.tp_overlap = true;
  std::uint32_t gi1 = b.chain(g1);
  b.set_prev(gi0);
  b.chain(coll(b.name(rs), Coll::ReduceScatter, GroupDim::TP, c.l.tp, full * (n - 1) / n,
               Stream::CommTP, ph, c.dt, mb));
  b.chain(coll(b.name(rs), Coll::ReduceScatter, GroupDim::TP, c.l.tp, full / n, Stream::CommTP, ph,
               c.dt, mb),
          gi1);
}

/// Forward GEMM then, in backward, its dgrad (m, k, n) and wgrad (k, n, m).
void gemm_bwd(Ctx& c, Builder& b, const char* dname, const char* wname, double m, double n,
              double k, double batch, std::uint32_t mb, bool need_dgrad = true) {
  if (need_dgrad) b.chain(gemm(b.name(dname), m, k, n, batch, Phase::Backward, c.dt, mb));
  if (!c.frozen) b.chain(gemm(b.name(wname), k, n, m, batch, Phase::Backward, c.dt, mb));
}

double attn_core_flops(const TfShape& s, double heads_local) {
  return 4.0 * s.b * heads_local * s.sq * s.s * s.d * (s.causal ? 0.5 : 1.0);
}

Op attention_op(Builder& b, const char* name, const TfShape& s, Phase ph, DType dt,
                std::uint32_t mb, double flops_scale) {
  Op o;
  o.kind = OpKind::Attention;
  o.name = b.name(name);
  o.phase = ph;
  o.dtype = dt;
  o.microbatch = mb;
  double heads = s.a / s.t;
  o.batch = std::llround(s.b * heads);
  o.m = std::llround(s.sq);
  o.n = std::llround(s.s);
  o.k = std::llround(s.d);
  o.causal = s.causal;
  o.flash_v1 = s.flash_v1;
  o.flops = attn_core_flops(s, heads) * flops_scale;
  return o;
}

/// Bias-dropout-add of a residual branch (fused in Megatron-LM): read the branch and the residual,
/// write the sum, plus the 1-byte dropout mask (written forward, read backward).
double residual_bytes(const TfShape& s, double B) {
  return s.Ts * s.h * (3.0 * B + (s.dropout ? 1.0 : 0.0));
}

/// Elements of the s x s score tensor of one micro-batch on this rank (local heads).
double score_elems(const TfShape& s) {
  return s.b * (s.a / s.t) * s.sq * s.s;
}

/// Attention core forward. Flash: one fused kernel. Unfused (Megatron-LM before fused attention,
/// BERT reference implementations): batched GEMM Q K^T writing the full s x s scores (causal
/// masking does not skip work), a fused scale-mask-softmax pass over them (read + write),
/// dropout on the probabilities (read, write, 1-byte mask), and the batched GEMM with V.
void attention_forward(Ctx& c, Builder& b, const TfShape& s, Phase ph, std::uint32_t mb,
                       bool recompute) {
  if (s.flash) {
    b.chain(attention_op(b, recompute ? "attn.core_recompute" : "attn.core", s, ph, c.dt, mb, 1.0));
    return;
  }
  const double heads = s.a / s.t, n = score_elems(s), B = c.B;
  const DType dt =
      is_gemm_only_dtype(c.dt) ? DType::BF16 : c.dt;  // FP8/FP4 recipes keep these BMMs in BF16
  b.chain(gemm(b.name("attn.scores"), s.sq, s.s, s.d, s.b * heads, ph, dt, mb));
  b.chain(membound(b.name("attn.softmax"), 2.0 * n * B, ph, c.dt, mb));
  if (s.dropout) b.chain(membound(b.name("attn.dropout"), n * (2.0 * B + 1.0), ph, c.dt, mb));
  b.chain(gemm(b.name("attn.context"), s.sq, s.d, s.s, s.b * heads, ph, dt, mb));
}

/// Attention core backward (see attention_forward).
void attention_backward(Ctx& c, Builder& b, const TfShape& s, std::uint32_t mb) {
  const Phase ph = Phase::Backward;
  if (s.flash) {
    b.chain(attention_op(b, "attn.core_bwd", s, ph, c.dt, mb, 2.0));
    return;
  }
  const double heads = s.a / s.t, n = score_elems(s), B = c.B, bt = s.b * heads;
  const DType dt = is_gemm_only_dtype(c.dt) ? DType::BF16 : c.dt;
  b.chain(gemm(b.name("attn.context_dgrad"), s.sq, s.s, s.d, bt, ph, dt, mb));  // dP = dO V^T
  b.chain(gemm(b.name("attn.context_wgrad"), s.s, s.d, s.sq, bt, ph, dt, mb));  // dV = P^T dO
  if (s.dropout) b.chain(membound(b.name("attn.dropout_bwd"), n * (2.0 * B + 1.0), ph, c.dt, mb));
  b.chain(membound(b.name("attn.softmax_bwd"), 3.0 * n * B, ph, c.dt, mb));
  b.chain(gemm(b.name("attn.scores_dgrad_q"), s.sq, s.d, s.s, bt, ph, dt, mb));  // dQ = dS K
  b.chain(gemm(b.name("attn.scores_dgrad_k"), s.s, s.d, s.sq, bt, ph, dt, mb));  // dK = dS^T Q
}

/// The ZeRO-3 / FSDP parameter all-gather of one layer (bytes: the gathered layer on this rank).
std::uint32_t zero3_gather(Ctx& c, Builder& b, double dense_params, double expert_params, Phase ph,
                           std::uint32_t mb, std::uint32_t prefetch_after) {
  std::uint32_t last = kNone;
  if (dense_params > 0 && c.shard_size > 1)
    last = b.add(
        coll(b.name(c.l.fsdp ? "fsdp.param_allgather" : "zero3.param_allgather"), Coll::AllGather,
             c.shard_dim, c.shard_size, dense_params * c.Bp, Stream::CommDP, ph, c.dt, mb),
        {prefetch_after});
  if (expert_params > 0 && c.edp_size > 1)
    last = b.add(coll(b.name("zero3.expert_allgather"), Coll::AllGather, GroupDim::EDP, c.edp_size,
                      expert_params * c.Bp, Stream::CommDP, ph, c.dt, mb),
                 {prefetch_after});
  return last;
}

/// The MoE layer's sizes on one rank (the busiest EP rank: lock-step all-to-alls and grouped
/// GEMMs wait for it).
struct MoeSizes {
  double E = 0, k = 0, ep = 1, local = 1;  // experts, top-k, EP degree, experts per rank
  double T = 0;          // tokens entering the layer on this rank (the SP shard when folded)
  double et = 1;         // tensor parallelism of the expert weights
  bool folded = false;   // etp = 1 with tp > 1 (Layout::folded)
  double load = 1;       // busiest rank's tokens / mean (moe_load_factor)
  double tokens = 0;     // mean tokens per local expert: T * k / local
  double copies = 0;     // top-k copies this rank sends: T * k
  double Bd = 2;         // bytes per element sent to the experts
  double f = 0, fu = 0;  // expert FFN width (gate+up when gated)
};

MoeSizes moe_sizes(const Ctx& c, const TfShape& s) {
  const auto& t = c.w.model.tf;
  MoeSizes z;
  z.E = t.experts;
  z.k = t.top_k;
  z.ep = c.l.ep;
  z.local = z.E / z.ep;
  z.load = t.moe_load_factor();
  z.folded = c.l.folded();
  z.T = z.folded ? s.Ts : s.T;
  z.et = z.folded ? 1.0 : s.t;
  z.copies = z.T * z.k;
  z.tokens = z.copies / z.local;
  // FP8 dispatch: 1 byte per element plus one fp32 scale per 128 elements (DeepSeek-V3 1x128
  // tiles).
  const DType dd = moe_dispatch_dtype(c.w);
  z.Bd = dd == DType::FP8 ? 1.0 + 4.0 / 128.0 : dtype_bytes(dd);
  z.f = t.moe_ffn_hidden;
  z.fu = t.gated_mlp ? 2.0 * z.f : z.f;
  return z;
}

Op tagged(Op o, MoePart p, GroupedDim g = GroupedDim::None) {
  o.moe_part = p;
  o.grouped = g;
  return o;
}

/// A grouped GEMM: timed on the busiest expert's tokens (`busy` in the grouped dimension) while
/// `flops` keeps the mean-load FLOPs (Op::grouped).
Op grouped_gemm(std::uint16_t name, double m, double n, double k, double batch, double load,
                GroupedDim g, Phase ph, DType dt, std::uint32_t mb) {
  Op o = gemm(name, g == GroupedDim::M ? m * load : m, n, g == GroupedDim::K ? k * load : k, batch,
              ph, dt, mb);
  o.flops = 2.0 * m * n * k * batch;
  o.moe_part = MoePart::ExpertGemm;
  o.grouped = g;
  return o;
}

/// Forward of an MoE MLP as Megatron-Core's MoELayer with the all-to-all token dispatcher runs
/// it: router GEMM and gating (softmax or sigmoid + top-k), permutation of the top-k copies
/// (quantized to the dispatch dtype), dispatch all-to-all over EP, re-sort by local expert,
/// grouped expert GEMMs, un-sort, combine all-to-all, un-permutation (weighted sum of the k
/// copies), shared experts.
void shared_experts_forward(Ctx& c, Builder& b, const TfShape& s, Phase ph, std::uint32_t mb);

void moe_forward(Ctx& c, Builder& b, const TfShape& s, Phase ph, std::uint32_t mb) {
  const MoeSizes z = moe_sizes(c, s);
  const double B = c.B, h = s.h;
  b.chain(tagged(gemm(b.name("moe.router"), z.T, z.E, h, 1, ph, c.dt, mb), MoePart::Router));
  // Gating in fp32: read the logits, write the scores, write top-k weights (fp32) and ids (int64).
  b.chain(tagged(membound(b.name("moe.router_topk"), z.T * (8.0 * z.E + 12.0 * z.k), ph, c.dt, mb),
                 MoePart::Router));
  b.chain(tagged(membound(b.name("moe.permute"), z.T * h * B + z.copies * h * z.Bd, ph, c.dt, mb),
                 MoePart::Permute));
  const double recv = z.copies * z.load;  // copies the busiest rank receives
  if (z.ep > 1) {
    b.chain(tagged(coll(b.name("moe.dispatch_alltoall"), Coll::AllToAll, GroupDim::EP, c.l.ep,
                        recv * h * z.Bd, Stream::CommEP, ph, c.dt, mb),
                   MoePart::AllToAll));
    if (z.local > 1)  // received chunks are ordered by source rank: re-sort by local expert
      b.chain(tagged(membound(b.name("moe.sort_chunks"), 2.0 * recv * h * z.Bd, ph, c.dt, mb),
                     MoePart::Permute));
  }
  b.chain(grouped_gemm(b.name("moe.expert_up"), z.tokens, z.fu / z.et, h, z.local, z.load,
                       GroupedDim::M, ph, c.dt, mb));
  b.chain(tagged(membound(b.name("moe.expert_act"), recv * (z.fu + z.f) / z.et * B, ph, c.dt, mb),
                 MoePart::ExpertGemm));
  b.chain(grouped_gemm(b.name("moe.expert_down"), z.tokens, h, z.f / z.et, z.local, z.load,
                       GroupedDim::M, ph, c.dt, mb));
  if (z.ep > 1) {
    if (z.local > 1)
      b.chain(tagged(membound(b.name("moe.unsort_chunks"), 2.0 * recv * h * B, ph, c.dt, mb),
                     MoePart::Permute));
    b.chain(tagged(coll(b.name("moe.combine_alltoall"), Coll::AllToAll, GroupDim::EP, c.l.ep,
                        recv * h * B, Stream::CommEP, ph, c.dt, mb),
                   MoePart::AllToAll));
  }
  b.chain(tagged(membound(b.name("moe.unpermute"), z.copies * h * B + z.T * h * B, ph, c.dt, mb),
                 MoePart::Permute));
  shared_experts_forward(c, b, s, ph, mb);
}

/// Forward of the MoE layer's shared experts (moe_forward runs them after the routed experts).
void shared_experts_forward(Ctx& c, Builder& b, const TfShape& s, Phase ph, std::uint32_t mb) {
  const auto& t = c.w.model.tf;
  const MoeSizes z = moe_sizes(c, s);
  const double B = c.B, h = s.h;
  if (t.shared_experts > 0) {
    const double f = double(t.shared_experts) * z.f, fu = t.gated_mlp ? 2.0 * f : f;
    // Folded: the shared experts are TP-sharded like the dense MLP, around their own
    // all-gather / reduce-scatter of the sequence shards.
    if (z.folded) tp_enter(c, b, s, "moe.shared_tp_allgather", ph, mb);
    b.chain(tagged(gemm(b.name("moe.shared_up"), s.T, fu / s.t, h, 1, ph, c.dt, mb),
                   MoePart::SharedExpert));
    b.chain(tagged(membound(b.name("moe.shared_act"), s.T * (fu + f) / s.t * B, ph, c.dt, mb),
                   MoePart::SharedExpert));
    b.chain(tagged(gemm(b.name("moe.shared_down"), s.T, h, f / s.t, 1, ph, c.dt, mb),
                   MoePart::SharedExpert));
    if (z.folded)
      tp_exit(c, b, s, "moe.shared_tp_reducescatter", "moe.shared_tp_allreduce", ph, mb);
  }
}

/// Backward of moe_forward, reversed. The all-to-all that carries output gradients into the
/// experts (backward of combine) uses the dispatch dtype (DeepSeek-V3 quantizes the gradients
/// before the down projection to FP8); the one returning input gradients runs in the training
/// dtype. `regather` re-all-gathers the TP input for the router weight gradient (SP).
template <class Regather>
void moe_backward(Ctx& c, Builder& b, const TfShape& s, std::uint32_t mb, Regather regather) {
  const auto& t = c.w.model.tf;
  const MoeSizes z = moe_sizes(c, s);
  const double B = c.B, h = s.h;
  const Phase ph = Phase::Backward;
  auto mlp_bwd = [&](const char* names[5], double tokens, double f, double batch, double load,
                     MoePart part, double tpd) {
    const double fu = t.gated_mlp ? 2.0 * f : f;
    const bool grp = part == MoePart::ExpertGemm;
    auto g = [&](const char* n, double m_, double n_, double k_, GroupedDim d) {
      return grp ? grouped_gemm(b.name(n), m_, n_, k_, batch, load, d, ph, c.dt, mb)
                 : tagged(gemm(b.name(n), m_, n_, k_, batch, ph, c.dt, mb), part);
    };
    b.chain(g(names[0], tokens, f / tpd, h, GroupedDim::M));                 // down dgrad
    if (!c.frozen) b.chain(g(names[1], f / tpd, h, tokens, GroupedDim::K));  // down wgrad
    b.chain(tagged(
        membound(b.name(names[2]), tokens * load * batch * 2.0 * (fu + f) / tpd * B, ph, c.dt, mb),
        part));
    b.chain(g(names[3], tokens, h, fu / tpd, GroupedDim::M));                 // up dgrad
    if (!c.frozen) b.chain(g(names[4], h, fu / tpd, tokens, GroupedDim::K));  // up wgrad
  };
  if (t.shared_experts > 0) {
    const char* n[5] = {"moe.shared_down_dgrad", "moe.shared_down_wgrad", "moe.shared_act_bwd",
                        "moe.shared_up_dgrad", "moe.shared_up_wgrad"};
    if (z.folded && c.l.tp > 1)  // backward of the shared experts' reduce-scatter
      b.chain(tagged(coll(b.name("moe.shared_tp_allgather_bwd"), Coll::AllGather, GroupDim::TP,
                          c.l.tp, s.T * h * B, Stream::CommTP, ph, c.dt, mb),
                     MoePart::SharedExpert));
    mlp_bwd(n, s.T, double(t.shared_experts) * z.f, 1, 1, MoePart::SharedExpert, s.t);
    if (z.folded && c.l.tp > 1)
      b.chain(tagged(coll(b.name("moe.shared_tp_reducescatter_bwd"), Coll::ReduceScatter,
                          GroupDim::TP, c.l.tp, s.T * h * B, Stream::CommTP, ph, c.dt, mb),
                     MoePart::SharedExpert));
  }
  b.chain(
      tagged(membound(b.name("moe.unpermute_bwd"), z.copies * h * z.Bd + z.T * h * B, ph, c.dt, mb),
             MoePart::Permute));
  const double recv = z.copies * z.load;
  if (z.ep > 1) {
    b.chain(tagged(coll(b.name("moe.combine_alltoall_bwd"), Coll::AllToAll, GroupDim::EP, c.l.ep,
                        recv * h * z.Bd, Stream::CommEP, ph, c.dt, mb),
                   MoePart::AllToAll));
    if (z.local > 1)
      b.chain(tagged(membound(b.name("moe.unsort_chunks_bwd"), 2.0 * recv * h * z.Bd, ph, c.dt, mb),
                     MoePart::Permute));
  }
  // moe_act (output-discarding checkpoint): the activation output, the down projection's input,
  // was freed after forward; the activation runs again before the down projection's backward.
  if (c.l.recomputes(RecomputeModule::MoeAct))
    b.chain(tagged(membound(b.name("moe.expert_act"), recv * (z.fu + z.f) / z.et * B,
                            Phase::Recompute, c.dt, mb),
                   MoePart::ExpertGemm));
  const char* n[5] = {"moe.expert_down_dgrad", "moe.expert_down_wgrad", "moe.expert_act_bwd",
                      "moe.expert_up_dgrad", "moe.expert_up_wgrad"};
  mlp_bwd(n, z.tokens, z.f, z.local, z.load, MoePart::ExpertGemm, z.et);
  if (z.ep > 1) {
    if (z.local > 1)
      b.chain(tagged(membound(b.name("moe.sort_chunks_bwd"), 2.0 * recv * h * B, ph, c.dt, mb),
                     MoePart::Permute));
    b.chain(tagged(coll(b.name("moe.dispatch_alltoall_bwd"), Coll::AllToAll, GroupDim::EP, c.l.ep,
                        recv * h * B, Stream::CommEP, ph, c.dt, mb),
                   MoePart::AllToAll));
  }
  b.chain(tagged(membound(b.name("moe.permute_bwd"), z.copies * h * B + z.T * h * B, ph, c.dt, mb),
                 MoePart::Permute));
  b.chain(tagged(membound(b.name("moe.router_topk_bwd"), z.T * 12.0 * z.E, ph, c.dt, mb),
                 MoePart::Router));
  if (!z.folded) regather();
  b.chain(tagged(gemm(b.name("moe.router_dgrad"), z.T, h, z.E, 1, ph, c.dt, mb), MoePart::Router));
  if (!c.frozen)
    b.chain(
        tagged(gemm(b.name("moe.router_wgrad"), h, z.E, z.T, 1, ph, c.dt, mb), MoePart::Router));
}

/// The MLP block of a layer between its norm and its residual add: the dense MLP, or the MoE
/// layer inside its TP all-gather / reduce-scatter (unless folded).
void mlp_block_forward(Ctx& c, Builder& b, const TfShape& s, int layer, Phase ph,
                       std::uint32_t mb) {
  const auto& t = c.w.model.tf;
  const double B = c.B;
  if (t.layer_is_moe(layer)) {
    if (!c.l.folded()) tp_enter(c, b, s, "mlp.tp_allgather", ph, mb);
    moe_forward(c, b, s, ph, mb);
    if (!c.l.folded()) tp_exit(c, b, s, "mlp.tp_reducescatter", "mlp.tp_allreduce", ph, mb);
    return;
  }
  const double f = t.ffn_hidden, fu = t.gated_mlp ? 2.0 * f : f;
  ag_then_gemm(c, b, s, "mlp.tp_allgather",
               gemm(b.name("mlp.up"), s.T, fu / s.t, s.h, 1, ph, c.dt, mb), ph, mb);
  b.chain(membound(b.name("mlp.act"), s.T * (fu + f) / s.t * B, ph, c.dt, mb));
  gemm_then_rs(c, b, s, gemm(b.name("mlp.down"), s.T, s.h, f / s.t, 1, ph, c.dt, mb),
               "mlp.tp_reducescatter", "mlp.tp_allreduce", ph, mb);
}

/// Selective recompute of modules (Megatron-Core --recompute-modules) at the start of the MLP
/// block's backward: the pre-MLP norm (layernorm: its output was discarded), then the dense MLP
/// (mlp), the whole MoE layer with its all-to-alls and permutations (moe), or its shared experts
/// (shared_experts), each re-run from its saved input before its backward needs it.
void mlp_block_recompute(Ctx& c, Builder& b, const TfShape& s, int layer, std::uint32_t mb) {
  const auto& t = c.w.model.tf;
  const Layout& l = c.l;
  if (!(l.recompute == Recompute::Selective && l.recompute_modules != 0)) return;
  const Phase ph = Phase::Recompute;
  if (l.recomputes(RecomputeModule::LayerNorm))
    b.chain(membound(b.name("mlp.norm"), 2.0 * s.Ts * s.h * c.B, ph, c.dt, mb));
  const bool moe = t.layer_is_moe(layer);
  if ((!moe && l.recomputes(RecomputeModule::Mlp)) || (moe && l.recomputes(RecomputeModule::Moe)))
    mlp_block_forward(c, b, s, layer, ph, mb);
  else if (moe && l.recomputes(RecomputeModule::SharedExperts))
    shared_experts_forward(c, b, s, ph, mb);
}

void layer_forward(Ctx& c, Builder& b, const TfShape& s, int layer, Phase ph, std::uint32_t mb,
                   std::uint32_t gather) {
  const auto& t = c.w.model.tf;
  double B = c.B;
  b.chain(membound(b.name("attn.norm"), 2.0 * s.Ts * s.h * B, ph, c.dt, mb), gather);
  // FP8 (Transformer Engine): every GEMM input is cast to FP8 with a transposed copy kept for the
  // weight gradient: read 2 bytes, write 1 + 1, per element of the QKV, projection, FC1 and FC2
  // inputs (te.pytorch Linear / LayerNormLinear / LayerNormMLP cast_transpose). Block-scaled
  // formats (MXFP8, NVFP4, ...) quantize the same way and also write their scale factors
  // (one byte per block of 32 or 16: dtype_bytes includes them), so the pass moves
  // 2 + 2 * dtype_bytes bytes per element (the block's amax is taken in the same pass). The
  // dequantization happens inside the block-scaled tensor-core MMA (Blackwell) and costs no
  // separate pass.
  if (is_gemm_only_dtype(c.dt) && !t.layer_is_moe(layer)) {
    double f = t.ffn_hidden;
    b.chain(membound(b.name("fp8.cast_transpose"),
                     cast_bytes_per_element(c.dt) * s.T * (2.0 * s.h + s.a * s.d / s.t + f / s.t),
                     ph, DType::BF16, mb));
  }
  ag_then_gemm(c, b, s, "attn.tp_allgather",
               gemm(b.name("attn.qkv"), s.T, (s.a + 2 * s.g) * s.d / s.t, s.h, 1, ph, c.dt, mb), ph,
               mb);
  if (c.l.cp > 1)
    b.chain(coll(b.name("attn.cp_kv_allgather"), Coll::AllGather, GroupDim::CP, c.l.cp,
                 s.b * s.s * 2.0 * s.g / s.t * s.d * B, Stream::CommCP, ph, c.dt, mb));
  attention_forward(c, b, s, ph, mb, false);
  gemm_then_rs(c, b, s, gemm(b.name("attn.proj"), s.T, s.h, s.a * s.d / s.t, 1, ph, c.dt, mb),
               "attn.tp_reducescatter", "attn.tp_allreduce", ph, mb);
  b.chain(membound(b.name("attn.residual"), residual_bytes(s, B), ph, c.dt, mb));
  b.chain(membound(b.name("mlp.norm"), 2.0 * s.Ts * s.h * B, ph, c.dt, mb));
  mlp_block_forward(c, b, s, layer, ph, mb);
  b.chain(membound(b.name("mlp.residual"), residual_bytes(s, B), ph, c.dt, mb));
}

/// Backward of one layer (reverse order). With SP, Megatron all-gathers the block input again
/// for the weight gradients and reduce-scatters the input gradient; without SP, the input
/// gradient is all-reduced (the backward of f).
void layer_backward(Ctx& c, Builder& b, const TfShape& s, int layer, std::uint32_t mb,
                    std::uint32_t gather) {
  const auto& t = c.w.model.tf;
  double B = c.B;
  const Phase ph = Phase::Backward;
  auto tp_grad_in = [&](const char* name) {  // backward of the exit reduce-scatter
    if (c.l.tp > 1 && s.sp)
      b.chain(coll(b.name(name), Coll::AllGather, GroupDim::TP, c.l.tp, s.T * s.h * B,
                   Stream::CommTP, ph, c.dt, mb));
  };
  auto tp_input_regather = [&](const char* name) {
    if (c.l.tp > 1 && s.sp)
      b.chain(coll(b.name(name), Coll::AllGather, GroupDim::TP, c.l.tp, s.T * s.h * B,
                   Stream::CommTP, ph, c.dt, mb));
  };
  auto tp_grad_out = [&](const char* rs, const char* ar) {
    if (c.l.tp <= 1) return;
    b.chain(coll(b.name(s.sp ? rs : ar), s.sp ? Coll::ReduceScatter : Coll::AllReduce, GroupDim::TP,
                 c.l.tp, s.T * s.h * B, Stream::CommTP, ph, c.dt, mb));
  };
  b.chain(membound(b.name("mlp.residual_bwd"), residual_bytes(s, B), ph, c.dt, mb), gather);
  mlp_block_recompute(c, b, s, layer, mb);
  // FP8: the output gradient of each GEMM is cast (and transposed) once for its dgrad and wgrad.
  if (is_gemm_only_dtype(c.dt) && !t.layer_is_moe(layer)) {
    double fu = t.gated_mlp ? 2.0 * t.ffn_hidden : t.ffn_hidden;
    b.chain(membound(
        b.name("fp8.cast_transpose_bwd"),
        cast_bytes_per_element(c.dt) * s.T * (2.0 * s.h + (s.a + 2 * s.g) * s.d / s.t + fu / s.t),
        ph, DType::BF16, mb));
  }
  // --tp-comm-overlap: ring-exchange all-gather of the output gradient under fc2/proj dgrad, and
  // "bulk" overlap of fc1/qkv dgrad with the input re-gather, wgrad with the reduce-scatter.
  const bool ovl = tp_overlap_on(c, s) && !c.frozen;
  auto tp_coll = [&](const char* name, Coll k) {
    return coll(b.name(name), k, GroupDim::TP, c.l.tp, s.T * s.h * B, Stream::CommTP, ph, c.dt, mb);
  };
  auto bulk = [&](Op dg, const char* ag, Op wg, const char* rs) {
    const std::uint32_t before = b.prev();
    dg.tp_overlap = wg.tp_overlap = true;
    const std::uint32_t di = b.chain(dg);
    b.set_prev(before);
    const std::uint32_t ai = b.chain(tp_coll(ag, Coll::AllGather));
    b.set_prev(di);
    b.chain(wg, ai);
    b.set_prev(di);
    b.chain(tp_coll(rs, Coll::ReduceScatter));
  };
  const bool dense_ovl = ovl && !t.layer_is_moe(layer);
  const bool folded_moe = t.layer_is_moe(layer) && c.l.folded();  // MoE stays on the SP shard
  if (!dense_ovl && !folded_moe) tp_grad_in("mlp.tp_allgather_bwd");
  auto mlp = [&](const char* up_d, const char* up_w, const char* act, const char* down_d,
                 const char* down_w, double tokens, double f, double batch, bool regather) {
    double fu = t.gated_mlp ? 2.0 * f : f;
    gemm_bwd(c, b, down_d, down_w, tokens, s.h, f / s.t, batch, mb);
    b.chain(membound(b.name(act), tokens * batch * 2.0 * (fu + f) / s.t * B, ph, c.dt, mb));
    b.chain(gemm(b.name(up_d), tokens, s.h, fu / s.t, batch, ph, c.dt, mb));
    if (c.frozen) return;
    if (regather) tp_input_regather("mlp.tp_allgather_input");
    b.chain(gemm(b.name(up_w), s.h, fu / s.t, tokens, batch, ph, c.dt, mb));
  };
  if (t.layer_is_moe(layer)) {
    moe_backward(c, b, s, mb, [&] { tp_input_regather("mlp.tp_allgather_input"); });
    if (!folded_moe) tp_grad_out("mlp.tp_reducescatter_bwd", "mlp.tp_allreduce_bwd");
  } else if (dense_ovl) {
    const double f = t.ffn_hidden, fu = t.gated_mlp ? 2.0 * f : f;
    ag_then_gemm(c, b, s, "mlp.tp_allgather_bwd",
                 gemm(b.name("mlp.down_dgrad"), s.T, f / s.t, s.h, 1, ph, c.dt, mb), ph, mb);
    b.chain(gemm(b.name("mlp.down_wgrad"), f / s.t, s.h, s.T, 1, ph, c.dt, mb));
    b.chain(membound(b.name("mlp.act_bwd"), s.T * 2.0 * (fu + f) / s.t * B, ph, c.dt, mb));
    bulk(gemm(b.name("mlp.up_dgrad"), s.T, s.h, fu / s.t, 1, ph, c.dt, mb),
         "mlp.tp_allgather_input",
         gemm(b.name("mlp.up_wgrad"), s.h, fu / s.t, s.T, 1, ph, c.dt, mb),
         "mlp.tp_reducescatter_bwd");
  } else {
    mlp("mlp.up_dgrad", "mlp.up_wgrad", "mlp.act_bwd", "mlp.down_dgrad", "mlp.down_wgrad", s.T,
        t.ffn_hidden, 1, true);
    tp_grad_out("mlp.tp_reducescatter_bwd", "mlp.tp_allreduce_bwd");
  }
  b.chain(membound(b.name("mlp.norm_bwd"), 3.0 * s.Ts * s.h * B, ph, c.dt, mb));
  b.chain(membound(b.name("attn.residual_bwd"), residual_bytes(s, B), ph, c.dt, mb));
  if (ovl) {
    ag_then_gemm(c, b, s, "attn.tp_allgather_bwd",
                 gemm(b.name("attn.proj_dgrad"), s.T, s.a * s.d / s.t, s.h, 1, ph, c.dt, mb), ph,
                 mb);
    b.chain(gemm(b.name("attn.proj_wgrad"), s.a * s.d / s.t, s.h, s.T, 1, ph, c.dt, mb));
  } else {
    tp_grad_in("attn.tp_allgather_bwd");
    gemm_bwd(c, b, "attn.proj_dgrad", "attn.proj_wgrad", s.T, s.h, s.a * s.d / s.t, 1, mb);
  }
  if (c.l.recomputes(RecomputeModule::CoreAttn))
    attention_forward(c, b, s, Phase::Recompute, mb, true);
  attention_backward(c, b, s, mb);
  if (c.l.cp > 1)
    b.chain(coll(b.name("attn.cp_dkv_reducescatter"), Coll::ReduceScatter, GroupDim::CP, c.l.cp,
                 s.b * s.s * 2.0 * s.g / s.t * s.d * B, Stream::CommCP, ph, c.dt, mb));
  // layernorm recompute: the input norm's output (the QKV input) is recomputed for the QKV
  // backward.
  if (c.l.recomputes(RecomputeModule::LayerNorm))
    b.chain(membound(b.name("attn.norm"), 2.0 * s.Ts * s.h * B, Phase::Recompute, c.dt, mb));
  if (ovl) {
    bulk(gemm(b.name("attn.qkv_dgrad"), s.T, s.h, (s.a + 2 * s.g) * s.d / s.t, 1, ph, c.dt, mb),
         "attn.tp_allgather_input",
         gemm(b.name("attn.qkv_wgrad"), s.h, (s.a + 2 * s.g) * s.d / s.t, s.T, 1, ph, c.dt, mb),
         "attn.tp_reducescatter_bwd");
  } else {
    b.chain(gemm(b.name("attn.qkv_dgrad"), s.T, s.h, (s.a + 2 * s.g) * s.d / s.t, 1, ph, c.dt, mb));
    if (!c.frozen) {
      tp_input_regather("attn.tp_allgather_input");
      b.chain(
          gemm(b.name("attn.qkv_wgrad"), s.h, (s.a + 2 * s.g) * s.d / s.t, s.T, 1, ph, c.dt, mb));
    }
    tp_grad_out("attn.tp_reducescatter_bwd", "attn.tp_allreduce_bwd");
  }
  b.chain(membound(b.name("attn.norm_bwd"), 3.0 * s.Ts * s.h * B, ph, c.dt, mb));
}

// ---- embedding and head ------------------------------------------------------------------------

void embed_forward(Ctx& c, Builder& b, const TfShape& s, std::uint32_t mb, std::uint32_t gather) {
  const auto& m = c.w.model;
  const Phase ph = Phase::Forward;
  if (m.family == ModelFamily::ViT) {
    const auto& t = m.tf;
    double patches = s.T - s.b;  // CLS token is not a patch
    b.chain(gemm(b.name("embed.patch"), patches, s.h,
                 double(t.patch_size) * t.patch_size * t.channels, 1, ph, c.dt, mb),
            gather);
    b.chain(membound(b.name("embed.positions"), 3.0 * s.Ts * s.h * c.B, ph, c.dt, mb));
    return;
  }
  b.chain(membound(b.name("embed.lookup"), 2.0 * s.T * s.h * c.B, ph, c.dt, mb), gather);
  tp_exit(c, b, s, "embed.tp_reducescatter", "embed.tp_allreduce", ph, mb);
}

void embed_backward(Ctx& c, Builder& b, const TfShape& s, std::uint32_t mb) {
  const auto& m = c.w.model;
  const Phase ph = Phase::Backward;
  if (m.family == ModelFamily::ViT) {
    const auto& t = m.tf;
    double patches = s.T - s.b;
    b.chain(gemm(b.name("embed.patch_wgrad"), double(t.patch_size) * t.patch_size * t.channels, s.h,
                 patches, 1, ph, c.dt, mb));
    return;
  }
  if (c.l.tp > 1 && s.sp)
    b.chain(coll(b.name("embed.tp_allgather_bwd"), Coll::AllGather, GroupDim::TP, c.l.tp,
                 s.T * s.h * c.B, Stream::CommTP, ph, c.dt, mb));
  if (!c.frozen)
    b.chain(membound(b.name("embed.grad_scatter_add"), 3.0 * s.T * s.h * c.B, ph, c.dt, mb));
}

void head_forward(Ctx& c, Builder& b, const TfShape& s, std::uint32_t mb, std::uint32_t gather) {
  const auto& m = c.w.model;
  const Phase ph = Phase::Forward;
  b.chain(membound(b.name("head.norm"), 2.0 * s.Ts * s.h * c.B, ph, c.dt, mb), gather);
  tp_enter(c, b, s, "head.tp_allgather", ph, mb);
  if (m.family == ModelFamily::ViT) {
    b.chain(gemm(b.name("head.classifier"), s.b, m.tf.classes, s.h, 1, ph, c.dt, mb));
    return;
  }
  if (m.family == ModelFamily::Encoder)
    b.chain(gemm(b.name("head.transform"), s.T, s.h, s.h, 1, ph, c.dt, mb));
  double vr = double(vocab_per_rank(m.tf, c.l.tp));
  b.chain(gemm(b.name("head.logits"), s.T, vr, s.h, 1, ph, c.dt, mb));
  b.chain(membound(b.name("head.cross_entropy"), s.T * vr * kCrossEntropyFwdBytes, ph, DType::FP32,
                   mb));
  if (c.l.tp > 1)  // vocab-parallel cross entropy: max, sum of exp, target logit
    b.chain(coll(b.name("head.ce_tp_allreduce"), Coll::AllReduce, GroupDim::TP, c.l.tp,
                 3.0 * s.T * 4.0, Stream::CommTP, ph, DType::FP32, mb));
}

void head_backward(Ctx& c, Builder& b, const TfShape& s, std::uint32_t mb) {
  const auto& m = c.w.model;
  const Phase ph = Phase::Backward;
  if (m.family == ModelFamily::ViT) {
    gemm_bwd(c, b, "head.classifier_dgrad", "head.classifier_wgrad", s.b, m.tf.classes, s.h, 1, mb);
  } else {
    double vr = double(vocab_per_rank(m.tf, c.l.tp));
    b.chain(membound(b.name("head.cross_entropy_bwd"), s.T * vr * kCrossEntropyBwdBytes, ph,
                     DType::FP32, mb));
    gemm_bwd(c, b, "head.logits_dgrad", "head.logits_wgrad", s.T, vr, s.h, 1, mb);
    if (m.family == ModelFamily::Encoder)
      gemm_bwd(c, b, "head.transform_dgrad", "head.transform_wgrad", s.T, s.h, s.h, 1, mb);
  }
  if (c.l.tp > 1)
    b.chain(coll(b.name(s.sp ? "head.tp_reducescatter_bwd" : "head.tp_allreduce_bwd"),
                 s.sp ? Coll::ReduceScatter : Coll::AllReduce, GroupDim::TP, c.l.tp,
                 s.T * s.h * c.B, Stream::CommTP, ph, c.dt, mb));
  b.chain(membound(b.name("head.norm_bwd"), 3.0 * s.Ts * s.h * c.B, ph, c.dt, mb));
}

// ---- schedule ----------------------------------------------------------------------------------

struct Step {
  bool forward;
  int mb;
  int chunk;
};

std::vector<Step> schedule(const Layout& l, int stage, int M) {
  std::vector<Step> out;
  int vp = l.vp, pp = l.pp;
  out.reserve(std::size_t(2) * M * vp);
  if (l.schedule == PipeSchedule::GPipe) {
    for (int c = 0; c < vp; ++c)
      for (int j = 0; j < M; ++j) out.push_back({true, j, c});
    for (int c = vp - 1; c >= 0; --c)
      for (int j = 0; j < M; ++j) out.push_back({false, j, c});
    return out;
  }
  if (vp == 1) {
    int warm = std::min(pp - stage - 1, M);
    for (int j = 0; j < warm; ++j) out.push_back({true, j, 0});
    for (int i = 0; i < M - warm; ++i) {
      out.push_back({true, warm + i, 0});
      out.push_back({false, i, 0});
    }
    for (int j = M - warm; j < M; ++j) out.push_back({false, j, 0});
    return out;
  }
  // Megatron-LM interleaved 1F1B (schedules.py, forward_backward_pipelining_with_interleaving).
  int total = M * vp;
  int warm = (M == pp) ? total : std::min((pp - stage - 1) * 2 + (vp - 1) * pp, total);
  auto mb_of = [&](int k) { return (k / (pp * vp)) * pp + k % pp; };
  auto fchunk = [&](int k) { return (k % (pp * vp)) / pp; };
  auto bchunk = [&](int k) { return vp - 1 - (k % (pp * vp)) / pp; };
  for (int k = 0; k < warm; ++k) out.push_back({true, mb_of(k), fchunk(k)});
  for (int k = 0; k < total - warm; ++k) {
    out.push_back({true, mb_of(warm + k), fchunk(warm + k)});
    out.push_back({false, mb_of(k), bchunk(k)});
  }
  for (int k = total - warm; k < total; ++k) out.push_back({false, mb_of(k), bchunk(k)});
  return out;
}

std::uint32_t p2p_tag(int mb, int V, int boundary, bool backward) {
  return static_cast<std::uint32_t>((std::int64_t(mb) * V + boundary) * 2 + (backward ? 1 : 0));
}

// ---- transformer class -------------------------------------------------------------------------

void expand_transformer_class(Ctx& c, RankClass& rc) {
  const auto& w = c.w;
  const auto& l = c.l;
  const auto& t = w.model.tf;
  Builder b(c.p, rc);
  TfShape s = tf_shape(c);
  const int st = c.stage;
  double p2p_bytes = s.Ts * s.h * c.B;
  std::vector<LayerRange> chunks(l.vp);
  for (int ch = 0; ch < l.vp; ++ch) chunks[ch] = stage_layers(w, l, ch * l.pp + st);
  {
    std::size_t layers = 0;
    for (auto& r : chunks) layers += r.count;
    std::size_t per_layer =
        80 + (l.recompute == Recompute::Full || l.recompute_modules != 0 ? 30 : 0);
    rc.ops.reserve(std::size_t(c.M) * layers * per_layer + 256);
    rc.deps.reserve(rc.ops.capacity() * 2);
  }
  std::vector<Buckets> buckets(l.vp);
  bool zero3 = l.zero >= 3;
  const bool reduce_grads = !c.frozen;
  // ZeRO-3 / FSDP with gradient accumulation, as PyTorch FSDP2 runs it (state what is modelled):
  // - Without pipelining, every micro-batch gathers each layer before its forward and (reshard=1)
  //   again before its backward, and reduce-scatters its gradients after its backward (FSDP's
  //   default, no no_sync). reshard=0 keeps the forward's gather for the backward.
  // - With pipelining (torch.distributed.pipelining, as torchtitan and Megatron-FSDP use it), the
  //   stage disables gradient sync and reshard-after-backward for every backward and runs the
  //   reduce-scatters once, after the last micro-batch (stage.py backward_maybe_with_nosync).
  //   reshard=1 gathers every layer for each micro-batch's forward and backward; reshard=0 (the
  //   torchtitan default with PP) gathers each layer once per iteration and keeps it.
  // DeepSpeed rejects ZeRO-2/3 with its pipeline engine; Megatron-FSDP follows FSDP2 here.
  const bool keep_params = zero3 && !l.reshard_after_forward();
  const bool pp_sync = l.pp > 1;
  auto forward_gather = [&](std::uint32_t m) {
    return zero3 && !(keep_params && pp_sync && m > 0);
  };
  const bool backward_gather = zero3 && !keep_params;
  auto layer_local = [&](int i, double& dense, double& expert) {
    auto lp = layer_params(t, i);
    dense = lp.dense / l.tp;
    expert = lp.expert / (double(l.expert_tp()) * l.ep);
  };
  ModelSpec m = w.model;
  double in_params = input_params(m) / l.tp;
  double out_params = output_params(m) / l.tp;
  if (w.model.family != ModelFamily::ViT && t.tied_embeddings && l.pp > 1)
    out_params += double(t.vocab) * t.hidden / l.tp;

  for (const Step& step : schedule(l, st, c.M)) {
    const int v = step.chunk * l.pp + st;
    const auto& r = chunks[step.chunk];
    const std::uint32_t mb = static_cast<std::uint32_t>(step.mb);
    b.set_prev(kNone);
    if (step.forward) {
      if (v > 0) {
        Op o;
        o.kind = OpKind::Recv;
        o.name = b.name("pp.recv_activation");
        o.stream = Stream::CommPP;
        o.phase = Phase::Forward;
        o.dtype = c.dt;
        o.microbatch = mb;
        o.bytes = p2p_bytes;
        o.peer_delta = static_cast<std::int16_t>(st == 0 ? l.pp - 1 : -1);
        o.tag = p2p_tag(step.mb, c.V, v - 1, false);
        b.chain(o);
      }
      std::uint32_t prefetch_after = kNone;
      if (v == 0) {
        std::uint32_t g = forward_gather(mb)
                              ? zero3_gather(c, b, in_params, 0, Phase::Forward, mb, kNone)
                              : kNone;
        embed_forward(c, b, s, mb, g);
      }
      for (int i = r.first; i < r.first + r.count; ++i) {
        std::uint32_t g = kNone;
        if (forward_gather(mb)) {
          double dn, ex;
          layer_local(i, dn, ex);
          g = zero3_gather(c, b, dn, ex, Phase::Forward, mb, prefetch_after);
        }
        std::uint32_t start = static_cast<std::uint32_t>(b.size());
        layer_forward(c, b, s, i, Phase::Forward, mb, g);
        prefetch_after = start;  // the next layer's gather may start once this layer starts
      }
      if (v == c.V - 1) {
        std::uint32_t g = forward_gather(mb) ? zero3_gather(c, b, out_params, 0, Phase::Forward, mb,
                                                            prefetch_after)
                                             : kNone;
        head_forward(c, b, s, mb, g);
      } else {
        Op o;
        o.kind = OpKind::Send;
        o.name = b.name("pp.send_activation");
        o.stream = Stream::CommPP;
        o.phase = Phase::Forward;
        o.dtype = c.dt;
        o.microbatch = mb;
        o.bytes = p2p_bytes;
        o.peer_delta = static_cast<std::int16_t>(st == l.pp - 1 ? -(l.pp - 1) : 1);
        o.tag = p2p_tag(step.mb, c.V, v, false);
        b.add(o, {b.prev()});
      }
      continue;
    }
    // Backward of micro-batch `mb` through chunk `step.chunk`.
    const bool last_mb = step.mb == c.M - 1;
    Buckets& bk = buckets[step.chunk];
    if (v < c.V - 1) {
      Op o;
      o.kind = OpKind::Recv;
      o.name = b.name("pp.recv_gradient");
      o.stream = Stream::CommPP;
      o.phase = Phase::Backward;
      o.dtype = c.dt;
      o.microbatch = mb;
      o.bytes = p2p_bytes;
      o.peer_delta = static_cast<std::int16_t>(st == l.pp - 1 ? -(l.pp - 1) : 1);
      o.tag = p2p_tag(step.mb, c.V, v, true);
      b.chain(o);
    } else {
      std::uint32_t g =
          backward_gather ? zero3_gather(c, b, out_params, 0, Phase::Backward, mb, kNone) : kNone;
      if (g != kNone) b.set_prev(g);
      head_backward(c, b, s, mb);
      if (zero3) {
        if (c.dp_size > 1 && reduce_grads && (!pp_sync || last_mb))
          dense_grad_reduce(c, b, "zero3.grad_reducescatter", Coll::ReduceScatter, out_params,
                            b.prev(), mb, bk.reduce_ops);
      } else if (last_mb) {
        bk.dense += out_params;
        flush_bucket(c, b, bk, b.prev(), false);
      }
    }
    std::uint32_t prefetch_after = kNone;
    for (int i = r.first + r.count - 1; i >= r.first; --i) {
      double dn = 0, ex = 0;
      layer_local(i, dn, ex);
      std::uint32_t g =
          backward_gather ? zero3_gather(c, b, dn, ex, Phase::Backward, mb, prefetch_after) : kNone;
      std::uint32_t start = static_cast<std::uint32_t>(b.size());
      if (l.recompute == Recompute::Full) {
        layer_forward(c, b, s, i, Phase::Recompute, mb, g);
        layer_backward(c, b, s, i, mb, kNone);
      } else {
        layer_backward(c, b, s, i, mb, g);
      }
      prefetch_after = start;
      if (zero3 && (!pp_sync || last_mb)) {
        if (c.dp_size > 1 && reduce_grads)
          dense_grad_reduce(c, b, l.fsdp ? "fsdp.grad_reducescatter" : "zero3.grad_reducescatter",
                            Coll::ReduceScatter, dn, b.prev(), mb, bk.reduce_ops);
        if (ex > 0 && c.edp_size > 1 && reduce_grads)
          bk.reduce_ops.push_back(
              b.add(coll(b.name("zero3.expert_grad_reducescatter"), Coll::ReduceScatter,
                         GroupDim::EDP, c.edp_size, ex * c.Bg, Stream::CommDP, Phase::Backward,
                         w.training.grad_dtype, mb),
                    {b.prev()}));
      } else if (!zero3 && last_mb) {
        bk.dense += dn;
        bk.expert += ex;
        flush_bucket(c, b, bk, b.prev(), false);
      }
    }
    if (v == 0) {
      embed_backward(c, b, s, mb);
      if (zero3) {
        if (c.dp_size > 1 && reduce_grads && (!pp_sync || last_mb))
          dense_grad_reduce(c, b, "zero3.grad_reducescatter", Coll::ReduceScatter, in_params,
                            b.prev(), mb, bk.reduce_ops);
      } else if (last_mb) {
        bk.dense += in_params;
      }
    } else {
      Op o;
      o.kind = OpKind::Send;
      o.name = b.name("pp.send_gradient");
      o.stream = Stream::CommPP;
      o.phase = Phase::Backward;
      o.dtype = c.dt;
      o.microbatch = mb;
      o.bytes = p2p_bytes;
      o.peer_delta = static_cast<std::int16_t>(st == 0 ? l.pp - 1 : -1);
      o.tag = p2p_tag(step.mb, c.V, v - 1, true);
      b.add(o, {b.prev()});
    }
    if (last_mb && !zero3) flush_bucket(c, b, bk, b.prev(), true);
  }

  // Optimizer step over the local shard, after every gradient reduction.
  double local_dense = 0, local_expert = 0;
  for (const auto& r : chunks)
    for (int i = r.first; i < r.first + r.count; ++i) {
      double dn, ex;
      layer_local(i, dn, ex);
      local_dense += dn;
      local_expert += ex;
    }
  if (st == 0) local_dense += in_params;
  if (st == l.pp - 1) local_dense += out_params;
  double shard_params = l.zero >= 1 ? local_dense / c.shard_size + local_expert / c.edp_size
                                    : local_dense + local_expert;
  if (c.frozen) shard_params = 0;  // adapters only: their step is negligible
  double opt_bytes = shard_params * (2.0 * optimizer_bytes_per_param(w.training) + c.Bg + c.Bp);
  std::vector<std::uint32_t> waits;
  for (auto& bk : buckets) waits.insert(waits.end(), bk.reduce_ops.begin(), bk.reduce_ops.end());
  Op opt = membound(b.name("optimizer.step"), opt_bytes, Phase::Optimizer, DType::FP32, 0);
  opt.dep_begin = static_cast<std::uint32_t>(rc.deps.size());
  rc.deps.insert(rc.deps.end(), waits.begin(), waits.end());
  opt.dep_count = static_cast<std::uint32_t>(waits.size());
  rc.ops.push_back(opt);
  std::uint32_t opt_i = static_cast<std::uint32_t>(rc.ops.size() - 1);
  // ZeRO-1/2 distributed optimizer: gather the updated parameter shards, bucket by bucket.
  if (l.zero == 1 || l.zero == 2) {
    for (auto& bk : buckets)
      for (auto [dense, expert] : bk.sizes) {
        if (dense > 0 && c.shard_size > 1)
          b.add(coll(b.name("dp.param_allgather"), Coll::AllGather, c.shard_dim, c.shard_size,
                     dense * c.Bp, Stream::CommDP, Phase::Optimizer, c.dt, 0),
                {opt_i});
        if (expert > 0 && c.edp_size > 1)
          b.add(coll(b.name("edp.param_allgather"), Coll::AllGather, GroupDim::EDP, c.edp_size,
                     expert * c.Bp, Stream::CommDP, Phase::Optimizer, c.dt, 0),
                {opt_i});
      }
  }
}

// ---- ResNet and DLRM (data parallel, one class)
// --------------------------------------------------

void expand_resnet(Ctx& c, RankClass& rc) {
  const auto& r = c.w.model.resnet;
  Builder b(c.p, rc);
  auto convs = resnet_convs(r);
  double bsz = c.l.micro_batch;
  int out_ch = resnet_out_channels(r);
  rc.ops.reserve(std::size_t(c.M) * convs.size() * 6 + 64);
  double bucket_bytes = 0;
  std::vector<std::uint32_t> reduces;
  Coll kind = c.l.zero == 0 ? Coll::AllReduce : Coll::ReduceScatter;
  for (int j = 0; j < c.M; ++j) {
    const std::uint32_t mb = static_cast<std::uint32_t>(j);
    b.set_prev(kNone);
    for (const auto& cv : convs) {
      double pix = bsz * cv.out_size * cv.out_size;
      b.chain(gemm(b.name("conv.im2col_gemm"), pix, cv.out_ch,
                   double(cv.in_ch) * cv.kernel * cv.kernel, 1, Phase::Forward, c.dt, mb));
      b.chain(
          membound(b.name("conv.bn_relu"), 3.0 * pix * cv.out_ch * c.B, Phase::Forward, c.dt, mb));
    }
    b.chain(gemm(b.name("fc"), bsz, r.classes, out_ch, 1, Phase::Forward, c.dt, mb));
    b.chain(membound(b.name("loss"), 2.0 * bsz * r.classes * 4.0, Phase::Forward, DType::FP32, mb));
    gemm_bwd(c, b, "fc_dgrad", "fc_wgrad", bsz, r.classes, out_ch, 1, mb);
    for (auto it = convs.rbegin(); it != convs.rend(); ++it) {
      const auto& cv = *it;
      double pix = bsz * cv.out_size * cv.out_size;
      double k = double(cv.in_ch) * cv.kernel * cv.kernel;
      b.chain(membound(b.name("conv.bn_relu_bwd"), 4.0 * pix * cv.out_ch * c.B, Phase::Backward,
                       c.dt, mb));
      gemm_bwd(c, b, "conv.dgrad", "conv.wgrad", pix, cv.out_ch, k, 1, mb);
      if (j == c.M - 1 && c.dp_size > 1) {
        bucket_bytes += (cv.params() + 2.0 * cv.out_ch) * c.Bg;
        if (bucket_bytes >= kTorchBucketBytes || &cv == &convs.front()) {
          reduces.push_back(
              b.add(coll(b.name("dp.grad_reduce"), kind, c.dp_dim, c.dp_size, bucket_bytes,
                         Stream::CommDP, Phase::Backward, c.w.training.grad_dtype, mb),
                    {b.prev()}));
          bucket_bytes = 0;
        }
      }
    }
  }
  double fc = double(out_ch) * r.classes + r.classes;
  if (c.dp_size > 1)  // the classifier's gradients join the last bucket
    reduces.push_back(
        b.add(coll(b.name("dp.grad_reduce"), kind, c.dp_dim, c.dp_size, fc * c.Bg, Stream::CommDP,
                   Phase::Backward, c.w.training.grad_dtype, std::uint32_t(c.M - 1)),
              {b.prev()}));
  double shard = c.l.zero >= 1 ? double(c.dp_size) : 1.0;
  double opt = params(c.w) / shard * (2.0 * optimizer_bytes_per_param(c.w.training) + c.Bg + c.Bp);
  Op o = membound(b.name("optimizer.step"), opt, Phase::Optimizer, DType::FP32, 0);
  o.dep_begin = static_cast<std::uint32_t>(rc.deps.size());
  rc.deps.insert(rc.deps.end(), reduces.begin(), reduces.end());
  o.dep_count = static_cast<std::uint32_t>(reduces.size());
  rc.ops.push_back(o);
  if ((c.l.zero == 1 || c.l.zero == 2) && c.dp_size > 1)
    b.add(coll(b.name("dp.param_allgather"), Coll::AllGather, c.dp_dim, c.dp_size,
               params(c.w) * c.Bp, Stream::CommDP, Phase::Optimizer, c.dt, 0),
          {static_cast<std::uint32_t>(rc.ops.size() - 1)});
}

void expand_dlrm(Ctx& c, RankClass& rc) {
  const auto& d = c.w.model.dlrm;
  Builder b(c.p, rc);
  double bsz = c.l.micro_batch, dp = c.l.dp;
  double tables = double(d.table_rows.size());
  double local_tables = std::ceil(tables / dp);
  double feats = tables + 1;
  double emb_bytes = bsz * dp * local_tables * d.embedding_dim * c.B;  // lookups for the global mb
  rc.ops.reserve(std::size_t(c.M) * 64 + 16);
  std::vector<std::uint32_t> reduces;
  for (int j = 0; j < c.M; ++j) {
    const std::uint32_t mb = static_cast<std::uint32_t>(j);
    b.set_prev(kNone);
    double in = d.dense_features;
    for (int o : d.bottom_mlp) {
      b.chain(gemm(b.name("bottom_mlp"), bsz, o, in, 1, Phase::Forward, c.dt, mb));
      in = o;
    }
    b.chain(membound(b.name("embedding.lookup"), 2.0 * emb_bytes, Phase::Forward, c.dt, mb));
    if (c.l.dp > 1)
      b.chain(coll(b.name("embedding.alltoall"), Coll::AllToAll, GroupDim::DP, c.l.dp, emb_bytes,
                   Stream::CommDP, Phase::Forward, c.dt, mb));
    b.chain(
        gemm(b.name("interaction"), feats, feats, d.embedding_dim, bsz, Phase::Forward, c.dt, mb));
    in = d.embedding_dim + feats * (feats - 1) / 2;
    std::vector<double> top_in;
    for (int o : d.top_mlp) {
      top_in.push_back(in);
      b.chain(gemm(b.name("top_mlp"), bsz, o, in, 1, Phase::Forward, c.dt, mb));
      in = o;
    }
    b.chain(membound(b.name("loss"), 2.0 * bsz * 4.0, Phase::Forward, DType::FP32, mb));
    for (int i = int(d.top_mlp.size()) - 1; i >= 0; --i)
      gemm_bwd(c, b, "top_mlp_dgrad", "top_mlp_wgrad", bsz, d.top_mlp[i], top_in[i], 1, mb);
    gemm_bwd(c, b, "interaction_dgrad", "interaction_dgrad_b", feats, feats, d.embedding_dim, bsz,
             mb);
    if (c.l.dp > 1)
      b.chain(coll(b.name("embedding.alltoall_bwd"), Coll::AllToAll, GroupDim::DP, c.l.dp,
                   emb_bytes, Stream::CommDP, Phase::Backward, c.dt, mb));
    b.chain(membound(b.name("embedding.sparse_update"), 3.0 * emb_bytes * 2.0, Phase::Backward,
                     DType::FP32, mb));
    in = d.dense_features;
    std::vector<double> bot_in;
    for (int o : d.bottom_mlp) {
      bot_in.push_back(in);
      in = o;
    }
    for (int i = int(d.bottom_mlp.size()) - 1; i >= 0; --i)
      gemm_bwd(c, b, "bottom_mlp_dgrad", "bottom_mlp_wgrad", bsz, d.bottom_mlp[i], bot_in[i], 1,
               mb);
  }
  double mlp = 0;  // dense (data-parallel) parameters: the MLPs
  {
    double in = d.dense_features;
    for (int o : d.bottom_mlp) {
      mlp += in * o + o;
      in = o;
    }
    in = d.embedding_dim + feats * (feats - 1) / 2;
    for (int o : d.top_mlp) {
      mlp += in * o + o;
      in = o;
    }
  }
  if (c.dp_size > 1)
    reduces.push_back(b.add(
        coll(b.name("dp.grad_reduce"), Coll::AllReduce, GroupDim::DP, c.dp_size, mlp * c.Bg,
             Stream::CommDP, Phase::Backward, c.w.training.grad_dtype, std::uint32_t(c.M - 1)),
        {b.prev()}));
  Op o = membound(b.name("optimizer.step"),
                  mlp * (2.0 * optimizer_bytes_per_param(c.w.training) + c.Bg + c.Bp),
                  Phase::Optimizer, DType::FP32, 0);
  o.dep_begin = static_cast<std::uint32_t>(rc.deps.size());
  rc.deps.insert(rc.deps.end(), reduces.begin(), reduces.end());
  o.dep_count = static_cast<std::uint32_t>(reduces.size());
  rc.ops.push_back(o);
}

}  // namespace

Program expand_program(const Workload& w, const Layout& l) {
  check_layout(w, l, 0);
  Program p;
  p.layout = l;
  p.world = l.gpus();
  p.dtype = w.training.dtype;
  p.tokens_per_iteration = tokens_per_iteration(w);
  p.samples_per_iteration = double(w.training.global_batch);
  p.model_flops_per_iteration = model_flops_per_iteration(w);
  if (w.model.tf.is_moe() && w.model.tf.moe_max_nodes > 0) {
    p.moe_top_k = w.model.tf.top_k;
    p.moe_max_nodes = w.model.tf.moe_max_nodes;
  }
  p.names.reserve(128);
  Ctx c{w, l, p};
  c.M = microbatches(w, l);
  c.V = l.pp * l.vp;
  c.dt = w.training.dtype;
  c.B = act_bytes(c.dt);
  c.Bp = param_bytes(c.dt);
  c.Bg = dtype_bytes(w.training.grad_dtype);
  c.dp_dim = l.cp > 1 ? GroupDim::DPxCP : GroupDim::DP;
  c.dp_size = static_cast<std::uint32_t>(l.dp * l.cp);
  c.edp_size = static_cast<std::uint32_t>(std::max(1, l.edp()));
  c.shard_size = static_cast<std::uint32_t>(l.shard_size());
  c.replicas = c.dp_size / std::max<std::uint32_t>(1, c.shard_size);
  c.shard_dim = c.replicas > 1 ? GroupDim::DPShard : c.dp_dim;
  c.bucket_params = std::max(kMegatronBucketParams, 1e6 * l.dp);
  c.frozen = w.training.frozen_weights;
  p.classes.resize(l.pp);
  for (int st = 0; st < l.pp; ++st) {
    RankClass& rc = p.classes[st];
    rc.stage = st;
    rc.multiplicity = static_cast<std::uint32_t>(l.tp * l.cp * l.dp);
    c.stage = st;
    switch (w.model.family) {
      case ModelFamily::ResNet:
        expand_resnet(c, rc);
        break;
      case ModelFamily::DLRM:
        expand_dlrm(c, rc);
        break;
      default:
        expand_transformer_class(c, rc);
        break;
    }
  }
  double total = 0;
  for (const auto& rc : p.classes) {
    double f = 0;
    for (const auto& o : rc.ops) f += o.flops;
    total += f * rc.multiplicity;
  }
  p.hardware_flops_per_iteration = total;
  return p;
}

ProgramSummary summarize(const Program& p) {
  ProgramSummary s;
  std::vector<ProgramSummary::CollectiveTotal>& cs = s.collectives;
  for (const auto& rc : p.classes) {
    std::vector<double> per_rank(cs.size(), 0.0);
    for (const auto& o : rc.ops) {
      ++s.ops;
      ++s.ops_by_kind[o.kind];
      s.flops_all_ranks += o.flops * rc.multiplicity;
      if (o.kind == OpKind::Send) s.p2p_bytes_all_ranks += o.bytes * rc.multiplicity;
      if (o.kind != OpKind::Collective) continue;
      std::size_t i = 0;
      for (; i < cs.size(); ++i)
        if (cs[i].coll == o.coll && cs[i].group == o.group && cs[i].group_size == o.group_size)
          break;
      if (i == cs.size()) {
        cs.push_back({o.coll, o.group, o.group_size, 0, 0, 0});
        per_rank.push_back(0);
      }
      cs[i].ops += 1;
      cs[i].bytes_all_ranks += o.bytes * rc.multiplicity;
      per_rank[i] += o.bytes;
    }
    for (std::size_t i = 0; i < cs.size(); ++i)
      cs[i].bytes_per_rank_max = std::max(cs[i].bytes_per_rank_max, per_rank[i]);
  }
  std::stable_sort(cs.begin(), cs.end(), [](const auto& a, const auto& b) {
    if (a.coll != b.coll) return a.coll < b.coll;
    if (a.group != b.group) return a.group < b.group;
    return a.group_size < b.group_size;
  });
  return s;
}

}  // namespace tutti
