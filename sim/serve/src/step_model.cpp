// Iteration time of one serving batch (step_model.hpp has the per-op accounting).
#include "tutti/serve/step_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/sim/compute_model.hpp"

namespace tutti::serve {
namespace {

enum CollSlot {
  kTpAllReduce = 0,
  kEpAllToAll = 1,
  kEtpAllReduce = 2,
  kTpAllGather = 3,
  kPpSend = 4
};

Op gemm(std::int64_t m, std::int64_t n, std::int64_t k, DType dt) {
  Op op;
  op.kind = OpKind::Gemm;
  op.dtype = dt;
  op.m = std::max<std::int64_t>(m, 1);
  op.n = std::max<std::int64_t>(n, 1);
  op.k = std::max<std::int64_t>(k, 1);
  return op;
}

Op membound(double bytes, DType dt) {
  Op op;
  op.kind = OpKind::MemBound;
  op.dtype = dt;
  op.bytes = bytes;
  return op;
}

}  // namespace

StepModel::StepModel(const Workload& w, const Serving& s, const SimCluster& cluster,
                     const CalibrationProfile& profile)
    : w_(&w), s_(s), cluster_(cluster), profile_(&profile) {
  const TransformerSpec& m = w.model.tf;
  const std::string file = w.file.empty() ? w.name : w.file;
  if (w.model.family != ModelFamily::Transformer)
    throw InputError(
        file, "model.family", to_string(w.model.family),
        "transformer (decoder-only LM): tutti serve simulates autoregressive decoding");
  auto need = [&](bool ok, const std::string& key, const std::string& got, const std::string& exp) {
    if (!ok) throw InputError("serving config", key, got, exp);
  };
  need(m.heads % s.tp == 0, "serving.tp", std::to_string(s.tp),
       fmt::format("a divisor of the model's {} attention heads", m.heads));
  need(s.pp <= m.layers, "serving.pp", std::to_string(s.pp),
       fmt::format("at most the model's {} layers", m.layers));
  if (m.is_moe())
    need(m.experts % s.ep == 0, "serving.ep", std::to_string(s.ep),
         fmt::format("a divisor of the model's {} experts", m.experts));
  else
    need(s.ep == 1, "serving.ep", std::to_string(s.ep), "1 (the model is dense)");
  const Topology& topo = *cluster.topology;
  if (s.gpus() > topo.num_gpus())
    throw InputError(fmt::format(
        "serving needs {} GPUs ({} replicas x tp {} x pp {}) but cluster {} has {}; use fewer "
        "replicas or a larger cluster",
        s.gpus(), s.total_replicas(), s.tp, s.pp, cluster.name, topo.num_gpus()));

  for (int i = 0; i < s.tp; ++i) tp_group_.push_back(i);
  for (int i = 0; i < s.ep; ++i) ep_group_.push_back(i * (s.tp / s.ep));
  for (int i = 0; i < s.tp / s.ep; ++i) etp_group_.push_back(i);
  ctx_ = make_collective_context(topo, profile, cluster.nvls, cluster.sharp);
  if (s.disaggregated()) decode_gpu0_ = s.prefill_replicas * s.gpus_per_replica();

  for (int l = 0; l < m.layers; ++l) (m.layer_is_moe(l) ? moe_layers_ : dense_layers_)++;

  const double eb = dtype_bytes(s.dtype), kvb = dtype_bytes(s.kv_dtype);
  const int kvg = std::max(1, m.kv_heads / s.tp);
  const int layers_per_stage = (m.layers + s.pp - 1) / s.pp;
  mem_.weights_bytes = params(w) * eb / (s.tp * s.pp);
  // Activations of the largest iteration (hidden, qkv, MLP intermediate; 16-bit) and fp32 logits
  // of max_batch sequences: an estimate of what vLLM's profiling run reserves.
  const int ffn =
      m.is_moe() ? std::max(m.ffn_hidden, m.moe_ffn_hidden * std::max(1, m.top_k)) : m.ffn_hidden;
  mem_.activation_bytes =
      static_cast<double>(s.max_tokens_per_iteration) * (4.0 * m.hidden + 2.0 * ffn / s.tp) * eb +
      static_cast<double>(s.max_batch) * static_cast<double>(m.vocab) / s.tp * 4.0;
  mem_.kv_bytes_per_token = layers_per_stage * 2.0 * kvg * m.hd() * kvb;
  kv_model_bytes_ = m.layers * 2.0 * m.kv_heads * m.hd() * kvb;
  const double hbm = cluster.gpu.hbm_bytes * s.gpu_memory_utilization;
  mem_.kv_bytes = hbm - mem_.weights_bytes - mem_.activation_bytes;
  mem_.kv_blocks = mem_.kv_bytes > 0
                       ? static_cast<std::int64_t>(std::floor(
                             mem_.kv_bytes / (s.kv_block_tokens * mem_.kv_bytes_per_token)))
                       : 0;
  if (mem_.kv_blocks <= 0)
    throw InputError(fmt::format(
        "{} does not fit one replica at tp {} x pp {} on {}: weights {} + activations {} per GPU "
        "vs {} usable ({} x gpu_memory_utilization {}); raise tp or pp{}",
        w.name, s.tp, s.pp, cluster.gpu.name, format_quantity(mem_.weights_bytes, Dim::Bytes),
        format_quantity(mem_.activation_bytes, Dim::Bytes), format_quantity(hbm, Dim::Bytes),
        format_quantity(cluster.gpu.hbm_bytes, Dim::Bytes), s.gpu_memory_utilization,
        s.dtype == DType::FP8 ? ", or use GPUs with more HBM"
                              : ", or serve fp8 weights (serving.dtype)"));
}

double StepModel::coll_s(int which, double bytes) {
  const auto key = static_cast<std::int64_t>(bytes);
  auto& cache = coll_cache_[which];
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  double t = 0;
  switch (which) {
    case kTpAllReduce:
      t = collective_time_s(Coll::AllReduce, bytes, tp_group_, ctx_);
      break;
    case kEpAllToAll:
      t = collective_time_s(Coll::AllToAll, bytes, ep_group_, ctx_);
      break;
    case kEtpAllReduce:
      t = collective_time_s(Coll::AllReduce, bytes, etp_group_, ctx_);
      break;
    case kTpAllGather:
      t = collective_time_s(Coll::AllGather, bytes, tp_group_, ctx_);
      break;
    case kPpSend:
      t = plan_p2p(0, std::min(s_.tp, cluster_.topology->num_gpus() - 1), bytes, ctx_).estimate_s;
      break;
    default:
      throw InternalError("serve: unknown collective slot");
  }
  cache.emplace(key, t);
  return t;
}

void StepModel::add_op(const Op& op, StepTime& t, double times) const {
  // Below one output tile of rows a GEMM is in the decode (GEMV) regime: weights streamed.
  const bool gemv = op.kind == OpKind::Gemm && profile_->gemm.tile > 0 &&
                    static_cast<double>(op.m) < profile_->gemm.tile;
  const double dt =
      (gemv ? gemv_time_s(op, cluster_.gpu, *profile_) : op_time_s(op, cluster_.gpu, *profile_)) *
      times;
  // Compute-bound when the FLOP time at peak exceeds the HBM time of its bytes.
  double flops = op.flops, bytes = op.bytes;
  const double eb = dtype_bytes(op.dtype);
  if (op.kind == OpKind::Gemm) {
    flops = 2.0 * op.m * op.n * op.k * std::max<std::int64_t>(op.batch, 1);
    if (bytes <= 0)
      bytes = (op.m * op.k + op.k * op.n + op.m * op.n) * std::max<std::int64_t>(op.batch, 1) * eb;
  }
  const bool compute_bound = flops / peak_flops(cluster_.gpu, op.dtype, *profile_) >
                             bytes / hbm_bandwidth_Bps(cluster_.gpu, *profile_);
  (compute_bound ? t.gemm_s : t.memory_s) += dt;
  t.total_s += dt;
}

namespace {
Op collective(Coll c, GroupDim g, int size, double bytes) {
  Op op;
  op.kind = OpKind::Collective;
  op.coll = c;
  op.group = g;
  op.group_size = static_cast<std::uint32_t>(size);
  op.stream = g == GroupDim::EP ? Stream::CommEP : Stream::CommTP;
  op.bytes = bytes;
  return op;
}
}  // namespace

const std::vector<StepOp>& StepModel::ops(const BatchShape& b) {
  ops_.clear();
  const std::int64_t T = b.tokens();
  if (T <= 0) return ops_;
  const TransformerSpec& m = w_->model.tf;
  const DType dt = s_.dtype;
  const double eb = dtype_bytes(dt), kvb = dtype_bytes(s_.kv_dtype);
  const int tp = s_.tp, hd = m.hd();
  const int hq = m.heads / tp, kvg = std::max(1, m.kv_heads / tp);
  const int layers = m.layers;
  auto add = [&](const Op& op, int times) {
    if (times > 0) ops_.push_back({op, times});
  };

  // Attention block, every layer.
  add(gemm(T, static_cast<std::int64_t>(hq + 2 * kvg) * hd, m.hidden, dt), layers);
  if (b.prefill_tokens > 0) {
    Op a;
    a.kind = OpKind::Attention;
    a.dtype = dt;
    a.causal = true;
    a.flops = 4.0 * hq * hd * b.prefill_attn_pairs;
    a.bytes =
        (2.0 * b.prefill_tokens * hq * hd) * eb + b.prefill_context_tokens * 2.0 * kvg * hd * kvb;
    // Shape for replay: all chunks as one causal block of the mean context.
    a.batch = hq;
    a.m = b.prefill_tokens;
    a.n = static_cast<std::int64_t>(
        std::max(1.0, b.prefill_attn_pairs / static_cast<double>(b.prefill_tokens)));
    a.k = hd;
    add(a, layers);
  }
  if (b.decodes > 0)
    add(membound(b.decode_context_tokens * 2.0 * kvg * hd * kvb + 2.0 * b.decodes * hq * hd * eb,
                 dt),
        layers);
  add(gemm(T, m.hidden, static_cast<std::int64_t>(hq) * hd, dt), layers);
  add(membound(6.0 * T * m.hidden * eb, dt), layers);
  const double act_bytes = static_cast<double>(T) * m.hidden * eb;
  if (tp > 1) add(collective(Coll::AllReduce, GroupDim::TP, tp, act_bytes), layers);

  // Dense MLP layers.
  const int up = m.gated_mlp ? 2 : 1;
  if (dense_layers_ > 0) {
    add(gemm(T, static_cast<std::int64_t>(up) * m.ffn_hidden / tp, m.hidden, dt), dense_layers_);
    add(membound(3.0 * T * (m.ffn_hidden / tp) * eb, dt), dense_layers_);
    add(gemm(T, m.hidden, m.ffn_hidden / tp, dt), dense_layers_);
    if (tp > 1) add(collective(Coll::AllReduce, GroupDim::TP, tp, act_bytes), dense_layers_);
  }
  // MoE layers.
  if (moe_layers_ > 0) {
    const int E = m.experts, ep = s_.ep, etp = tp / ep;
    add(gemm(T, E, m.hidden, dt), moe_layers_);
    const double slots = static_cast<double>(T) * m.top_k;
    // Expected share of experts that receive at least one of the batch's routed slots.
    const double p_active = 1.0 - std::pow(1.0 - 1.0 / E, slots);
    const double active_per_rank = std::max(1.0, std::ceil(p_active * (E / ep)));
    const double per_expert =
        slots / (E * p_active) * m.moe_load_factor_at(m.moe_imbalance_set ? m.moe_imbalance : 1.0);
    const auto rows = static_cast<std::int64_t>(std::ceil(per_expert));
    Op g1 = gemm(rows, static_cast<std::int64_t>(up) * m.moe_ffn_hidden / etp, m.hidden, dt);
    g1.batch = static_cast<std::int64_t>(active_per_rank);
    g1.grouped = GroupedDim::M;
    Op g2 = gemm(rows, m.hidden, m.moe_ffn_hidden / etp, dt);
    g2.batch = g1.batch;
    g2.grouped = GroupedDim::M;
    add(g1, moe_layers_);
    add(membound(3.0 * rows * g1.batch * (m.moe_ffn_hidden / etp) * eb, dt), moe_layers_);
    add(g2, moe_layers_);
    if (m.shared_experts > 0) {
      const std::int64_t sf = static_cast<std::int64_t>(m.shared_experts) * m.moe_ffn_hidden / tp;
      add(gemm(T, up * sf, m.hidden, dt), moe_layers_);
      add(gemm(T, m.hidden, sf, dt), moe_layers_);
    }
    if (ep > 1) {
      add(collective(Coll::AllToAll, GroupDim::EP, ep, slots / ep * m.hidden * eb),
          2 * moe_layers_);
      if (etp > 1)
        add(collective(Coll::AllReduce, GroupDim::TP, etp, act_bytes * m.top_k / ep), moe_layers_);
    } else if (tp > 1) {
      add(collective(Coll::AllReduce, GroupDim::TP, tp, act_bytes), moe_layers_);
    }
  }
  // LM head and logits.
  if (b.logits > 0) {
    add(gemm(b.logits, m.vocab / tp, m.hidden, dt), 1);
    if (tp > 1)
      add(collective(Coll::AllGather, GroupDim::TP, tp,
                     static_cast<double>(b.logits) * m.vocab * eb),
          1);
  }
  // Pipeline: activations handed from stage to stage.
  if (s_.pp > 1) {
    Op send;
    send.kind = OpKind::Send;
    send.stream = Stream::CommPP;
    send.peer_delta = 1;
    send.bytes = act_bytes / tp;
    add(send, s_.pp - 1);
  }
  return ops_;
}

StepTime StepModel::time(const BatchShape& b) {
  StepTime st;
  double send_s = 0;
  for (const StepOp& so : ops(b)) {
    const Op& op = so.op;
    if (op.kind == OpKind::Collective) {
      int slot = kTpAllReduce;
      if (op.coll == Coll::AllToAll)
        slot = kEpAllToAll;
      else if (op.coll == Coll::AllGather)
        slot = kTpAllGather;
      else if (static_cast<int>(op.group_size) != s_.tp)
        slot = kEtpAllReduce;
      const double t = coll_s(slot, op.bytes) * so.times;
      st.comm_s += t;
      st.total_s += t;
    } else if (op.kind == OpKind::Send) {
      send_s = coll_s(kPpSend, op.bytes);
      const double t = send_s * so.times;
      st.comm_s += t;
      st.total_s += t;
    } else {
      add_op(op, st, so.times);
    }
  }
  st.interval_s = s_.pp > 1 ? (st.total_s - send_s * (s_.pp - 1)) / s_.pp + send_s : st.total_s;
  return st;
}

Program StepModel::step_program(const BatchShape& b) {
  if (s_.pp > 1)
    throw InputError("serving config", "serving.pp", std::to_string(s_.pp),
                     "1 for exec replay of serving steps");
  if (s_.ep > 1 && s_.ep != s_.tp)
    throw InputError("serving config", "serving.ep", std::to_string(s_.ep),
                     fmt::format("1 or tp ({}) for exec replay of serving steps", s_.tp));
  Program p;
  p.layout.tp = s_.tp;
  p.layout.ep = s_.ep;
  if (s_.ep > 1) p.layout.etp = 1;  // experts folded over the TP ranks
  p.layout.sequence_parallel = false;
  p.world = s_.tp;
  p.dtype = s_.dtype;
  p.tokens_per_iteration = static_cast<double>(b.tokens());
  RankClass rc;
  rc.stage = 0;
  rc.multiplicity = static_cast<std::uint32_t>(s_.tp);
  const std::uint16_t name = p.intern("serve.step");
  for (const StepOp& so : ops(b))
    for (int i = 0; i < so.times; ++i) {
      Op op = so.op;
      op.name = name;
      op.phase = Phase::Forward;
      if (op.kind == OpKind::Gemm && op.flops <= 0)
        op.flops = 2.0 * op.m * op.n * op.k * std::max<std::int64_t>(op.batch, 1);
      if (!rc.ops.empty()) {  // each op after the previous one: a serving step is sequential
        op.dep_begin = static_cast<std::uint32_t>(rc.deps.size());
        op.dep_count = 1;
        rc.deps.push_back(static_cast<std::uint32_t>(rc.ops.size() - 1));
      }
      rc.ops.push_back(op);
    }
  p.classes.push_back(std::move(rc));
  return p;
}

double StepModel::kv_transfer_s(std::int64_t tokens) const {
  const double bytes = kv_model_bytes_ * static_cast<double>(tokens) / s_.gpus_per_replica();
  return plan_p2p(prefill_gpu0_, decode_gpu0_, bytes, ctx_).estimate_s;
}

}  // namespace tutti::serve
