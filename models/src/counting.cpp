// Counting: parameters, FLOPs, memory per GPU, and layout feasibility.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "shapes.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/format.hpp"
#include "tutti/core/limits.hpp"
#include "tutti/core/units.hpp"
#include "tutti/models/workload.hpp"

namespace tutti {
namespace detail {

std::vector<Conv> resnet_convs(const ResNetSpec& r) {
  std::vector<Conv> out;
  int size = r.image_size / 2;  // 7x7 stride-2 stem
  out.push_back({r.channels, r.width, 7, 2, r.image_size, size, -1});
  size = (size + 1) / 2;  // 3x3 stride-2 max pool
  int in = r.width;
  int block = 0;
  for (std::size_t s = 0; s < r.blocks.size(); ++s) {
    int w = r.width << s;
    for (int b = 0; b < r.blocks[s]; ++b, ++block) {
      int stride = (b == 0 && s > 0) ? 2 : 1;  // ResNet v1.5: stride in the 3x3 conv
      int o = size / stride;
      out.push_back({in, w, 1, 1, size, size, block});
      out.push_back({w, w, 3, stride, size, o, block});
      out.push_back({w, 4 * w, 1, 1, o, o, block});
      if (b == 0) out.push_back({in, 4 * w, 1, stride, size, o, block});  // projection shortcut
      in = 4 * w;
      size = o;
    }
  }
  return out;
}

int resnet_out_channels(const ResNetSpec& r) {
  return 4 * (r.width << (r.blocks.size() - 1));
}

double optimizer_bytes_per_param(const TrainingSpec& t) {
  bool mixed = !(t.dtype == DType::FP32 || t.dtype == DType::TF32);
  if (t.optimizer == Optimizer::Adam) return mixed ? 12.0 : 8.0;  // (fp32 master +) m + v
  return mixed ? 8.0 : 4.0;                                       // (fp32 master +) momentum
}

double attn_matmul_params(const TransformerSpec& t) {
  double h = t.hidden, d = t.hd();
  return h * d * (2.0 * t.heads + 2.0 * t.kv_heads);
}

double mlp_matmul_params(const TransformerSpec& t, double f) {
  return (t.gated_mlp ? 3.0 : 2.0) * t.hidden * f;
}

static double mlp_bias_params(const TransformerSpec& t, double f) {
  return t.bias ? (t.gated_mlp ? 2.0 * f : f) + t.hidden : 0.0;
}

LayerParams layer_params(const TransformerSpec& t, int layer) {
  LayerParams p;
  double h = t.hidden, d = t.hd();
  double norm = t.layernorm ? 2.0 * h : h;
  p.dense = attn_matmul_params(t) + 2.0 * norm;
  if (t.bias) p.dense += (t.heads + 2.0 * t.kv_heads) * d + h;
  if (t.layer_is_moe(layer)) {
    double f = t.moe_ffn_hidden;
    p.dense += h * t.experts;  // router
    p.dense += t.shared_experts * (mlp_matmul_params(t, f) + mlp_bias_params(t, f));
    p.expert = t.experts * (mlp_matmul_params(t, f) + mlp_bias_params(t, f));
    p.active_expert = t.top_k * (mlp_matmul_params(t, f) + mlp_bias_params(t, f));
  } else {
    p.dense += mlp_matmul_params(t, t.ffn_hidden) + mlp_bias_params(t, t.ffn_hidden);
  }
  return p;
}

double input_params(const ModelSpec& m) {
  const auto& t = m.tf;
  double h = t.hidden;
  switch (m.family) {
    case ModelFamily::Transformer:
      return double(t.vocab) * h + double(t.max_positions) * h;
    case ModelFamily::Encoder:
      return double(t.vocab) * h + double(t.max_positions) * h + double(t.type_vocab) * h +
             (t.layernorm ? 2.0 * h : h);
    case ModelFamily::ViT: {
      double patch = double(t.patch_size) * t.patch_size * t.channels;
      int g = t.image_size / t.patch_size;
      return patch * h + h /*bias*/ + h /*cls*/ + double(g * g + 1) * h /*positions*/;
    }
    case ModelFamily::ResNet:
    case ModelFamily::DLRM:
      return 0;
  }
  return 0;
}

double output_params(const ModelSpec& m) {
  const auto& t = m.tf;
  double h = t.hidden;
  double norm = t.layernorm ? 2.0 * h : h;
  switch (m.family) {
    case ModelFamily::Transformer:
      return norm + (t.tied_embeddings ? 0.0 : double(t.vocab) * h);
    case ModelFamily::Encoder: {
      // MLM head: transform dense + norm, output bias (decoder weights tied), pooler + NSP.
      double p =
          h * h + h + norm + double(t.vocab) + (t.tied_embeddings ? 0.0 : double(t.vocab) * h);
      if (t.pooler) p += h * h + h + 2.0 * h + 2.0;
      return p;
    }
    case ModelFamily::ViT:
      return norm + h * t.classes + t.classes;
    case ModelFamily::ResNet:
    case ModelFamily::DLRM:
      return 0;
  }
  return 0;
}

std::int64_t vocab_per_rank(const TransformerSpec& t, int tp) {
  return (t.vocab + tp - 1) / tp;
}

double layer_gemm_flops_per_token(const TransformerSpec& t, int layer) {
  double f = 2.0 * attn_matmul_params(t);
  if (t.layer_is_moe(layer)) {
    f += 2.0 * t.hidden * t.experts;
    f += 2.0 * (t.top_k + t.shared_experts) * mlp_matmul_params(t, t.moe_ffn_hidden);
  } else {
    f += 2.0 * mlp_matmul_params(t, t.ffn_hidden);
  }
  return f;
}

double recomputed_module_gemm_flops_per_token(const TransformerSpec& t, int layer,
                                              const Layout& l) {
  if (l.recompute != Recompute::Selective) return 0;
  const double shared = 2.0 * t.shared_experts * mlp_matmul_params(t, t.moe_ffn_hidden);
  if (!t.layer_is_moe(layer))
    return l.recomputes(RecomputeModule::Mlp) ? 2.0 * mlp_matmul_params(t, t.ffn_hidden) : 0.0;
  if (l.recomputes(RecomputeModule::Moe))  // router, routed and shared experts (TP-split router)
    return 2.0 * t.hidden * t.experts + 2.0 * t.top_k * mlp_matmul_params(t, t.moe_ffn_hidden) +
           shared;
  return l.recomputes(RecomputeModule::SharedExperts) ? shared : 0.0;
}

double attn_core_flops_per_token(const TransformerSpec& t, int seq_len) {
  return 4.0 * double(seq_len) * t.heads * t.hd();
}

double head_flops_per_token(const ModelSpec& m) {
  const auto& t = m.tf;
  double h = t.hidden;
  switch (m.family) {
    case ModelFamily::Transformer:
      return 2.0 * h * double(t.vocab);
    case ModelFamily::Encoder:
      return 2.0 * h * h + 2.0 * h * double(t.vocab);
    case ModelFamily::ViT: {
      int g = t.image_size / t.patch_size;
      double patch = double(t.patch_size) * t.patch_size * t.channels;
      return 2.0 * patch * h * g * g + 2.0 * h * t.classes;  // per sample
    }
    default:
      return 0;
  }
}

}  // namespace detail

using namespace detail;

// ---- parameters ------------------------------------------------------------------------------

static double dlrm_mlp_params(const DlrmSpec& d, double& bottom, double& top) {
  bottom = 0;
  double in = d.dense_features;
  for (int o : d.bottom_mlp) {
    bottom += in * o + o;
    in = o;
  }
  double feats = double(d.table_rows.size()) + 1;
  in = d.embedding_dim + feats * (feats - 1) / 2;
  top = 0;
  for (int o : d.top_mlp) {
    top += in * o + o;
    in = o;
  }
  return bottom + top;
}

static double model_params(const Workload& w, bool active) {
  const auto& m = w.model;
  switch (m.family) {
    case ModelFamily::ResNet: {
      double p = 0;
      for (const auto& c : resnet_convs(m.resnet)) p += c.params() + 2.0 * c.out_ch;  // conv + BN
      int out = resnet_out_channels(m.resnet);
      return p + double(out) * m.resnet.classes + m.resnet.classes;
    }
    case ModelFamily::DLRM: {
      double b, t;
      double p = dlrm_mlp_params(m.dlrm, b, t);
      for (auto r : m.dlrm.table_rows) p += double(r) * m.dlrm.embedding_dim;
      return p;
    }
    default: {
      double p = input_params(m) + output_params(m);
      for (int i = 0; i < m.tf.layers; ++i) {
        auto lp = layer_params(m.tf, i);
        p += lp.dense + (active ? lp.active_expert : lp.expert);
      }
      return p;
    }
  }
}

double params(const Workload& w) {
  return model_params(w, false);
}
double active_params(const Workload& w) {
  return model_params(w, true);
}

double tokens_to_train(const Workload& w) {
  return w.model.token_model() ? w.training.tokens_to_train : w.training.samples_to_train;
}

double tokens_per_iteration(const Workload& w) {
  return w.model.token_model() ? double(w.training.global_batch) * w.training.seq_len : 0.0;
}

// ---- FLOPs -----------------------------------------------------------------------------------

static double forward_flops_per_sample(const Workload& w) {
  const auto& m = w.model;
  switch (m.family) {
    case ModelFamily::ResNet: {
      double macs = 0;
      for (const auto& c : resnet_convs(m.resnet)) macs += c.macs_per_image();
      macs += double(resnet_out_channels(m.resnet)) * m.resnet.classes;
      return 2.0 * macs;
    }
    case ModelFamily::DLRM: {
      const auto& d = m.dlrm;
      double f = 0, in = d.dense_features;
      for (int o : d.bottom_mlp) {
        f += 2.0 * in * o;
        in = o;
      }
      double feats = double(d.table_rows.size()) + 1;
      f += 2.0 * feats * feats * d.embedding_dim;  // pairwise dot products (batched GEMM)
      in = d.embedding_dim + feats * (feats - 1) / 2;
      for (int o : d.top_mlp) {
        f += 2.0 * in * o;
        in = o;
      }
      return f;
    }
    default: {
      const auto& t = m.tf;
      int s = w.training.seq_len;
      double per_token = 0;
      for (int i = 0; i < t.layers; ++i)
        per_token += layer_gemm_flops_per_token(t, i) + attn_core_flops_per_token(t, s);
      double f = per_token * s;
      if (m.family == ModelFamily::ViT) return f + head_flops_per_token(m);
      return f + head_flops_per_token(m) * s;
    }
  }
}

double model_flops_per_iteration(const Workload& w) {
  return 3.0 * forward_flops_per_sample(w) * double(w.training.global_batch);
}

double model_flops_per_token(const Workload& w) {
  double per_iter = model_flops_per_iteration(w);
  double n = w.model.token_model() ? tokens_per_iteration(w) : double(w.training.global_batch);
  return per_iter / n;
}

double hardware_flops_per_iteration(const Workload& w, const Layout& l) {
  const auto& m = w.model;
  double gb = double(w.training.global_batch);
  if (m.family == ModelFamily::ResNet || m.family == ModelFamily::DLRM)
    return 3.0 * forward_flops_per_sample(w) * gb;
  const auto& t = m.tf;
  int s = w.training.seq_len;
  bool causal = m.family == ModelFamily::Transformer;
  // Unfused attention computes the full square (the causal mask does not skip work).
  double core =
      attn_core_flops_per_token(t, s) * (causal && w.training.flash_attention ? 0.5 : 1.0);
  // Frozen base weights (LoRA): forward and input-gradient GEMMs only, no weight gradients.
  const double passes = w.training.frozen_weights ? 2.0 : 3.0;
  double per_token = 0;
  for (int i = 0; i < t.layers; ++i) {
    double gemm = layer_gemm_flops_per_token(t, i);
    per_token += passes * gemm + 3.0 * core;
    if (l.recomputes(RecomputeModule::CoreAttn)) per_token += core;
    if (l.recompute == Recompute::Full) per_token += gemm + core;
    per_token += recomputed_module_gemm_flops_per_token(t, i, l);
  }
  double f = per_token * s * gb;
  // GEMMs every TP rank runs in full (replicated): MoE routers, the encoder's MLM transform,
  // the ViT patch embedding and classifier.
  double replicated = 0;
  const bool router_again = l.recompute == Recompute::Full || l.recomputes(RecomputeModule::Moe);
  for (int i = 0; i < t.layers; ++i)
    // (Folded layouts route each rank's sequence shard: the router is not replicated.) Full
    // recompute, or recompute of the MoE module, re-runs the router's forward.
    if (t.layer_is_moe(i) && !l.folded())
      replicated += (passes + (router_again ? 1.0 : 0.0)) * 2.0 * t.hidden * t.experts * s * gb;
  if (m.family == ModelFamily::Encoder)
    replicated += passes * 2.0 * double(t.hidden) * t.hidden * s * gb;
  f += (l.tp - 1) * replicated;
  if (m.family == ModelFamily::ViT) {
    // Patch embedding (forward + weight gradient; no gradient for the image) and classifier,
    // both replicated over TP.
    int g = t.image_size / t.patch_size;
    double patch = 2.0 * double(t.patch_size) * t.patch_size * t.channels * t.hidden * g * g;
    double cls = 2.0 * t.hidden * t.classes;
    return f + (2.0 * patch + 3.0 * cls) * gb * l.tp;
  }
  // Head GEMMs with the vocabulary padded to a multiple of tp (what the ranks execute).
  ModelSpec padded = m;
  if (m.token_model()) padded.tf.vocab = vocab_per_rank(t, l.tp) * l.tp;
  f += passes * head_flops_per_token(padded) * gb * s;
  return f;
}

double megatron_flops_per_iteration(const Workload& w, Recompute recompute,
                                    unsigned recompute_modules) {
  const auto& m = w.model;
  double model = model_flops_per_iteration(w);
  Layout l;
  l.recompute = recompute;
  l.recompute_modules = recompute_modules;
  const bool core_again = recompute == Recompute::Full || l.recomputes(RecomputeModule::CoreAttn);
  if (!(m.family == ModelFamily::Transformer || m.family == ModelFamily::Encoder ||
        m.family == ModelFamily::ViT) ||
      !core_again)
    return model;
  const auto& t = m.tf;
  int s = w.training.seq_len;
  double extra = 0;  // per token
  for (int i = 0; i < t.layers; ++i) {
    double core = attn_core_flops_per_token(t, s);
    extra += recompute == Recompute::Full ? layer_gemm_flops_per_token(t, i) + core : core;
  }
  return model + extra * s * double(w.training.global_batch);
}

// ---- layout helpers --------------------------------------------------------------------------

int microbatches(const Workload& w, const Layout& l) {
  std::int64_t per = std::max<std::int64_t>(1, std::int64_t(l.micro_batch) * l.dp);
  return static_cast<int>(
      std::min<std::int64_t>(w.training.global_batch / per, std::numeric_limits<int>::max()));
}

LayerRange stage_layers(const Workload& w, const Layout& l, int v) {
  int layers = (w.model.family == ModelFamily::ResNet || w.model.family == ModelFamily::DLRM)
                   ? 1
                   : w.model.tf.layers;
  int V = l.pp * l.vp;
  int base = layers / V, rem = layers % V;
  // Extra layers go to the middle virtual stages first, then the last, then the first.
  auto extra = [&](int i) {
    if (rem == 0) return 0;
    if (V == 1) return rem;
    int middle = V - 2;
    if (i >= 1 && i <= V - 2) return (i - 1) < rem ? 1 : 0;
    if (i == V - 1) return rem > middle ? 1 : 0;
    return rem > middle + 1 ? 1 : 0;  // i == 0
  };
  LayerRange r;
  for (int i = 0; i < v; ++i) r.first += base + extra(i);
  r.count = base + extra(v);
  return r;
}

// ---- memory ----------------------------------------------------------------------------------

double activation_bytes_per_layer(const Workload& w, const Layout& l, int layer) {
  const auto& m = w.model;
  if (!(m.family == ModelFamily::Transformer || m.family == ModelFamily::Encoder ||
        m.family == ModelFamily::ViT))
    return 0;
  const auto& t = m.tf;
  double B = act_bytes(w.training.dtype);
  double s = double(w.training.seq_len) / l.cp, b = l.micro_batch, sb = s * b;
  double h = t.hidden, a = t.heads, g = t.kv_heads, d = t.hd(), tp = l.tp;
  bool sp = l.sequence_parallel && l.tp > 1;
  double u = sp ? tp : 1.0;
  if (l.recompute == Recompute::Full) return B * sb * h / u;  // the layer input (2sbh)
  double mask = t.dropout ? 1.0 : 0.0;
  // Replicated across TP unless SP: 2 norm inputs, QKV input, MLP input, 2 dropout masks.
  // Selective recompute of modules (Layout::recompute_modules) frees what the recomputed module
  // saved: layernorm its outputs (the QKV and MLP inputs); mlp / moe / shared_experts everything
  // inside the module but its input; moe_act the routed experts' activation output.
  double unpar = 4.0 * B * h + 2.0 * mask * h;
  if (l.recomputes(RecomputeModule::LayerNorm)) unpar -= 2.0 * B * h;
  // Split across TP: Q, K, V, attention output.
  double par = B * (2.0 * a * d + 2.0 * g * d);
  if (t.layer_is_moe(layer)) {
    double f = t.moe_ffn_hidden, fu = t.gated_mlp ? 2.0 * f : f;
    // Router logits, dispatched in + expert out; the busiest rank holds load x the mean tokens.
    const double load = t.moe_load_factor();
    if (!l.recomputes(RecomputeModule::Moe)) {
      unpar += B * t.experts + 2.0 * B * t.top_k * load * h;
      par += B * t.top_k * load * (l.recomputes(RecomputeModule::MoeAct) ? fu : fu + f);
      if (!l.recomputes(RecomputeModule::SharedExperts)) par += B * t.shared_experts * (fu + f);
    }
  } else if (!l.recomputes(RecomputeModule::Mlp)) {
    double f = t.ffn_hidden, fu = t.gated_mlp ? 2.0 * f : f;
    par += B * (fu + f);
  }
  double bytes = sb * (unpar / u + par / tp);
  bool keep_scores = !l.recomputes(RecomputeModule::CoreAttn) && !w.training.flash_attention;
  if (keep_scores) {
    double s_kv = w.training.seq_len;
    // softmax output (B), dropout mask (1) and dropout output (B): 5as^2b for bf16 with dropout.
    bytes += sb * a * s_kv / tp * (B + mask * (1.0 + B));
  }
  return bytes;
}

namespace {

struct StageParams {
  double dense = 0, expert = 0;  // per rank (after TP / EP sharding)
  double layer_max = 0;          // largest single layer, per rank (ZeRO-3 gather buffers)
};

StageParams stage_params(const Workload& w, const Layout& l, int stage) {
  StageParams sp;
  const auto& m = w.model;
  if (m.family == ModelFamily::ResNet || m.family == ModelFamily::DLRM) {
    if (m.family == ModelFamily::DLRM) {
      double b, t;
      sp.dense = dlrm_mlp_params(m.dlrm, b, t);
      double emb = 0;
      for (auto r : m.dlrm.table_rows) emb += double(r) * m.dlrm.embedding_dim;
      sp.expert = emb / l.dp;  // table-wise sharded over all ranks (not data-parallel)
    } else {
      sp.dense = params(w);
    }
    sp.layer_max = sp.dense;
    return sp;
  }
  const auto& t = m.tf;
  for (int c = 0; c < l.vp; ++c) {
    auto r = stage_layers(w, l, c * l.pp + stage);
    for (int i = r.first; i < r.first + r.count; ++i) {
      auto lp = layer_params(t, i);
      sp.dense += lp.dense / l.tp;
      sp.expert += lp.expert / (double(l.expert_tp()) * l.ep);
      sp.layer_max =
          std::max(sp.layer_max, lp.dense / l.tp + lp.expert / (double(l.expert_tp()) * l.ep));
    }
  }
  if (stage == 0) sp.dense += input_params(m) / l.tp;
  if (stage == l.pp - 1) {
    double out = output_params(m);
    if (m.family != ModelFamily::ViT && t.tied_embeddings && l.pp > 1)
      out += double(t.vocab) * t.hidden;  // Megatron keeps a copy of tied embeddings here
    sp.dense += out / l.tp;
  }
  return sp;
}

int in_flight_chunks(const Workload& w, const Layout& l, int stage) {
  int M = microbatches(w, l);
  switch (l.schedule) {
    case PipeSchedule::GPipe:
      return M * l.vp;
    case PipeSchedule::OneFOneB:
      return std::min(l.pp - stage, M);
    case PipeSchedule::Interleaved:
      return std::min((l.pp - stage - 1) * 2 + (l.vp - 1) * l.pp + 1, M * l.vp);
  }
  return 1;
}

}  // namespace

std::vector<MemoryBreakdown> memory_per_stage(const Workload& w, const Layout& l) {
  std::vector<MemoryBreakdown> out;
  const auto& m = w.model;
  const auto& tr = w.training;
  double Bp = param_bytes(tr.dtype), Bg = dtype_bytes(tr.grad_dtype);
  double Bo = optimizer_bytes_per_param(tr);
  // Dense states shard over the sharding group (hybrid sharding: shard_group ranks); expert
  // states over their expert-data-parallel group: tp*cp*dp / (etp*ep) ranks.
  double shard = l.shard_size();
  double eshard = std::max(1.0, double(l.tp) * l.cp * l.dp / (double(l.expert_tp()) * l.ep));
  bool transformer = !(m.family == ModelFamily::ResNet || m.family == ModelFamily::DLRM);
  for (int st = 0; st < l.pp; ++st) {
    MemoryBreakdown mb;
    mb.stage = st;
    StageParams sp = stage_params(w, l, st);
    double dense_w = l.zero >= 3 ? sp.dense / shard : sp.dense;
    double exp_w = l.zero >= 3 ? sp.expert / eshard : sp.expert;
    if (m.family == ModelFamily::DLRM) exp_w = sp.expert;  // tables are model-parallel already
    mb.weights_bytes = (dense_w + exp_w) * Bp;
    double dg = l.zero >= 2 ? sp.dense / shard : sp.dense;
    double eg = l.zero >= 2 ? sp.expert / eshard : sp.expert;
    double dopt = l.zero >= 1 ? sp.dense / shard : sp.dense;
    double eopt = l.zero >= 1 ? sp.expert / eshard : sp.expert;
    if (m.family == ModelFamily::DLRM) {
      // Embedding tables (model-parallel, in sp.expert): sparse gradients applied in place (no
      // dense buffer); plain SGD keeps no state for them (the MLPerf reference), Adam keeps m, v.
      eg = 0;
      eopt = tr.optimizer == Optimizer::SGD ? 0.0 : sp.expert * 8.0 / Bo;
    }
    if (tr.frozen_weights) dg = eg = dopt = eopt = 0;  // LoRA: only the (small) adapters train
    mb.gradients_bytes = (dg + eg) * Bg;
    mb.optimizer_bytes = (dopt + eopt) * Bo;
    double B = act_bytes(tr.dtype);
    if (transformer) {
      const auto& t = m.tf;
      int chunks = in_flight_chunks(w, l, st);
      double s = double(tr.seq_len) / l.cp, b = l.micro_batch, h = t.hidden;
      double u = (l.sequence_parallel && l.tp > 1) ? l.tp : 1.0;
      // Layers held: `chunks` chunk-activations; with vp chunks per rank each chunk is ~1/vp of
      // the stage's layers (exact per chunk in the sum below for the first `chunks` chunks).
      int layers = 0;
      double per_mb = 0;  // activation bytes of one micro-batch through all of this stage's layers
      double layer_max = 0;
      for (int c = 0; c < l.vp; ++c) {
        auto r = stage_layers(w, l, c * l.pp + st);
        layers += r.count;
        for (int i = r.first; i < r.first + r.count; ++i) {
          double a = activation_bytes_per_layer(w, l, i);
          per_mb += a;
          Layout none = l;
          none.recompute = Recompute::None;
          layer_max = std::max(layer_max, activation_bytes_per_layer(w, none, i));
        }
      }
      mb.layers = layers;
      mb.in_flight_microbatches = double(chunks) / l.vp;
      mb.activations_per_layer_bytes =
          activation_bytes_per_layer(w, l, stage_layers(w, l, st).first);
      mb.activations_bytes = per_mb * mb.in_flight_microbatches;
      if (st == 0 && t.dropout) mb.activations_bytes += s * b * h / u * mb.in_flight_microbatches;
      if (st == l.pp - 1 && m.family != ModelFamily::ViT) {
        // Final norm input, head input, fp32 logits (Korthikanti: 4sbh/t (1 + v/h) in bf16).
        double vr = double(vocab_per_rank(t, l.tp));
        mb.activations_bytes += 2.0 * B * s * b * h / u + 4.0 * s * b * vr;
        mb.temporary_bytes += 4.0 * s * b * vr;  // logits gradient
      }
      if (l.recompute == Recompute::Full) mb.temporary_bytes += layer_max;  // recomputed layer
      // Recomputed modules: the largest set one layer's backward rebuilds at a time.
      if (l.recompute == Recompute::Selective && l.recompute_modules != 0) {
        Layout none = l;
        none.recompute = Recompute::None;
        none.recompute_modules = 0;
        double rebuilt = 0;
        for (int c = 0; c < l.vp; ++c) {
          auto r = stage_layers(w, l, c * l.pp + st);
          for (int i = r.first; i < r.first + r.count; ++i)
            rebuilt = std::max(rebuilt, activation_bytes_per_layer(w, none, i) -
                                            activation_bytes_per_layer(w, l, i));
        }
        mb.temporary_bytes += rebuilt;
      }
      if (l.zero >= 3) mb.temporary_bytes += 2.0 * sp.layer_max * Bp;  // gathered + prefetch
      // reshard=0: every layer gathered in forward stays until its backward, so at the end of the
      // forward the stage's parameters are all unsharded (FSDP reshard_after_forward=False).
      if (l.zero >= 3 && !l.reshard_after_forward())
        mb.temporary_bytes += (sp.dense + sp.expert - dense_w - exp_w) * Bp;
      if (t.is_moe())  // all-to-all buffers of the busiest rank
        mb.temporary_bytes += 2.0 * B * s * b * t.top_k * t.moe_load_factor() * h;
    } else if (m.family == ModelFamily::ResNet) {
      // Stored activations per image: every conv output and its BN/ReLU output (16-bit).
      double per_image = 0;
      for (const auto& c : resnet_convs(m.resnet))
        per_image += 2.0 * B * c.out_size * c.out_size * c.out_ch;
      mb.activations_per_layer_bytes = per_image * l.micro_batch;
      mb.activations_bytes = per_image * l.micro_batch;
      mb.in_flight_microbatches = 1;
      mb.layers = 1;
    } else {
      const auto& d = m.dlrm;
      double b = l.micro_batch, feats = double(d.table_rows.size()) + 1;
      double acts = 0, in = d.dense_features;
      for (int o : d.bottom_mlp) {
        acts += B * b * (in + o);
        in = o;
      }
      acts += B * b * feats * d.embedding_dim * 2.0;  // embeddings gathered locally + exchanged
      in = d.embedding_dim + feats * (feats - 1) / 2;
      for (int o : d.top_mlp) {
        acts += B * b * (in + o);
        in = o;
      }
      mb.activations_bytes = acts;
      mb.activations_per_layer_bytes = acts;
      mb.in_flight_microbatches = 1;
      mb.layers = 1;
      // Local lookups for the global micro-batch before the all-to-all.
      mb.temporary_bytes =
          B * b * l.dp * std::ceil(double(d.table_rows.size()) / l.dp) * d.embedding_dim;
    }
    mb.total_bytes = mb.weights_bytes + mb.gradients_bytes + mb.optimizer_bytes +
                     mb.activations_bytes + mb.temporary_bytes;
    out.push_back(mb);
  }
  return out;
}

MemoryBreakdown memory_per_gpu(const Workload& w, const Layout& l) {
  auto v = memory_per_stage(w, l);
  std::size_t best = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i].total_bytes > v[best].total_bytes) best = i;
  return v[best];
}

