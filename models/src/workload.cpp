// Reading workload files (strict, through core/config.hpp) and resolving the parallel layout.
#include "tutti/models/workload.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"

namespace tutti {

double moe_default_imbalance(MoeBalancing b) {
  switch (b) {
    case MoeBalancing::AuxLoss:
      return 1.52;  // arXiv:2408.15664 Table 2, 3B, auxiliary loss: MaxVio_global 0.52
    case MoeBalancing::LossFree:
      return 1.04;  // arXiv:2408.15664 Table 2, 3B, Loss-Free Balancing: MaxVio_global 0.04
    case MoeBalancing::Forced:
      return 1.0;  // --moe-router-force-load-balancing: a uniform load by construction
  }
  return 1.0;
}

namespace {

constexpr int kMaxDim = 1 << 24;

/// training.dtype: any DType (the block-scaled ones run the GEMMs only; is_gemm_only_dtype).
DType parse_dtype(const Value& v) {
  static_assert(kNumDTypes == 9, "list every DType here (the error message names the choices)");
  return *parse_enum<DType>(
      v.choice({"bf16", "fp16", "fp8", "fp32", "tf32", "mxfp8", "mxfp6", "mxfp4", "nvfp4"}));
}

/// training.grad_dtype and model.moe_dispatch_dtype: buffers and communication, never block-scaled.
DType parse_unscaled_dtype(const Value& v) {
  return *parse_enum<DType>(v.choice({"bf16", "fp16", "fp8", "fp32", "tf32"}));
}

int req_int(Obj& o, const char* key, int lo = 1, int hi = kMaxDim) {
  return static_cast<int>(o.req(key).integer(lo, hi));
}
int opt_int(Obj& o, const char* key, int dflt, int lo = 0, int hi = kMaxDim) {
  return static_cast<int>(o.integer_or(key, dflt, lo, hi));
}

void parse_transformer(Obj& m, ModelFamily fam, TransformerSpec& t) {
  t.layers = req_int(m, "layers");
  t.hidden = req_int(m, "hidden");
  t.heads = req_int(m, "heads");
  t.kv_heads = opt_int(m, "kv_heads", t.heads, 1);
  t.head_dim = opt_int(m, "head_dim", 0, 1);
  t.ffn_hidden = req_int(m, "ffn_hidden");
  bool decoder = fam == ModelFamily::Transformer;
  bool vit = fam == ModelFamily::ViT;
  if (!vit) t.vocab = m.req("vocab").integer(1, 1LL << 31);
  t.gated_mlp = m.boolean_or("gated_mlp", false);
  t.tied_embeddings = vit ? false : m.boolean_or("tied_embeddings", false);
  t.bias = m.boolean_or("bias", !decoder);
  t.layernorm = m.choice_or("norm", decoder ? "rmsnorm" : "layernorm", {"layernorm", "rmsnorm"}) ==
                "layernorm";
  t.dropout = m.boolean_or("dropout", false);
  t.max_positions = opt_int(m, "max_positions", 0, 0);
  if (decoder) {
    t.experts = opt_int(m, "experts", 0, 0, 1 << 16);
    if (t.experts > 0) {
      t.top_k = static_cast<int>(m.req("top_k").integer(1, t.experts));
      t.moe_ffn_hidden = opt_int(m, "moe_ffn_hidden", t.ffn_hidden, 1);
      t.shared_experts = opt_int(m, "shared_experts", 0, 0, 1 << 10);
      t.dense_layers = opt_int(m, "dense_layers", 0, 0, t.layers - 1);
      t.moe_layer_freq = opt_int(m, "moe_layer_freq", 1, 1, t.layers);
      t.moe_capacity_factor = m.number_or("moe_capacity_factor", 0.0, 0.0, 1e6);
      if (t.moe_capacity_factor > 0 && t.moe_capacity_factor < 1.0)
        m.req("moe_capacity_factor").fail("0 (dropless) or >= 1.0 (capacity per expert / mean)");
      if (m.has("moe_balancing"))
        t.moe_balancing = *parse_enum<MoeBalancing>(
            m.req("moe_balancing").choice({"aux_loss", "loss_free", "forced"}));
      t.moe_imbalance_set = m.has("moe_imbalance");
      const double most = double(t.experts) / t.top_k;  // every copy on the busiest expert
      t.moe_imbalance = m.number_or(
          "moe_imbalance", std::min(moe_default_imbalance(t.moe_balancing), most), 1.0, most);
      if (m.has("moe_dispatch_dtype")) {
        t.moe_dispatch_dtype = parse_unscaled_dtype(m.req("moe_dispatch_dtype"));
        t.moe_dispatch_dtype_set = true;
      }
      t.moe_max_nodes = opt_int(m, "moe_max_nodes_per_token", 0, 1, 1 << 16);
    } else {
      for (const char* k : {"top_k", "moe_ffn_hidden", "shared_experts", "dense_layers",
                            "moe_layer_freq", "moe_capacity_factor", "moe_imbalance",
                            "moe_balancing", "moe_dispatch_dtype", "moe_max_nodes_per_token"})
        if (m.has(k)) m.req(k).fail("no MoE keys when \"experts\" is absent or 0");
    }
  }
  if (fam == ModelFamily::Encoder) {
    t.type_vocab = opt_int(m, "type_vocab", 0, 0);
    t.pooler = m.boolean_or("pooler", false);
  }
  if (vit) {
    t.image_size = req_int(m, "image_size");
    t.patch_size = static_cast<int>(m.req("patch_size").integer(1, t.image_size));
    t.channels = opt_int(m, "channels", 3, 1);
    t.classes = req_int(m, "classes");
    if (t.image_size % t.patch_size != 0)
      m.req("patch_size").fail(fmt::format("a divisor of image_size {}", t.image_size));
  }
  if (t.kv_heads > t.heads || t.heads % t.kv_heads != 0)
    m.req("kv_heads").fail(fmt::format("a divisor of heads ({})", t.heads));
  if (t.head_dim == 0 && t.hidden % t.heads != 0)
    m.req("heads").fail(fmt::format("a divisor of hidden ({}) or an explicit head_dim", t.hidden));
}

void parse_resnet(Obj& m, ResNetSpec& r) {
  auto arr = m.req("blocks").arr();
  if (arr.size() < 1 || arr.size() > 8) arr.value().fail("an array of 1 to 8 block counts");
  r.blocks.clear();
  for (std::size_t i = 0; i < arr.size(); ++i)
    r.blocks.push_back(static_cast<int>(arr.at(i).integer(1, 1000)));
  r.width = opt_int(m, "width", 64, 1);
  r.image_size = opt_int(m, "image_size", 224, 32);
  r.channels = opt_int(m, "channels", 3, 1);
  r.classes = opt_int(m, "classes", 1000, 1);
}

void parse_dlrm(Obj& m, DlrmSpec& d) {
  d.dense_features = req_int(m, "dense_features");
  d.embedding_dim = req_int(m, "embedding_dim");
  auto rows = m.req("table_rows").arr();
  if (rows.size() < 1) rows.value().fail("a non-empty array of row counts");
  for (std::size_t i = 0; i < rows.size(); ++i)
    d.table_rows.push_back(rows.at(i).integer(1, 1LL << 40));
  auto ints = [&](const char* key, std::vector<int>& out) {
    auto a = m.req(key).arr();
    if (a.size() < 1) a.value().fail("a non-empty array of layer sizes");
    for (std::size_t i = 0; i < a.size(); ++i)
      out.push_back(static_cast<int>(a.at(i).integer(1, kMaxDim)));
  };
  ints("bottom_mlp", d.bottom_mlp);
  ints("top_mlp", d.top_mlp);
  if (d.bottom_mlp.back() != d.embedding_dim)
    m.req("bottom_mlp")
        .fail(fmt::format("a last layer equal to embedding_dim ({})", d.embedding_dim));
}

Layout parse_parallel(Obj& p, const TrainingSpec& tr, bool& has_dp) {
  Layout l;
  l.tp = opt_int(p, "tp", 1, 1, 1 << 20);
  l.pp = opt_int(p, "pp", 1, 1, 1 << 20);
  has_dp = p.has("dp");
  l.dp = opt_int(p, "dp", 1, 1, 1 << 24);
  l.cp = opt_int(p, "cp", 1, 1, 1 << 20);
  l.ep = opt_int(p, "ep", 1, 1, 1 << 20);
  l.etp = opt_int(p, "etp", 0, 1, 1 << 20);
  l.vp = opt_int(p, "vp", 1, 1, 1024);
  l.zero = opt_int(p, "zero", 1, 0, 3);
  l.shard_group = opt_int(p, "shard_group", 0, 0, 1 << 24);
  l.reshard = p.has("reshard") ? opt_int(p, "reshard", 1, 0, 1) : -1;
  l.fsdp = p.boolean_or("fsdp", false);
  if (l.fsdp) {
    if (p.has("zero") && l.zero != 3) p.req("zero").fail("3 (or no zero key) when fsdp is true");
    l.zero = 3;
  }
  l.sequence_parallel = p.boolean_or("sequence_parallel", true);
  l.tp_overlap = p.boolean_or("tp_overlap", false);
  l.micro_batch = opt_int(p, "micro_batch", tr.micro_batch, 1, 1 << 20);
  auto sched =
      p.choice_or("schedule", l.vp > 1 ? "interleaved" : "1f1b", {"1f1b", "interleaved", "gpipe"});
  l.schedule = sched == "gpipe"         ? PipeSchedule::GPipe
               : sched == "interleaved" ? PipeSchedule::Interleaved
                                        : PipeSchedule::OneFOneB;
  if (l.vp > 1 && l.schedule != PipeSchedule::Interleaved)
    p.req("schedule").fail("\"interleaved\" when vp > 1");
  l.recompute = tr.recompute;
  p.done();
  return l;
}

Workload parse_doc(const Doc& doc) {
  Workload w;
  w.file = doc.name();
  Obj root = doc.root();
  w.name = root.req("name").string();
  w.source = root.req("source").string();
  root.allow("notes");
  {
    Obj m = root.req("model").obj();
    auto fam = m.req("family").choice({"transformer", "encoder", "vit", "resnet", "dlrm"});
    m.allow("notes");
    auto& f = w.model.family;
    f = fam == "transformer" ? ModelFamily::Transformer
        : fam == "encoder"   ? ModelFamily::Encoder
        : fam == "vit"       ? ModelFamily::ViT
        : fam == "resnet"    ? ModelFamily::ResNet
                             : ModelFamily::DLRM;
    if (f == ModelFamily::ResNet)
      parse_resnet(m, w.model.resnet);
    else if (f == ModelFamily::DLRM)
      parse_dlrm(m, w.model.dlrm);
    else
      parse_transformer(m, f, w.model.tf);
    m.done();
  }
  {
    Obj t = root.req("training").obj();
    auto& tr = w.training;
    const auto fam = w.model.family;
    if (w.model.token_model()) {
      tr.seq_len = static_cast<int>(t.req("seq_len").integer(1, 1 << 24));
    } else if (t.has("seq_len")) {
      t.req("seq_len").fail(
          std::string("no seq_len for family ") + to_string(fam) +
          (fam == ModelFamily::ViT ? " (it is (image_size/patch_size)^2 + 1)" : ""));
    }
    if (fam == ModelFamily::ViT) {
      int g = w.model.tf.image_size / w.model.tf.patch_size;
      tr.seq_len = g * g + 1;
    }
    tr.global_batch = t.req("global_batch").integer(1, 1LL << 30);  // schema: maximum 2^30
    tr.micro_batch = static_cast<int>(t.integer_or("micro_batch", 1, 1, 1 << 20));
    tr.dtype = t.has("dtype") ? parse_dtype(t.req("dtype")) : DType::BF16;
    tr.grad_dtype = t.has("grad_dtype") ? parse_unscaled_dtype(t.req("grad_dtype"))
                                        : (is_gemm_only_dtype(tr.dtype) ? DType::BF16 : tr.dtype);
    tr.optimizer = t.choice_or("optimizer", "adam", {"adam", "sgd"}) == "sgd" ? Optimizer::SGD
                                                                              : Optimizer::Adam;
    tr.recompute = t.enumerator_or("recompute", Recompute::None);
    tr.flash_attention = t.boolean_or("flash_attention", true);
    tr.flash_attention_version = static_cast<int>(t.integer_or("flash_attention_version", 2, 1, 2));
    if (auto v = t.opt("frozen_weights")) {
      if (!w.model.token_model())
        v->fail(std::string("no frozen_weights for family ") + to_string(fam));
      tr.frozen_weights = v->boolean();
    }
    if (t.has("tokens_to_train") && t.has("samples_to_train"))
      t.req("samples_to_train").fail("either tokens_to_train or samples_to_train, not both");
    if (auto v = t.opt("tokens_to_train")) {
      if (!w.model.token_model())
        v->fail(std::string("samples_to_train for family ") + to_string(fam));
      tr.tokens_to_train = v->quantity(Dim::Count, 1);
      tr.samples_to_train = tr.tokens_to_train / tr.seq_len;
    }
    if (auto v = t.opt("samples_to_train")) {
      tr.samples_to_train = v->quantity(Dim::Count, 1);
      if (w.model.token_model()) tr.tokens_to_train = tr.samples_to_train * tr.seq_len;
    }
    t.done();
  }
  if (auto p = root.opt("parallel")) {
    Obj po = p->obj();
    w.layout = parse_parallel(po, w.training, w.layout_has_dp);
  }
  root.done();
  return w;
}

}  // namespace

Workload load_workload(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_doc(Doc::load(path, overrides));
}

Workload parse_workload(const std::string& text, const std::string& name,
                        const std::vector<std::string>& overrides) {
  return parse_doc(Doc::parse(text, name, overrides));
}

Layout resolve_layout(const Workload& w, const std::string& flag, int gpus) {
  Layout l;
  if (w.layout) {
    l = *w.layout;
  } else {
    l.micro_batch = w.training.micro_batch;
    l.recompute = w.training.recompute;
  }
  bool dp_named = w.layout_has_dp;
  if (!flag.empty()) {
    l = parse_layout_flag(flag, l);
    // dp named on the command line wins; a dp from the file yields to --gpus.
    bool flag_dp = flag.rfind("dp=", 0) == 0 || flag.find(",dp=") != std::string::npos;
    dp_named = flag_dp;
  } else if (gpus > 0) {
    dp_named = false;
  }
  if (gpus > 0) {
    int model_par = l.tp * l.pp * l.cp;
    if (dp_named) {
      if (l.gpus() != gpus)
        throw InputError(
            "--gpus", "gpus", std::to_string(gpus),
            fmt::format("tp*pp*dp*cp = {}*{}*{}*{} = {} GPUs (or drop dp to derive it)", l.tp, l.pp,
                        l.dp, l.cp, l.gpus()));
    } else {
      if (gpus % model_par != 0)
        throw InputError(
            "--gpus", "gpus", std::to_string(gpus),
            fmt::format("a multiple of tp*pp*cp = {}*{}*{} = {} (dp = gpus / (tp*pp*cp))", l.tp,
                        l.pp, l.cp, model_par));
      l.dp = gpus / model_par;
    }
  }
  return l;
}

Layout fit_layout(const Workload& w, const std::string& flag, int cluster_gpus, std::string* note) {
  Layout named = resolve_layout(w, flag, 0);
  auto on_flag = [&](const char* key) {
    const std::string k = std::string(key) + "=";
    return flag.rfind(k, 0) == 0 || flag.find("," + k) != std::string::npos;
  };
  if (on_flag("dp"))
    return named;  // as resolve_layout: a dp from the file yields to the cluster size
  const int model_par = named.tp * named.pp * named.cp;
  if (cluster_gpus < model_par)
    throw InputError("--gpus", "gpus", std::to_string(cluster_gpus),
                     fmt::format("at least tp*pp*cp = {}*{}*{} = {} GPUs", named.tp, named.pp,
                                 named.cp, model_par));
  std::string why;
  // The largest dp that fits; when the file's ep fits no dp on this cluster (DeepSeek-V3's ep 64
  // at pp 16 on 576 GPUs: dp <= 36), the largest of ep/2, ep/4, ... that fits, unless the flag
  // named ep: the largest ep that fits, at its largest dp (closest to the file's layout).
  std::vector<int> eps{named.ep};
  if (!on_flag("ep"))
    for (int e = named.ep / 2; e >= 1 && named.ep % e == 0; e /= 2)
      if (w.model.tf.experts <= 0 || w.model.tf.experts % e == 0) eps.push_back(e);
  Layout best;
  bool found = false;
  for (int ep : eps) {
    for (int dp = cluster_gpus / model_par; dp >= 1; --dp) {
      Layout l = named;
      l.dp = dp;
      l.ep = ep;
      try {
        check_layout(w, l, 0);
      } catch (const InputError& e) {
        if (why.empty()) why = e.what();
        continue;
      }
      best = l;
      found = true;
      break;
    }
    if (found) break;  // the largest ep that fits, with its largest dp
  }
  if (!found)
    throw InputError(fmt::format("no data-parallel size fits {} GPUs at tp*pp*cp = {}: {}",
                                 cluster_gpus, model_par, why));
  if (note && best.ep != named.ep)
    *note = fmt::format(
        "ep {} fits no data-parallel size on {} GPUs at tp*pp*cp = {} (ep must divide dp, "
        "dp <= {}); ep {} fitted (--parallel ep=N to choose)",
        named.ep, cluster_gpus, model_par, cluster_gpus / model_par, best.ep);
  return best;
}

}  // namespace tutti