// ---- feasibility -----------------------------------------------------------------------------

namespace {

/// Structural problems of `l` for `w`; empty when none.
std::string structural_problem(const Workload& w, const Layout& l) {
  const auto& m = w.model;
  const auto& tr = w.training;
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.cp < 1 || l.ep < 1 || l.vp < 1 || l.micro_batch < 1)
    return "every parallel degree must be >= 1";
  if (tr.global_batch % (std::int64_t(l.micro_batch) * l.dp) != 0)
    return fmt::format(
        "global_batch {} is not divisible by micro_batch*dp = {}*{}; use a dp that "
        "divides {}",
        tr.global_batch, l.micro_batch, l.dp, tr.global_batch / l.micro_batch);
  if (l.shard_group < 0 || (l.shard_group > 0 && (l.dp * l.cp) % l.shard_group != 0))
    return fmt::format(
        "shard_group={} does not divide the {} data-parallel ranks (dp*cp); 0 shards over all of "
        "them",
        l.shard_group, l.dp * l.cp);
  if (l.shard_group > 0 && l.shard_group < l.dp * l.cp && l.zero == 0)
    return fmt::format("shard_group={} needs zero >= 1 (zero=0 shards nothing)", l.shard_group);
  if (l.reshard >= 0 && l.zero < 3)
    return fmt::format(
        "reshard={} applies to zero=3 only (zero={} keeps every parameter on every rank)",
        l.reshard, l.zero);
  if (l.recompute_modules != 0 && l.recompute != Recompute::Selective)
    return fmt::format("recompute_modules={} needs recompute=selective (found {})",
                       recompute_modules_string(l.recompute_modules), to_string(l.recompute));
  if (l.recomputes(RecomputeModule::MlaUpProj))
    return "recompute_modules mla_up_proj: tutti models no multi-latent attention (MLA) to "
           "recompute";
  bool transformer = !(m.family == ModelFamily::ResNet || m.family == ModelFamily::DLRM);
  {
    // Checked before anything allocates per pass (the Program, memory estimates).
    std::int64_t M = tr.global_batch / (std::int64_t(l.micro_batch) * l.dp);
    std::int64_t layers = transformer ? std::max(1, m.tf.layers) : 1;
    if (M > kMaxLayerPasses / layers)
      return fmt::format(
          "global_batch/(micro_batch*dp) = {} micro-batches per pipeline times {} layers is more "
          "than the {} micro-batch x layer passes a Program holds; use micro_batch*dp >= {} (or a "
          "smaller global_batch)",
          M, layers, kMaxLayerPasses,
          (tr.global_batch + kMaxLayerPasses / layers - 1) / (kMaxLayerPasses / layers));
  }
  if (!transformer) {
    if (l.tp > 1 || l.pp > 1 || l.cp > 1 || l.ep > 1 || l.vp > 1)
      return fmt::format(
          "family {} runs data-parallel only here (tp=pp=cp=ep=vp=1; DLRM shards "
          "its tables over all dp ranks)",
          to_string(m.family));
    if (l.shard_group > 0 && l.shard_group < l.dp * l.cp)
      return fmt::format("shard_group={}: hybrid sharding is modelled for transformer models only",
                         l.shard_group);
    return "";
  }
  const auto& t = m.tf;
  auto divisors = [](int n, int limit) {
    std::string s;
    for (int i = 1; i <= std::min(n, limit); ++i)
      if (n % i == 0) s += (s.empty() ? "" : ", ") + std::to_string(i);
    return s;
  };
  if (t.heads % l.tp != 0)
    return fmt::format("tp={} does not divide heads ({}); use tp in {{{}}}", l.tp, t.heads,
                       divisors(t.heads, 64));
  if (t.kv_heads % l.tp != 0)
    return fmt::format("tp={} does not divide kv_heads ({}); use tp in {{{}}}", l.tp, t.kv_heads,
                       divisors(t.kv_heads, 64));
  if (t.ffn_hidden % l.tp != 0 || (t.is_moe() && t.moe_ffn_hidden % l.expert_tp() != 0))
    return fmt::format("tp={} does not divide the MLP size", l.tp);
  if (l.etp > 0 && l.etp != 1 && l.etp != l.tp)
    return fmt::format(
        "etp={} is not modelled: use etp=1 (parallel folding, EP across tp x dp) or etp=tp={}",
        l.etp, l.tp);
  if (t.layers < l.pp * l.vp)
    return fmt::format("pp*vp = {}*{} exceeds the {} layers", l.pp, l.vp, t.layers);
  if (l.vp > 1 && (l.pp == 1 || l.schedule != PipeSchedule::Interleaved))
    return "vp > 1 needs pp > 1 and the interleaved schedule";
  int M = microbatches(w, l);
  if (l.schedule == PipeSchedule::Interleaved && M % l.pp != 0)
    return fmt::format("the interleaved schedule needs micro-batches ({}) divisible by pp ({})", M,
                       l.pp);
  if (l.ep > 1) {
    if (!t.is_moe()) return fmt::format("ep={} but the model has no experts", l.ep);
    if (t.experts % l.ep != 0)
      return fmt::format("ep={} does not divide experts ({}); use ep in {{{}}}", l.ep, t.experts,
                         divisors(t.experts, 1024));
    const int stage_ranks = l.tp * l.cp * l.dp;
    if (l.folded()) {
      if (stage_ranks % l.ep != 0)
        return fmt::format("ep={} does not divide tp*cp*dp = {} (etp=1 folds EP over them)", l.ep,
                           stage_ranks);
      if (!l.sequence_parallel)
        return fmt::format(
            "etp=1 with tp={} needs sequence parallelism (sp=1): the MoE layer "
            "routes each rank's sequence shard",
            l.tp);
    } else if (l.dp % l.ep != 0) {
      return fmt::format(
          "ep={} does not divide dp={} (EP groups are carved out of the data-parallel "
          "ranks){}",
          l.ep, l.dp, l.tp > 1 && stage_ranks % l.ep == 0 ? "; etp=1 lets EP span tp x dp" : "");
    }
  }
  if (l.cp > 1 && tr.seq_len % (2 * l.cp) != 0)
    return fmt::format(
        "seq_len {} is not divisible by 2*cp = {} (load-balanced context parallelism)", tr.seq_len,
        2 * l.cp);
  if (l.sequence_parallel && l.tp > 1 &&
      (std::int64_t(tr.seq_len / l.cp) * l.micro_batch) % l.tp != 0)
    return fmt::format(
        "sequence parallelism needs seq_len/cp * micro_batch ({}) divisible by tp={}; "
        "change micro_batch or set sp=0",
        std::int64_t(tr.seq_len / l.cp) * l.micro_batch, l.tp);
  return "";
}

std::string gib(double bytes) {
  static constexpr Rung kGiBRung[] = {{kBelowAll, 1, kGiB, fixed(1), "GiB"}};
  return format_si(bytes, {kGiBRung});
}

/// Cheap pre-filter for the suggestion search: enough layers and heads for the degrees.
bool layers_fit(const Workload& w, const Layout& l) {
  const auto& m = w.model;
  if (m.family == ModelFamily::ResNet || m.family == ModelFamily::DLRM)
    return l.tp == 1 && l.pp == 1;
  return l.pp * l.vp <= m.tf.layers && m.tf.heads % l.tp == 0 && m.tf.kv_heads % l.tp == 0;
}

}  // namespace

void check_layout(const Workload& w, const Layout& l, double hbm_bytes) {
  std::string prefix = (w.file.empty() ? w.name : w.file) + ": layout " + to_string(l) + ": ";
  if (auto p = structural_problem(w, l); !p.empty()) throw InputError(prefix + p);
  if (hbm_bytes <= 0) return;
  auto mem = memory_per_gpu(w, l);
  if (mem.total_bytes <= hbm_bytes) return;
  std::string msg =
      prefix +
      fmt::format(
          "needs {} per GPU on stage {} (weights {}, gradients {}, optimizer {}, activations {}, "
          "temporary {}), more than the {} of HBM",
          gib(mem.total_bytes), mem.stage, gib(mem.weights_bytes), gib(mem.gradients_bytes),
          gib(mem.optimizer_bytes), gib(mem.activations_bytes), gib(mem.temporary_bytes),
          gib(hbm_bytes));
  std::vector<std::string> fixes;
  auto fits = [&](const Layout& c) {
    return structural_problem(w, c).empty() && memory_per_gpu(w, c).total_bytes <= hbm_bytes;
  };
  for (Recompute r : {Recompute::Selective, Recompute::Full}) {
    if (int(r) <= int(l.recompute)) continue;
    Layout c = l;
    c.recompute = r;
    if (fits(c)) {
      fixes.push_back(fmt::format("recompute={} ({})", r == Recompute::Full ? "full" : "selective",
                                  gib(memory_per_gpu(w, c).total_bytes)));
      break;
    }
  }
  if (l.dp * l.cp > 1) {
    for (int z = l.zero + 1; z <= 3; ++z) {
      Layout c = l;
      c.zero = z;
      if (fits(c)) {
        fixes.push_back(fmt::format("zero={} ({})", z, gib(memory_per_gpu(w, c).total_bytes)));
        break;
      }
    }
  }
  // Same GPU count, the smallest model-parallel degree tp*pp that fits (ties: smaller pp).
  int gpus = l.gpus();
  bool found = false;
  for (int mp = 1; mp <= gpus && !found; ++mp) {
    for (int tp = 64; tp >= 1 && !found; tp /= 2) {
      if (tp > mp) continue;
      if (mp % tp != 0) continue;
      int pp = mp / tp;
      if ((gpus / l.cp) % mp != 0 || gpus % (mp * l.cp) != 0) continue;
      if (tp == l.tp && pp == l.pp) continue;
      Layout c = l;
      c.tp = tp;
      c.pp = pp;
      c.dp = gpus / (mp * l.cp);
      if (c.vp > 1 && c.pp == 1) {
        c.vp = 1;
        c.schedule = PipeSchedule::OneFOneB;
      }
      if (c.ep > 1 && c.dp % c.ep != 0) continue;
      if (fits(c)) {
        fixes.push_back(fmt::format("tp={},pp={},dp={} on the same {} GPUs ({})", tp, pp, c.dp,
                                    gpus, gib(memory_per_gpu(w, c).total_bytes)));
        found = true;
      }
    }
  }
  if (!found) {
    // More GPUs: keep dp, cp, the ZeRO stage and recompute; the smallest tp*pp that fits
    // (tp up to 8, one NVLink domain; ties: smaller pp).
    for (int mp = 2; mp <= 8 * 1024 && !found; ++mp) {
      for (int tp = 8; tp >= 1 && !found; tp /= 2) {
        if (tp > mp) continue;
        if (mp % tp != 0) continue;
        Layout c = l;
        c.tp = tp;
        c.pp = mp / tp;
        if (c.tp * c.pp <= l.tp * l.pp) continue;
        if (c.vp > 1 && c.pp == 1) {
          c.vp = 1;
          c.schedule = PipeSchedule::OneFOneB;
        }
        if (layers_fit(w, c) && fits(c)) {
          fixes.push_back(fmt::format("tp={},pp={},dp={} on {} GPUs ({})", c.tp, c.pp, c.dp,
                                      c.gpus(), gib(memory_per_gpu(w, c).total_bytes)));
          found = true;
        }
      }
    }
  }
  if (fixes.empty()) {
    msg +=
        "; nothing tried fits (recompute, ZeRO stage, tp <= 8 and pp up to the layers): use GPUs "
        "with more memory";
  } else {
    msg += "; would fit: ";
    for (std::size_t i = 0; i < fixes.size(); ++i) msg += (i ? ", or " : "") + fixes[i];
  }
  throw InputError(msg);
}

DType moe_dispatch_dtype(const Workload& w) {
  const auto& t = w.model.tf;
  if (t.moe_dispatch_dtype_set) return t.moe_dispatch_dtype;
  return is_gemm_only_dtype(w.training.dtype) ? DType::BF16 : w.training.dtype;
}

}  // namespace tutti
