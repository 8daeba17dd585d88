// Validation against published measurements. See validation.hpp for the contract; every default
// applied to a null field is listed in docs/validation.md ("Defaults") and recorded per case.
#include "tutti/validation/validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

extern const char* const kDefaultCalibrationJson;  // sim/calibration/default.json, embedded

using Json = nlohmann::json;

namespace {

/// Raised inside one case to move it to `skipped` with a reason.
struct Skip {
  std::string reason;
};

// ---- The case reader ---------------------------------------------------------------------------
// Every integer and number has a stated range, the same as in schemas/validation_cases.schema.json
// (tests/validation/validation_test.cpp checks that the schema and this reader agree on the shipped
// files and on broken ones). Ranges are checked before any arithmetic or loop uses the value.

constexpr std::int64_t kMaxDegree = 1 << 20;  // tp, pp, dp, cp, ep, shard_group, GPUs
constexpr std::int64_t kMaxVp = 512;          // interleaved virtual stages per rank
constexpr std::int64_t kMaxLayers = 4096;
constexpr std::int64_t kMaxWidth = 1 << 20;  // hidden, ffn_hidden, expert_ffn_hidden
constexpr std::int64_t kMaxHeads = 4096;
constexpr std::int64_t kMaxSeq = 1 << 22;
constexpr std::int64_t kMaxVocab = 1 << 22;
constexpr std::int64_t kMaxExperts = 4096;
constexpr std::int64_t kMaxGlobalBatch = 1 << 22;  // sequences (or images) per optimizer step
constexpr std::int64_t kMaxGpusPerNode = 1024;
constexpr std::int64_t kMaxMessageBytes = std::int64_t{1} << 50;

struct MoeFacts {
  int experts = 0, topk = 0;
  std::optional<int> expert_ffn_hidden, shared_experts, dense_layers, moe_layer_freq;
  std::optional<bool> dropless, forced_balance;
};

struct CaseFacts {
  std::string file, id, source_key;
  std::size_t index = 0;
  // model
  std::optional<double> params;
  std::optional<int> layers, hidden, ffn_hidden, heads, kv_heads, seq_len;
  std::optional<std::int64_t> vocab;
  std::optional<std::string> mlp;
  std::optional<MoeFacts> moe;
  // training
  std::optional<std::int64_t> global_batch, micro_batch;
  std::optional<std::string> dtype, recompute_mode;
  std::optional<std::string> recompute;  // training.recompute as the source words it
  std::optional<std::string> precision;  // training.precision as the source words it
  // parallel
  std::optional<int> tp, pp, dp, cp, ep, etp, vp, shard_group;
  std::optional<std::string> sharding;
  std::optional<bool> reshard_after_forward, sp, tp_comm_overlap;
  // hardware
  std::string gpu_id;
  int num_gpus = 0;
  std::optional<int> gpus_per_node, nvlink_domain;
  std::optional<double> inter_node_per_gpu_gbps, power_limit_w;
  std::optional<std::string> fabric;
  // software
  std::optional<std::string> framework, date, attention;
  // collective
  bool has_collective = false;
  std::string op;
  std::optional<std::int64_t> message_bytes;
  std::optional<std::string> algo;
  // gemm (one GEMM microbenchmark)
  bool has_gemm = false;
  std::int64_t gemm_m = 0, gemm_n = 0, gemm_k = 0, gemm_groups = 1;
  std::string gemm_layout = "dense";
  // serving (inference cases: `serving` and `load` instead of `training`)
  bool has_serving = false;
  int s_tp = 1;
  std::optional<int> s_pp, s_ep, s_replicas, s_max_batch;
  std::optional<std::int64_t> s_max_tokens;
  std::optional<std::string> s_dtype, s_kv_dtype;
  std::optional<bool> s_chunked;
  std::optional<double> s_mem_util;
  std::string load_mode;
  std::int64_t load_requests = 0, load_in = 0, load_out = 0;
  std::optional<double> load_rate;
  std::optional<std::string> load_arrival;
  // measured
  std::string metric, unit;
  double measured = 0;
};

std::optional<int> opt_int(Obj& o, const char* key, std::int64_t lo, std::int64_t hi) {
  auto v = o.opt(key);
  if (!v) return std::nullopt;
  return static_cast<int>(v->integer(lo, hi));
}
std::optional<std::int64_t> opt_int64(Obj& o, const char* key, std::int64_t lo, std::int64_t hi) {
  auto v = o.opt(key);
  if (!v) return std::nullopt;
  return v->integer(lo, hi);
}
std::optional<double> opt_num(Obj& o, const char* key, double lo, double hi) {
  auto v = o.opt(key);
  if (!v) return std::nullopt;
  return v->number(lo, hi);
}
std::optional<bool> opt_bool(Obj& o, const char* key) {
  auto v = o.opt(key);
  if (!v) return std::nullopt;
  return v->boolean();
}
std::optional<std::string> opt_choice(Obj& o, const char* key,
                                      std::initializer_list<std::string_view> options) {
  auto v = o.opt(key);
  if (!v) return std::nullopt;
  return v->choice(options);
}
// training.precision names a block-scaled FP8 recipe (MXFP8: 32-element blocks, E8M0 scales;
// Transformer Engine's MXFP8BlockScaling on Blackwell) where the canonical dtype says only fp8.
bool is_mxfp8_wording(std::string_view precision) {
  std::string lower(precision);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return lower.find("mxfp8") != std::string::npos;
}

// A field for people: its type is checked, its content never read.
void prose(Obj& o, const char* key) {
  if (auto v = o.opt(key)) (void)v->string();
}
void prose_list(Obj& o, const char* key) {
  if (auto v = o.opt(key)) {
    Arr a = v->arr();
    for (std::size_t i = 0; i < a.size(); ++i) (void)a.at(i).string();
  }
}

CaseFacts read_case(const Value& cv) {
  CaseFacts f;
  Obj c = cv.obj();
  f.id = c.req("id").string();
  if (f.id.empty()) c.req("id").fail("a non-empty case id");
  f.source_key = c.req("source_key").string();
  prose(c, "source");
  prose(c, "notes");
  prose_list(c, "derived_fields");
  if (auto am = c.opt("also_measured")) {
    Arr a = am->arr();
    for (std::size_t i = 0; i < a.size(); ++i) {
      Obj m = a.at(i).obj();
      (void)m.req("metric").string();
      (void)m.req("value").number(-1e18, 1e18);
      prose(m, "unit");
      m.done();
    }
  }

  {
    Obj m = c.req("model").obj();
    prose(m, "name");
    f.params = opt_num(m, "params", 1e3, 1e15);
    f.layers = opt_int(m, "layers", 1, kMaxLayers);
    f.hidden = opt_int(m, "hidden", 1, kMaxWidth);
    f.ffn_hidden = opt_int(m, "ffn_hidden", 1, kMaxWidth);
    f.heads = opt_int(m, "heads", 1, kMaxHeads);
    f.kv_heads = opt_int(m, "kv_heads", 1, f.heads.value_or(kMaxHeads));
    f.seq_len = opt_int(m, "seq_len", 1, kMaxSeq);
    f.vocab = opt_int64(m, "vocab", 1, kMaxVocab);
    f.mlp = opt_choice(m, "mlp", {"gated", "plain"});
    if (auto mv = m.opt("moe")) {
      Obj e = mv->obj();
      MoeFacts x;
      x.experts = static_cast<int>(e.req("experts").integer(1, kMaxExperts));
      x.topk = static_cast<int>(e.req("topk").integer(1, x.experts));
      x.expert_ffn_hidden = opt_int(e, "expert_ffn_hidden", 1, kMaxWidth);
      x.shared_experts = opt_int(e, "shared_experts", 0, 64);
      x.dense_layers = opt_int(e, "dense_layers", 0, f.layers.value_or(kMaxLayers));
      x.moe_layer_freq = opt_int(e, "moe_layer_freq", 1, kMaxLayers);
      x.dropless = opt_bool(e, "dropless");
      x.forced_balance = opt_bool(e, "forced_balance");
      e.done();
      f.moe = x;
    }
    m.done();
  }
  if (auto sv = c.opt("serving")) {
    Obj s = sv->obj();
    f.has_serving = true;
    f.s_tp = static_cast<int>(s.req("tp").integer(1, 1024));
    f.s_pp = opt_int(s, "pp", 1, 1024);
    f.s_ep = opt_int(s, "ep", 1, 1024);
    f.s_replicas = opt_int(s, "replicas", 1, kMaxDegree);
    f.s_max_batch = opt_int(s, "max_batch", 1, kMaxDegree);
    f.s_max_tokens = opt_int64(s, "max_tokens_per_iteration", 1, 1 << 24);
    f.s_dtype = opt_choice(s, "dtype", {"bf16", "fp16", "fp8"});
    f.s_kv_dtype = opt_choice(s, "kv_dtype", {"bf16", "fp16", "fp8"});
    f.s_chunked = opt_bool(s, "chunked_prefill");
    if (auto u = s.opt("gpu_memory_utilization")) {
      f.s_mem_util = u->number(0, 1);
      if (*f.s_mem_util <= 0) u->fail("a share in (0, 1]");
    }
    prose(s, "precision");
    s.done();
    Obj l = c.req("load").obj();
    f.load_mode = l.req("mode").choice({"offline", "rate"});
    f.load_requests = l.req("requests").integer(1, 1000000);
    if (auto r = l.opt("rate_per_s")) {
      f.load_rate = r->number(0, 1e6);
      if (*f.load_rate <= 0) r->fail("a rate > 0 requests per second");
    }
    if (f.load_mode == "rate" && !f.load_rate)
      l.req("rate_per_s").fail("a request rate (mode rate)");
    f.load_arrival = opt_choice(l, "arrival", {"poisson"});
    f.load_in = l.req("input_tokens").integer(1, kMaxSeq);
    f.load_out = l.req("output_tokens").integer(1, kMaxSeq);
    l.done();
  }
  if (auto tv = f.has_serving ? c.opt("training") : std::optional<Value>(c.req("training"))) {
    Obj t = tv->obj();
    f.global_batch = opt_int64(t, "global_batch", 1, kMaxGlobalBatch);
    f.micro_batch = opt_int64(t, "micro_batch", 1, f.global_batch.value_or(kMaxGlobalBatch));
    if (auto pv = t.opt("precision")) f.precision = pv->string();
    if (auto rv = t.opt("recompute")) f.recompute = rv->string();
    f.dtype = opt_choice(t, "dtype", {"bf16", "fp16", "fp8", "fp4", "tf32", "fp32"});
    f.recompute_mode = opt_choice(t, "recompute_mode", {"none", "selective", "full"});
    t.done();
  }
  if (auto pv = c.opt("parallel")) {
    Obj p = pv->obj();
    f.tp = opt_int(p, "tp", 1, kMaxDegree);
    f.pp = opt_int(p, "pp", 1, kMaxDegree);
    f.dp = opt_int(p, "dp", 1, kMaxDegree);
    f.cp = opt_int(p, "cp", 1, kMaxDegree);
    f.ep = opt_int(p, "ep", 1, kMaxDegree);
    f.etp = opt_int(p, "etp", 1, kMaxDegree);
    f.vp = opt_int(p, "vp", 1, kMaxVp);
    f.sharding = opt_choice(p, "sharding", {"none", "optimizer", "optimizer_grads", "full"});
    f.shard_group = opt_int(p, "shard_group", 1, kMaxDegree);
    f.reshard_after_forward = opt_bool(p, "reshard_after_forward");
    f.sp = opt_bool(p, "sp");
    f.tp_comm_overlap = opt_bool(p, "tp_comm_overlap");
    p.done();
  }
  {
    Obj h = c.req("hardware").obj();
    prose(h, "gpu");
    prose(h, "intra_node");
    if (auto g = h.opt("gpu_id")) {
      f.gpu_id = g->string();
      if (f.gpu_id.empty()) g->fail("a GPU id, or null");
    }
    f.num_gpus = opt_int(h, "num_gpus", 1, kMaxDegree).value_or(0);  // 0: not stated
    f.gpus_per_node = opt_int(h, "gpus_per_node", 1, kMaxGpusPerNode);
    f.inter_node_per_gpu_gbps = opt_num(h, "inter_node_per_gpu_gbps", 1e-3, 1e5);
    f.fabric = opt_choice(h, "fabric", {"infiniband", "roce", "efa", "ethernet", "nvlink", "xgmi"});
    f.power_limit_w = opt_num(h, "power_limit_w", 1, 1e5);
    f.nvlink_domain = opt_int(h, "nvlink_domain", 1, kMaxDegree);
    h.done();
  }
  if (auto sv = c.opt("software")) {
    Obj s = sv->obj();
    f.framework =
        opt_choice(s, "framework",
                   {"megatron-lm", "nemo", "megatron-bridge", "megatron-deepspeed", "metaseq",
                    "llm-foundry", "torchtitan", "maxtext", "pytorch", "tensorflow", "nccl-tests",
                    "cublas", "babelstream", "custom", "tensorrt-llm", "vllm", "sglang"});
    if (auto d = s.opt("date")) {
      std::string v = d->string();
      bool ok = v.size() == 7 && v[4] == '-';
      for (std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u})
        ok = ok && i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]));
      if (ok) {
        int month = (v[5] - '0') * 10 + (v[6] - '0');
        ok = month >= 1 && month <= 12;
      }
      if (!ok) d->fail("a date YYYY-MM");
      f.date = v;
    }
    f.attention =
        opt_choice(s, "attention", {"unfused", "flash1", "flash2", "flash3", "cudnn", "te-fused"});
    s.done();
  }
  if (auto cv2 = c.opt("collective")) {
    Obj k = cv2->obj();
    f.has_collective = true;
    f.op = k.req("op").string();
    f.message_bytes = opt_int64(k, "message_bytes", 1, kMaxMessageBytes);
    prose(k, "message_label");
    if (auto a = k.opt("algo")) f.algo = a->string();
    // MoE dispatch/combine facts (op moe_dispatch / moe_combine; not modelled yet).
    (void)opt_int64(k, "tokens_per_rank", 1, std::int64_t{1} << 30);
    (void)opt_int(k, "hidden", 1, kMaxWidth);
    (void)opt_int(k, "topk", 1, kMaxExperts);
    (void)opt_choice(k, "elem_dtype", {"fp8", "bf16", "fp16", "fp32"});
    (void)opt_int(k, "comm_sms", 1, 1024);
    k.done();
  }
  if (auto gv = c.opt("gemm")) {
    Obj g = gv->obj();
    f.has_gemm = true;
    f.gemm_m = g.req("m").integer(1, kMaxWidth * 64);
    f.gemm_n = g.req("n").integer(1, kMaxWidth * 64);
    f.gemm_k = g.req("k").integer(1, kMaxWidth * 64);
    f.gemm_groups = g.integer_or("groups", 1, 1, kMaxExperts);
    f.gemm_layout =
        g.choice_or("layout", "dense", {"dense", "grouped-contiguous", "grouped-masked"});
    g.done();
  }
  {
    Obj m = c.req("measured").obj();
    f.metric = m.req("metric").string();
    f.measured = m.req("value").number(1e-12, 1e18);
    f.unit = m.string_or("unit", "");
    m.done();
  }
  c.done();
  return f;
}

// ---- Shared facts ------------------------------------------------------------------------------

bool catalog_has_gpu(const std::string& gpu_id) {
  for (const auto& g : Catalog::builtin().gpus())
    if (g.id == gpu_id) return true;
  return false;
}

// The case's GPU generation: the catalog GPU's `generation`; a GPU the catalog lacks has none
// (such a case is skipped, and counts in the coverage under "not in catalog").
std::string gpu_generation(const std::string& gpu_id) {
  if (gpu_id.empty()) return "not stated";
  if (!catalog_has_gpu(gpu_id)) return "not in catalog";
  return Catalog::builtin().gpu(gpu_id).generation;
}

double node_scaleout_gbps_per_gpu(const NodeSpec& n) {
  const NicSpec& nic = Catalog::builtin().nic(n.nic);
  return n.nics * nic.bandwidth_Bps * 8.0 / 1e9 / n.gpus;
}

// The catalog server that matches every stated server fact of the case (GPU, GPUs per node,
// NVLink domain, per-GPU scale-out bandwidth); null facts take the usual server's values.
const NodeSpec& pick_node(const CaseFacts& f, std::vector<std::string>& notes) {
  if (!catalog_has_gpu(f.gpu_id))
    throw Skip{"GPU '" + f.gpu_id + "' is not in the hardware catalog"};
  const Catalog& cat = Catalog::builtin();
  // The usual system of the GPU (catalog field gpus.json "usual_node"): the default when a case
  // states none of the server facts (gpus_per_node, nvlink_domain, inter_node_per_gpu_gbps).
  const NodeSpec* usual = nullptr;
  for (const auto& g : cat.gpus())
    if (g.id == f.gpu_id && !g.usual_node.empty()) usual = &cat.usual_node(f.gpu_id);
  auto matches = [&](const NodeSpec& n) {
    if (n.gpu != f.gpu_id) return false;
    if (f.gpus_per_node && n.gpus != *f.gpus_per_node) return false;
    if (f.nvlink_domain && n.nvlink_domain_gpus != *f.nvlink_domain) return false;
    if (f.inter_node_per_gpu_gbps &&
        std::fabs(node_scaleout_gbps_per_gpu(n) - *f.inter_node_per_gpu_gbps) >
            0.01 * *f.inter_node_per_gpu_gbps)
      return false;
    return true;
  };
  const NodeSpec* pick = nullptr;
  if (usual && matches(*usual)) pick = usual;
  for (const auto& n : cat.nodes())
    if (!pick && matches(n)) pick = &n;
  if (!pick) {
    std::string stated = "GPU " + f.gpu_id;
    if (f.gpus_per_node) stated += fmt::format(", {} GPUs per node", *f.gpus_per_node);
    if (f.nvlink_domain) stated += fmt::format(", NVLink domain {}", *f.nvlink_domain);
    if (f.inter_node_per_gpu_gbps)
      stated += fmt::format(", {:g} Gb/s scale-out per GPU", *f.inter_node_per_gpu_gbps);
    throw Skip{"no server in the hardware catalog has the stated facts (" + stated + ")"};
  }
  std::vector<std::string> unstated;
  if (!f.gpus_per_node) unstated.push_back(fmt::format("{} GPUs per node", pick->gpus));
  if (!f.nvlink_domain)
    unstated.push_back(fmt::format("NVLink domain {}", pick->nvlink_domain_gpus));
  if (!f.inter_node_per_gpu_gbps)
    unstated.push_back(
        fmt::format("{:g} Gb/s scale-out per GPU", node_scaleout_gbps_per_gpu(*pick)));
  if (!unstated.empty()) {
    std::string s;
    for (const auto& u : unstated) s += (s.empty() ? "" : ", ") + u;
    notes.push_back("server " + pick->id + ": " + s + " (not stated; " +
                    (pick == usual ? "the usual server of this GPU"
                                   : "the catalog server with the stated facts") +
                    ")");
  }
  return *pick;
}

/// A job spread over NVLink domains in equal segments: rank r is GPU (r / share) * domain +
/// r % share, so each domain holds `share` consecutive ranks (whole nodes) and the rest of it
/// idles. Routes are the cluster's between the mapped GPUs; the view's NVLink domain is the
/// segment, so the collectives see which ranks share a domain.
class SegmentedTopology final : public Topology {
 public:
  SegmentedTopology(std::shared_ptr<const Topology> base, int job_gpus, int share)
      : base_(std::move(base)), domain_(base_->domain_gpus()), share_(share) {
    devices_ = base_->devices();
    links_ = base_->links();
    num_gpus_ = job_gpus;
    gpus_per_node_ = base_->gpus_per_node();
    domain_gpus_ = share;
    gpu_device_.reserve(static_cast<std::size_t>(job_gpus));
    for (int r = 0; r < job_gpus; ++r) gpu_device_.push_back(base_->gpu_device(gpu(r)));
  }
  void route(int src, int dst, std::uint64_t hash, std::vector<std::uint32_t>& out) const override {
    base_->route(gpu(src), gpu(dst), hash, out);
  }
  int paths(int src, int dst) const override { return base_->paths(gpu(src), gpu(dst)); }
  int max_paths() const override { return base_->max_paths(); }
  double link_bundle(std::uint32_t l) const override { return base_->link_bundle(l); }
  void route_path(int src, int dst, std::uint64_t hash, int part,
                  std::vector<std::uint32_t>& out) const override {
    base_->route_path(gpu(src), gpu(dst), hash, part, out);
  }
  std::string describe() const override { return base_->describe(); }

 private:
  int gpu(int r) const { return r / share_ * domain_ + r % share_; }
  std::shared_ptr<const Topology> base_;
  int domain_, share_;
};

// The cluster for a case: its server, as many nodes as the GPUs need, and the stated fabric.
Cluster case_cluster(const CaseFacts& f, std::vector<std::string>& notes) {
  const NodeSpec& node = pick_node(f, notes);
  ClusterParams p;
  p.name = f.id;
  p.node = node.id;
  p.nodes = static_cast<int>((static_cast<std::int64_t>(f.num_gpus) + node.gpus - 1) / node.gpus);
  // A server whose NVLink domain spans several of them (NVL72 compute trays) comes in whole
  // domains: the cluster is the racks the job needs and the rest idles (a 64-GPU job on one
  // 72-GPU rack, 256 GPUs on 4 racks); how the job sits in them is decided below.
  if (node.nvlink_domain_gpus > node.gpus && node.nvlink_domain_gpus % node.gpus == 0) {
    const int per_domain = node.nvlink_domain_gpus / node.gpus;
    const int whole = (p.nodes + per_domain - 1) / per_domain * per_domain;
    if (whole != p.nodes)
      notes.push_back(
          fmt::format("{} GPUs on {} whole {}-GPU NVLink domains ({} nodes of {}): {} GPUs idle",
                      f.num_gpus, whole / per_domain, node.nvlink_domain_gpus, whole, node.id,
                      static_cast<std::int64_t>(whole) * node.gpus - f.num_gpus));
    p.nodes = whole;
  }
  const bool one_domain = f.num_gpus <= node.nvlink_domain_gpus;
  std::string fabric = f.fabric.value_or("");
  if (fabric == "nvlink" && !one_domain)
    throw Skip{
        fmt::format("fabric 'nvlink' (the whole job in one NVLink domain) but {} GPUs exceed "
                    "the NVLink domain of {} GPUs of server {}",
                    f.num_gpus, node.nvlink_domain_gpus, node.id)};
  if (fabric == "efa" || fabric == "ethernet" || fabric == "xgmi")
    throw Skip{"fabric '" + fabric + "' is not modelled (transports: infiniband, roce)"};
  if (p.nodes == 1) {
    p.fabric = "none";
  } else {
    if (fabric.empty()) {
      fabric = "infiniband";
      notes.push_back("fabric infiniband (not stated)");
    }
    // nvlink across nodes (an NVL72-class domain): the scale-out network is still built, and the
    // collectives stay inside the NVLink domain.
    p.transport = fabric == "roce" ? "roce" : "infiniband";
    p.fabric = "rail_optimized";
    // The server's SuperPOD scalable unit (catalog nodes_per_su: 20 DGX A100, 32 DGX H100); a
    // server without one cited takes the DGX H100 SuperPOD's 32, as the fabric generator does.
    p.nodes_per_su = node.nodes_per_su > 0 ? node.nodes_per_su : 32;
    notes.push_back(fmt::format(
        "scale-out topology: rail-optimized fat tree, 1:1, {} nodes per scalable unit, the "
        "transport's default switch (the case format states no topology)",
        p.nodes_per_su));
  }
  Cluster c = make_cluster(p);
  // A job on several NVL72-class domains runs in equal segments, one per domain, rather than
  // filling the first domains and leaving the last part-empty: the Megatron-LM DeepSeek-V3 GB200
  // guide (docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-reproduce-guide.md,
  // 'Cluster Configuration') requires every 32 GPUs (8 nodes) to sit in one NVL domain, via
  // Slurm's `--segment 8`, so that the EP group's all-to-all stays on NVLink. Taken for every
  // case whose GPUs split evenly into whole nodes over the fewest domains that hold them.
  const int dg = c.domain_gpus();
  if (dg > node.gpus && f.num_gpus > dg) {
    const int domains = (f.num_gpus + dg - 1) / dg;
    const int share = f.num_gpus / domains;
    if (share * domains == f.num_gpus && share % node.gpus == 0 && share < dg) {
      c.topology = std::make_shared<SegmentedTopology>(c.topology, f.num_gpus, share);
      notes.push_back(
          fmt::format("placement: {} segments of {} GPUs, one per {}-GPU NVLink domain "
                      "(Slurm --segment, as the Megatron-LM GB200 guide asks)",
                      domains, share, dg));
    }
  }
  return c;
}

struct Context {
  const ValidationOptions& options;
  const CalibrationProfile& profile;
  std::string profile_path;  ///< "" = the default profile.
};

// ---- Microbenchmark cases ----------------------------------------------------------------------

double predict_gemm(const CaseFacts& f, CaseResult& out, const Context& ctx) {
  if (!f.has_gemm) throw Skip{"gemm_tflops case without a gemm section (the GEMM shape m, n, k)"};
  if (f.gemm_layout != "dense" || f.gemm_groups != 1)
    throw Skip{"grouped GEMM ('" + f.gemm_layout + "') is not modelled as one kernel"};
  if (!catalog_has_gpu(f.gpu_id))
    throw Skip{"GPU '" + f.gpu_id + "' is not in the hardware catalog"};
  const GpuSpec& gpu = Catalog::builtin().gpu(f.gpu_id);
  std::string dt = f.dtype.value_or("");
  if (dt.empty()) {
    dt = "bf16";
    out.assumptions.push_back("dtype bf16 (not stated)");
  }
  if (dt == "fp4") throw Skip{"fp4 GEMMs are not modelled"};
  Op op;
  op.kind = OpKind::Gemm;
  op.dtype = parse_enum<DType>(dt).value_or(DType::BF16);
  op.m = f.gemm_m;
  op.n = f.gemm_n;
  op.k = f.gemm_k;
  op.flops = 2.0 * static_cast<double>(f.gemm_m) * static_cast<double>(f.gemm_n) *
             static_cast<double>(f.gemm_k);
  double t = op_time_s(op, gpu, ctx.profile);
  return op.flops / t / 1e12;
}

double predict_hbm(const CaseFacts& f, CaseResult& out, const Context& ctx) {
  if (!catalog_has_gpu(f.gpu_id))
    throw Skip{"GPU '" + f.gpu_id + "' is not in the hardware catalog"};
  const GpuSpec& gpu = Catalog::builtin().gpu(f.gpu_id);
  // STREAM triad a = b + s*c over three large arrays: 2 reads + 1 write per element.
  const double bytes = 3.0 * 2.0 * 1073741824.0;
  out.assumptions.push_back("triad over three 2 GiB arrays (array size not a case field)");
  Op op;
  op.kind = OpKind::MemBound;
  op.bytes = bytes;
  double t = op_time_s(op, gpu, ctx.profile);
  return bytes / t / 1e12;
}

double predict_busbw(const CaseFacts& f, CaseResult& out, const Context& ctx) {
  if (!f.has_collective) throw Skip{"busbw case without a collective section"};
  Coll kind;
  if (f.op == "all_reduce")
    kind = Coll::AllReduce;
  else if (f.op == "all_gather")
    kind = Coll::AllGather;
  else if (f.op == "reduce_scatter")
    kind = Coll::ReduceScatter;
  else if (f.op == "alltoall" || f.op == "all_to_all")
    kind = Coll::AllToAll;
  else if (f.op == "broadcast")
    kind = Coll::Broadcast;
  else
    throw Skip{"collective '" + f.op + "' is not modelled"};
  if (!f.message_bytes) throw Skip{"collective message size not stated"};
  if (f.num_gpus < 2) throw Skip{"a collective over one GPU has no bus bandwidth"};
  const double bytes = static_cast<double>(*f.message_bytes);
  Cluster cluster = case_cluster(f, out.assumptions);
  SimCluster sc = sim_cluster(cluster);
  std::string algo;
  for (char ch : f.algo.value_or(""))
    algo += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (!algo.empty() && algo != "ring")
    throw Skip{"collective algorithm '" + *f.algo +
               "' is not modelled (ring, or null: NCCL's choice)"};
  if (algo.empty())
    out.assumptions.push_back("algorithm: tutti's model of NCCL's choice (not stated)");
  const bool nvls = sc.nvls && algo != "ring";
  CollectiveContext cctx = make_collective_context(*sc.topology, ctx.profile, nvls, sc.sharp);
  std::vector<int> group(f.num_gpus);
  for (int i = 0; i < f.num_gpus; ++i) group[i] = i;
  CollectivePlan plan = algo == "ring" ? plan_collective_with(kind, bytes, group, cctx,
                                                              CollAlgo::Ring, NcclProto::Simple)
                                       : plan_collective(kind, bytes, group, cctx);
  out.layout = std::string("algo=") + to_string(plan.algo);
  double t = simulate_collectives({plan}, *sc.topology, ctx.profile);
  return bytes / t * bus_factor(kind, f.num_gpus) / 1e9;
}

// ---- Training cases ----------------------------------------------------------------------------

struct TrainingSetup {
  Workload workload;
  Layout layout;
  Recompute stated_recompute = Recompute::None;
  unsigned stated_modules = 0;  // Layout::recompute_modules read from training.recompute
};

/// The selective-recompute module list a case's training.recompute words state, read only when
/// they are exactly "selective: NAME NAME ..." (an optional trailing parenthetical aside) and
/// every NAME is a Megatron-Core --recompute-modules name that tutti models (core_attn, moe_act,
/// layernorm, mlp, moe, shared_experts). Anything else ("norm, act", "mlp up_proj", prose) is
/// not read: nullopt.
std::optional<unsigned> stated_recompute_modules(const std::string& words) {
  const std::string prefix = "selective:";
  if (words.rfind(prefix, 0) != 0) return std::nullopt;
  std::string rest = words.substr(prefix.size());
  if (auto open = rest.find('('); open != std::string::npos) {
    if (rest.back() != ')') return std::nullopt;
    rest.resize(open);
  }
  unsigned bits = 0;
  std::size_t i = 0;
  while (i < rest.size()) {
    if (rest[i] == ' ' || rest[i] == ',') {
      ++i;
      continue;
    }
    std::size_t j = rest.find_first_of(" ,", i);
    if (j == std::string::npos) j = rest.size();
    auto m = parse_enum<RecomputeModule>(std::string_view(rest).substr(i, j - i));
    if (!m || *m == RecomputeModule::MlaUpProj) return std::nullopt;
    bits |= recompute_bit(*m);
    i = j;
  }
  if (bits == 0) return std::nullopt;
  return bits;
}

// The attention kernel when `software.attention` is null, from `software.date`: fused attention
// arrived with FlashAttention (arXiv 2205.14135, May 2022) and FlashAttention-2 (arXiv 2307.08691,
// July 2023); a run dated before June 2022 used unfused attention, one before August 2023
// FlashAttention-1, a later or undated one the current kernels.
std::string attention_default(const CaseFacts& f, std::vector<std::string>& notes) {
  if (!f.date) {
    notes.push_back("attention flash2 (neither software.attention nor software.date stated)");
    return "flash2";
  }
  std::string a = *f.date < "2022-06" ? "unfused" : *f.date < "2023-08" ? "flash1" : "flash2";
  notes.push_back("attention " + a + " (not stated; the kernel current at software.date " +
                  *f.date + ")");
  return a;
}

// The workload `model` object of a case's model facts; every default applied is noted in `out`.
// `training`: also the training-only facts (dropout, all weights trained).
Json case_model_json(const CaseFacts& f, CaseResult& out, bool training) {
  auto note = [&](std::string s) { out.assumptions.push_back(std::move(s)); };
  if (!f.layers || !f.hidden || !f.heads)
    throw Skip{"model shape (layers, hidden, heads) not stated"};
  const int h = *f.hidden;
  Json m = Json::object();
  m["family"] = "transformer";
  m["layers"] = *f.layers;
  m["hidden"] = h;
  m["heads"] = *f.heads;
  if (h % *f.heads != 0)
    throw Skip{fmt::format("hidden {} is not a multiple of heads {}", h, *f.heads)};
  if (f.kv_heads) {
    m["kv_heads"] = *f.kv_heads;
  } else {
    m["kv_heads"] = *f.heads;
    note("kv_heads = heads (not stated)");
  }
  std::string mlp = f.mlp.value_or("");
  if (mlp.empty()) {
    mlp = "plain";
    note("mlp plain (not stated)");
  }
  const bool gated = mlp == "gated";
  m["gated_mlp"] = gated;
  if (f.ffn_hidden) {
    m["ffn_hidden"] = *f.ffn_hidden;
  } else if (gated) {
    // Llama's rule: 2/3 of 4h, rounded up to a multiple of 256 (Touvron et al. 2023, the
    // reference model.py `multiple_of=256`).
    int ffn = static_cast<int>((8LL * h / 3 + 255) / 256 * 256);
    m["ffn_hidden"] = ffn;
    note(fmt::format("ffn_hidden {} = 8*hidden/3 rounded up to 256 (not stated; gated MLP)", ffn));
  } else {
    m["ffn_hidden"] = 4 * h;
    note("ffn_hidden = 4*hidden (not stated; plain MLP)");
  }
  if (f.vocab) {
    m["vocab"] = *f.vocab;
  } else {
    m["vocab"] = 51200;
    note("vocab 51200 (not stated; Megatron's padded GPT-2 vocabulary)");
  }
  // Biases: GPT-2/3 and BERT blocks (GELU MLP) carry them; Llama-style gated blocks do not.
  m["bias"] = !gated;
  note(gated ? "no linear biases (gated MLP: Llama-style block)"
             : "linear biases (plain MLP: GPT/BERT-style block)");
  // Dropout: Megatron-LM's argument defaults are --hidden-dropout 0.1 --attention-dropout 0.1;
  // the other frameworks' LLM recipes train without it.
  const std::string fw = f.framework.value_or("");
  const bool dropout = training && (fw == "megatron-lm" || fw == "megatron-deepspeed");
  m["dropout"] = dropout;
  if (training) {
    note(
        dropout
            ? "dropout 0.1 (Megatron-LM's default; the case format has no dropout field)"
            : "no dropout (the case format has no dropout field; only Megatron-LM defaults to it)");
    note(
        "decoder-only transformer, all weights trained (the case format states no architecture "
        "family and no fine-tuning)");
  }
  if (f.moe) {
    const MoeFacts& e = *f.moe;
    if (e.moe_layer_freq && *e.moe_layer_freq != 1)
      throw Skip{fmt::format("moe_layer_freq {} (an MoE layer every {} layers) is not modelled",
                             *e.moe_layer_freq, *e.moe_layer_freq)};
    m["experts"] = e.experts;
    m["top_k"] = e.topk;
    if (e.expert_ffn_hidden) {
      m["moe_ffn_hidden"] = *e.expert_ffn_hidden;
    } else {
      m["moe_ffn_hidden"] = m["ffn_hidden"];
      note("expert_ffn_hidden = ffn_hidden (not stated)");
    }
    m["shared_experts"] = e.shared_experts.value_or(0);
    if (!e.shared_experts) note("no shared experts (not stated)");
    m["dense_layers"] = e.dense_layers.value_or(0);
    if (!e.dense_layers) note("no leading dense layers (not stated)");
    if (e.dense_layers && *e.dense_layers >= *f.layers)
      throw Skip{
          fmt::format("dense_layers {} leaves no MoE layer of {}", *e.dense_layers, *f.layers)};
    // Routing load (models/README.md, moe_balancing): a forced-balance router spreads tokens
    // evenly; a learned router (false or not stated) gets the auxiliary-loss default imbalance
    // of arXiv:2408.15664 Table 2. Capacity-limited routing (dropless false) caps the busiest
    // expert at the capacity factor, which the case format does not state: 1.0.
    // Serving keeps its balanced default (sim/serve): the figure is a training router's.
    const bool forced = e.forced_balance.value_or(false);
    if (training) m["moe_balancing"] = forced ? "forced" : "aux_loss";
    if (training && !forced)
      note(
          fmt::format("learned routing{}: busiest expert {:.2f} x the mean (auxiliary-loss "
                      "balancing, arXiv:2408.15664 Table 2)",
                      e.forced_balance ? "" : " (forced_balance not stated)",
                      moe_default_imbalance(MoeBalancing::AuxLoss)));
    const bool capped = e.dropless.has_value() && !*e.dropless;
    if (training && capped) {
      m["moe_capacity_factor"] = 1.0;
      note(
          "capacity-limited routing (dropless false): capacity factor 1.0 (not stated in a field)");
    } else if (training) {
      note(e.dropless ? "dropless routing" : "dropless routing (not stated; Megatron's default)");
    }
  }
  return m;
}

TrainingSetup build_training(const CaseFacts& f, CaseResult& out) {
  auto note = [&](std::string s) { out.assumptions.push_back(std::move(s)); };
  if (!f.layers || !f.hidden || !f.heads)
    throw Skip{"model shape (layers, hidden, heads) not stated"};
  if (!f.seq_len) throw Skip{"sequence length not stated"};
  if (!f.global_batch) throw Skip{"global batch not stated"};
  Json m = case_model_json(f, out, true);

  Json t = Json::object();
  t["global_batch"] = *f.global_batch;
  t["seq_len"] = *f.seq_len;
  std::string dt = f.dtype.value_or("");
  if (dt.empty()) {
    dt = "bf16";
    note("dtype bf16 (not stated)");
  }
  if (dt == "fp4") throw Skip{"fp4 training is not modelled"};
  if (dt == "fp8" && f.precision && is_mxfp8_wording(*f.precision)) {
    dt = "mxfp8";
    note("dtype mxfp8 (training.precision '" + *f.precision +
         "': block-scaled FP8, 32-element blocks with E8M0 scales)");
  }
  t["dtype"] = dt;
  t["optimizer"] = "adam";
  note("optimizer Adam (the case format has no optimizer field)");
  std::string att = f.attention ? *f.attention : attention_default(f, out.assumptions);
  if (att == "flash3" || att == "cudnn" || att == "te-fused")
    throw Skip{"attention kernel '" + att + "' is not modelled (unfused, flash1, flash2)"};
  t["flash_attention"] = att != "unfused";
  if (att == "flash1") t["flash_attention_version"] = 1;
  const std::string rc = f.recompute_mode.value_or("");
  t["recompute"] = rc.empty() ? "none" : rc;

  Json doc = {{"name", f.id}, {"source", "validation case " + f.id}, {"model", m}, {"training", t}};

  Layout l;
  auto deg = [&](const std::optional<int>& v, const char* k, int dflt, bool required) {
    if (v) return *v;
    if (required) throw Skip{std::string("parallel degree '") + k + "' not stated"};
    if (dflt == 1) note(std::string(k) + " 1 (not stated)");
    return dflt;
  };
  l.tp = deg(f.tp, "tp", 1, true);
  l.pp = deg(f.pp, "pp", 1, true);
  l.cp = deg(f.cp, "cp", 1, false);
  l.ep = f.moe ? deg(f.ep, "ep", 1, false) : f.ep.value_or(1);
  // Expert tensor parallelism (Megatron-Core --expert-tensor-parallel-size): tp (the default,
  // experts split like the dense MLP, EP groups carved out of dp) or 1 (parallel folding: the
  // expert layers re-fold each stage's tp*cp*dp ranks as ep x edp, EP may span tp x dp).
  if (f.moe && l.tp > 1) {
    if (!f.etp) {
      note(fmt::format(
          "etp = tp = {} (not stated; Megatron-Core's default --expert-tensor-parallel-size)",
          l.tp));
    } else if (*f.etp == 1) {
      l.etp = 1;
    } else if (*f.etp != l.tp) {
      throw Skip{fmt::format("etp {} (neither 1 nor tp = {}) is not modelled", *f.etp, l.tp)};
    }
  }
  l.vp = f.vp.value_or(1);
  if (!f.vp && l.pp > 1) note("vp 1: no interleaving (not stated)");
  // Products in floating point: each degree is at most 2^20, so integer products could overflow.
  const double model_par = static_cast<double>(l.tp) * l.pp * l.cp;
  if (f.dp) {
    l.dp = *f.dp;
  } else {
    double dp = f.num_gpus / model_par;
    if (dp < 1 || dp != std::floor(dp))
      throw Skip{fmt::format("tp*pp*cp = {:g} does not divide the {} GPUs", model_par, f.num_gpus)};
    l.dp = static_cast<int>(dp);
    note(fmt::format("dp {} = GPUs / (tp*pp*cp) (not stated)", l.dp));
  }
  if (model_par * l.dp != f.num_gpus)
    throw Skip{
        fmt::format("tp*pp*cp*dp = {:g} does not equal the {} GPUs", model_par * l.dp, f.num_gpus)};
  if (static_cast<double>(l.vp) * l.pp > *f.layers)
    throw Skip{fmt::format("pp*vp = {} stages exceed the {} layers",
                           static_cast<long long>(l.vp) * l.pp, *f.layers)};
  if (l.vp > 1) l.schedule = PipeSchedule::Interleaved;
  const Recompute stated = parse_enum<Recompute>(rc).value_or(Recompute::None);
  l.recompute = stated;
  if (stated == Recompute::Selective && f.recompute) {
    if (auto bits = stated_recompute_modules(*f.recompute)) {
      l.recompute_modules = *bits == recompute_bit(RecomputeModule::CoreAttn) ? 0u : *bits;
      note("recompute modules " + recompute_modules_string(*bits) + " (training.recompute '" +
           *f.recompute + "': Megatron-Core --recompute-modules names)");
    } else {
      note(
          "recompute selective of core_attn, Megatron's default module list (training.recompute "
          "'" +
          *f.recompute + "' names no exact Megatron module list)");
    }
  }
  if (f.sp) {
    l.sequence_parallel = *f.sp && l.tp > 1;
  } else {
    l.sequence_parallel = l.tp > 1;
    if (l.tp > 1)
      note("sequence parallelism on (not stated; Megatron-Core's recipes enable it with tp > 1)");
  }
  if (f.tp_comm_overlap && *f.tp_comm_overlap && l.tp > 1) {
    if (!l.sequence_parallel)
      throw Skip{"tp_comm_overlap without sequence parallelism is not modelled"};
    l.tp_overlap = true;
  } else if (!f.tp_comm_overlap && l.tp > 1) {
    note("no TP communication overlap (not stated)");
  }
  if (f.micro_batch) {
    if (*f.micro_batch > kMaxDegree) throw Skip{"micro_batch above 2^20 sequences"};
    l.micro_batch = static_cast<int>(*f.micro_batch);
  } else {
    l.micro_batch = 1;
    note("micro_batch 1 (not stated)");
  }
  // Sharding: the stated stage maps onto the layout's ZeRO stage.
  std::string sh = f.sharding.value_or("");
  if (sh.empty()) {
    sh = "optimizer";
    note(
        "sharding optimizer: ZeRO-1 / Megatron distributed optimizer (not stated; NeMo's default)");
  }
  // Hybrid sharding: shard inside groups of shard_group GPUs, replicate across them.
  if (f.shard_group) l.shard_group = *f.shard_group;
  // FSDP reshard_after_forward: false keeps the gathered parameters from forward to backward.
  if (f.reshard_after_forward) {
    l.reshard = *f.reshard_after_forward ? 1 : 0;
  } else if (sh == "full") {
    note(
        "reshard_after_forward: true without pipelining, false with it (not stated; torchtitan's "
        "default reshard_after_forward = not pp_enabled)");
  }
  l.zero = sh == "none" ? 0 : sh == "optimizer" ? 1 : sh == "optimizer_grads" ? 2 : 3;
  if (f.num_gpus == 1) l.zero = 0;

  TrainingSetup s;
  s.workload = parse_workload(doc.dump(), f.id);
  s.layout = l;
  s.stated_recompute = stated;
  s.stated_modules = l.recompute_modules;
  return s;
}

/// The built model's parameter count disagrees with the stated one by more than 5%.
struct Inconsistent {
  double stated, built;
};

double predict_training(const CaseFacts& f, CaseResult& out, const Context& ctx) {
  TrainingSetup s = build_training(f, out);
  if (f.params) {
    const double built = params(s.workload);
    if (std::fabs(built - *f.params) > kParamsTolerance * *f.params)
      throw Inconsistent{*f.params, built};
  } else {
    out.assumptions.push_back("model.params not stated: no parameter-count check");
  }
  Cluster cluster = case_cluster(f, out.assumptions);
  // An unstated recompute mode: the run happened, so it fit; take the lightest mode that fits.
  // When even full recompute does not fit tutti's estimate, the estimate is wrong about this run
  // and says nothing about its recompute: keep none, the frameworks' default.
  if (!f.recompute_mode) {
    const Recompute modes[] = {Recompute::None, Recompute::Selective, Recompute::Full};
    bool fits = false;
    for (Recompute r : modes) {
      s.layout.recompute = r;
      if (memory_per_gpu(s.workload, s.layout).total_bytes <= cluster.gpu.hbm_bytes) {
        fits = true;
        break;
      }
    }
    if (!fits) s.layout.recompute = Recompute::None;
    out.assumptions.push_back(std::string("recompute ") + to_string(s.layout.recompute) +
                              (fits ? " (not stated; the lightest that fits)"
                                    : " (not stated; no mode fits tutti's memory estimate, so the "
                                      "frameworks' default)"));
  }
  try {
    check_layout(s.workload, s.layout, 0);
  } catch (const InputError& e) {
    throw Skip{std::string("layout cannot run: ") + e.what()};
  }
  double need = memory_per_gpu(s.workload, s.layout).total_bytes;
  if (need > cluster.gpu.hbm_bytes)
    out.assumptions.push_back(fmt::format(
        "tutti's memory estimate ({:.1f} GiB) exceeds the {:.0f} GiB of HBM; the run is known to "
        "have fit, so it is predicted anyway",
        need / 1073741824.0, cluster.gpu.hbm_bytes / 1073741824.0));
  SimOptions so;
  so.check_memory = false;
  so.engine = ctx.options.engine;
  so.calibration = ctx.profile_path;
  SimResult r = simulate(s.workload, cluster, s.layout, so);
  out.layout = to_string(s.layout);
  const double t = r.iteration_time_s;
  const double gb = static_cast<double>(s.workload.training.global_batch);
  if (f.metric == "step_time") return t;
  if (f.metric == "tokens_per_sec_per_gpu")
    return gb * s.workload.training.seq_len / t / f.num_gpus;
  if (f.metric == "tflops_per_gpu")
    return megatron_flops_per_iteration(s.workload, s.stated_recompute, s.stated_modules) / t /
           f.num_gpus / 1e12;
  if (f.metric == "mfu")
    return model_flops_per_iteration(s.workload) / t / f.num_gpus /
           peak_flops(cluster.gpu, s.workload.training.dtype, ctx.profile) * 100.0;
  if (f.metric == "sequences_per_sec") return gb / t;
  throw Skip{"metric '" + f.metric + "' is not predicted for a transformer"};
}

// ---- Serving cases -----------------------------------------------------------------------------

const std::set<std::string> kServingMetrics = {
    "output_tokens_per_sec", "total_tokens_per_sec", "requests_per_sec", "ttft_mean_ms",
    "ttft_median_ms",        "ttft_p99_ms",          "tpot_mean_ms",     "tpot_median_ms",
    "tpot_p99_ms",           "e2e_mean_s",           "e2e_median_s"};

// The model, the cluster and a `tutti serve` configuration of a serving case; the serve simulator
// (ValidationOptions::serving) predicts the metric. Defaults of null fields: docs/validation.md.
double predict_serving(const CaseFacts& f, CaseResult& out, const Context& ctx) {
  if (!ctx.options.serving)
    throw Skip{"serving cases need the serve simulator (tutti validate provides it)"};
  if (!kServingMetrics.count(f.metric))
    throw Skip{"metric '" + f.metric + "' is not predicted for a serving case"};
  if (!catalog_has_gpu(f.gpu_id))
    throw Skip{"GPU '" + f.gpu_id + "' is not in the hardware catalog"};
  auto note = [&](std::string s) { out.assumptions.push_back(std::move(s)); };
  Json m = case_model_json(f, out, false);
  const std::int64_t context = f.load_in + f.load_out;
  const std::string dt = f.s_dtype.value_or("bf16");
  if (!f.s_dtype) note("serving.dtype bf16 (not stated)");
  Json t = {{"global_batch", 1},
            {"seq_len", std::max<std::int64_t>(f.seq_len.value_or(0), context)},
            {"dtype", dt == "fp8" ? "bf16" : dt}};
  Json doc = {{"name", f.id}, {"source", "validation case " + f.id}, {"model", m}, {"training", t}};
  Workload w = parse_workload(doc.dump(), f.id);
  if (f.params) {
    const double built = params(w);
    if (std::fabs(built - *f.params) > kParamsTolerance * *f.params)
      throw Inconsistent{*f.params, built};
  } else {
    note("model.params not stated: no parameter-count check");
  }
  Cluster cluster = case_cluster(f, out.assumptions);
  const int tp = f.s_tp, pp = f.s_pp.value_or(1);
  if (!f.s_pp) note("serving.pp 1 (not stated)");
  int replicas = 0;
  if (f.s_replicas) {
    replicas = *f.s_replicas;
  } else {
    if (f.num_gpus % (tp * pp) != 0)
      throw Skip{fmt::format("tp*pp = {} does not divide the {} GPUs", tp * pp, f.num_gpus)};
    replicas = f.num_gpus / (tp * pp);
    note(fmt::format("serving.replicas {} = GPUs / (tp*pp) (not stated)", replicas));
  }
  if (static_cast<std::int64_t>(replicas) * tp * pp != f.num_gpus)
    throw Skip{fmt::format("replicas*tp*pp = {} does not equal the {} GPUs",
                           static_cast<std::int64_t>(replicas) * tp * pp, f.num_gpus)};
  Json s = {
      {"tp", tp}, {"pp", pp}, {"ep", f.s_ep.value_or(1)}, {"replicas", replicas}, {"dtype", dt}};
  if (f.moe && !f.s_ep) note("serving.ep 1: experts split over the TP ranks (not stated)");
  s["kv_dtype"] = f.s_kv_dtype.value_or(dt);
  if (!f.s_kv_dtype) note("serving.kv_dtype = serving.dtype (not stated)");
  // TensorRT-LLM's trtllm-bench runtime limits as its performance overview prints them (Max
  // Runtime Batch Size 4096, Max Runtime Tokens 8192); other frameworks take tutti serve's
  // defaults (vLLM's max_num_seqs 256 and max_num_batched_tokens 8192).
  const bool trtllm = f.framework.value_or("") == "tensorrt-llm";
  if (f.s_max_batch) {
    s["max_batch"] = *f.s_max_batch;
  } else if (trtllm) {
    s["max_batch"] = 4096;
    note("serving.max_batch 4096 (not stated; trtllm-bench's runtime maximum)");
  }
  if (f.s_max_tokens) s["max_tokens_per_iteration"] = *f.s_max_tokens;
  if (f.s_chunked) s["chunked_prefill"] = *f.s_chunked;
  if (f.s_mem_util) s["gpu_memory_utilization"] = *f.s_mem_util;
  Json traffic = {{"requests", f.load_requests},
                  {"prompt_tokens", {{"dist", "fixed"}, {"value", f.load_in}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", f.load_out}}}};
  if (f.load_mode == "offline") {
    traffic["arrival"] = "burst";
  } else {
    traffic["arrival"] = "poisson";
    traffic["rate_per_s"] = *f.load_rate;
    if (!f.load_arrival) note("load.arrival poisson (not stated)");
  }
  Json cfg = {{"name", f.id}, {"traffic", traffic}, {"serving", s}};
  out.layout = fmt::format("tp{} pp{} x{} replicas", tp, pp, replicas);
  ServingCase sc;
  sc.id = f.id;
  sc.metric = f.metric;
  sc.workload = &w;
  sc.cluster = &cluster;
  sc.serve_config = cfg.dump();
  sc.profile = &ctx.profile;
  return ctx.options.serving(sc, out.assumptions);
}

std::string case_kind(const CaseFacts& f) {
  if (f.has_serving) return "serving";
  if (f.metric == "busbw" || f.metric == "hbm_bandwidth" || f.metric == "gemm_tflops")
    return "microbenchmark";
  return f.moe ? "moe" : "dense";
}

const std::set<std::string> kTrainingMetrics = {"step_time",         "tokens_per_sec_per_gpu",
                                                "tflops_per_gpu",    "mfu",
                                                "sequences_per_sec", "images_per_sec"};

void collect_fitted(const Json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "fitted_to" && it->is_array()) {
        for (const auto& e : *it)
          if (e.is_string()) out.push_back(e.get<std::string>());
      } else {
        collect_fitted(*it, out);
      }
    }
  } else if (j.is_array()) {
    for (const auto& e : j) collect_fitted(e, out);
  }
}

}  // namespace

std::vector<std::string> fitted_entries(const Json& profile) {
  std::vector<std::string> out;
  collect_fitted(profile, out);
  return out;
}

const char* job_size_group(long long gpus) {
  if (gpus <= 0) return "not stated";
  if (gpus <= 8) return "1-8";
  if (gpus <= 256) return "9-256";
  if (gpus <= 2048) return "257-2048";
  return ">2048";
}

ErrorSummary summarize_errors(const std::vector<CaseResult>& cases, const std::string& group) {
  ErrorSummary s;
  s.group = group;
  std::vector<double> abs;
  for (const auto& c : cases) abs.push_back(std::fabs(c.error_pct));
  s.n = static_cast<int>(abs.size());
  if (abs.empty()) return s;
  double sum = 0;
  for (double a : abs) sum += a;
  s.mape_pct = sum / abs.size();
  std::sort(abs.begin(), abs.end());
  s.median_abs_error_pct =
      abs.size() % 2 ? abs[abs.size() / 2] : 0.5 * (abs[abs.size() / 2 - 1] + abs[abs.size() / 2]);
  s.max_abs_error_pct = abs.back();
  return s;
}

ValidationReport validate_cases(const std::string& path, const ValidationOptions& options) {
  return validate_cases(std::vector<std::string>{path}, options);
}

namespace {

/// Reads every case of one parsed case file into `all` (ids unique across files: `seen`).
void read_cases(const Doc& doc, std::vector<CaseFacts>& all,
                std::map<std::string, std::string>& seen) {
  const std::string& path = doc.name();
  auto keep = std::make_shared<Json>(doc.json());
  if (!keep->is_array())
    throw InputError(path, "(top level)", describe_json(*keep), "an array of cases");
  for (std::size_t i = 0; i < keep->size(); ++i) {
    const Json& cj = (*keep)[i];
    std::string label = std::to_string(i);
    if (cj.is_object() && cj.contains("id") && cj["id"].is_string())
      label += " (id \"" + cj["id"].get<std::string>() + "\")";
    CaseFacts f;
    try {
      if (!cj.is_object())
        throw InputError(path, std::to_string(i), describe_json(cj), "a case object");
      f = read_case(Value(keep, &cj, path, ""));
    } catch (const InputError& e) {
      if (e.key_path().empty() && e.expected().empty()) throw;
      throw InputError(path + ": case " + label, e.key_path(), e.found(), e.expected());
    }
    f.file = path;
    f.index = i;
    auto [it, fresh] = seen.emplace(f.id, path);
    if (!fresh)
      throw InputError(path + ": case " + label, "id",
                       "\"" + f.id + "\", already the id of a case in " + it->second,
                       "a case id unique across the case files");
    all.push_back(std::move(f));
  }
}

ValidationReport predict_cases(const std::vector<std::string>& paths,
                               const std::vector<CaseFacts>& all,
                               const ValidationOptions& options) {
  // The profile in use and its fitted_to lists (read from the document: the profile parser may
  // not keep them).
  // The embedded default profile is parsed once per process (it is fixed at build time; parsing
  // its 19 kB on every call was most of the cost of reading a small case file).
  static const std::vector<std::string> kDefaultFitted =
      fitted_entries(Doc::parse(kDefaultCalibrationJson, "sim/calibration/default.json").json());
  const std::vector<std::string> fitted_list =
      options.calibration.empty() ? kDefaultFitted
                                  : fitted_entries(Doc::load(options.calibration).json());
  std::set<std::string> fitted_ids, fitted_sources;
  for (const auto& e : fitted_list) {
    if (e.rfind("case:", 0) == 0) fitted_ids.insert(e.substr(5));
    if (e.rfind("source:", 0) == 0) fitted_sources.insert(e.substr(7));
  }
  CalibrationProfile loaded;
  if (!options.calibration.empty()) loaded = load_calibration(options.calibration);
  const CalibrationProfile& profile = options.calibration.empty() ? default_calibration() : loaded;
  Context ctx{options, profile, options.calibration};

  ValidationReport rep;
  rep.files = paths;
  for (const CaseFacts& f : all) {
    if (!options.only.empty() && f.id.find(options.only) == std::string::npos) continue;
    ++rep.total_cases;
    CaseResult out;
    out.id = f.id;
    out.source_key = f.source_key;
    out.metric = f.metric;
    out.unit = f.unit;
    out.measured = f.measured;
    out.gpus = f.num_gpus;
    out.gpu_generation = gpu_generation(f.gpu_id);
    out.fitted = fitted_ids.count(f.id) || fitted_sources.count(f.source_key);
    out.kind = case_kind(f);
    try {
      if (f.gpu_id.empty()) throw Skip{"GPU (hardware.gpu_id) not stated"};
      if (f.num_gpus == 0) throw Skip{"GPU count (hardware.num_gpus) not stated"};
      if (f.power_limit_w)
        throw Skip{fmt::format("a GPU power limit ({:g} W) is not modelled", *f.power_limit_w)};
      if (f.metric == "hbm_bandwidth") {
        out.predicted = predict_hbm(f, out, ctx);
      } else if (f.metric == "busbw") {
        out.predicted = predict_busbw(f, out, ctx);
      } else if (f.metric == "gemm_tflops") {
        out.predicted = predict_gemm(f, out, ctx);
      } else if (f.has_serving) {
        out.predicted = predict_serving(f, out, ctx);
      } else if (kTrainingMetrics.count(f.metric)) {
        if (!catalog_has_gpu(f.gpu_id))
          throw Skip{"GPU '" + f.gpu_id + "' is not in the hardware catalog"};
        out.predicted = predict_training(f, out, ctx);
      } else {
        throw Skip{"metric '" + f.metric + "' is not predicted"};
      }
      if (!std::isfinite(out.predicted) || out.predicted <= 0)
        throw InternalError(fmt::format("validate: case {} predicted {}", f.id, out.predicted));
      out.error_pct = (out.predicted - out.measured) / out.measured * 100.0;
      if (catalog_has_gpu(f.gpu_id) && !rep.calibration_defaults.count(f.gpu_id))
        rep.calibration_defaults[f.gpu_id] =
            calibration_defaults(profile, Catalog::builtin().gpu(f.gpu_id));
      rep.cases.push_back(std::move(out));
    } catch (const Skip& s) {
      rep.skipped.push_back({out.id, s.reason});
    } catch (const Inconsistent& x) {
      rep.inconsistent.push_back(
          {out.id, x.stated, x.built, (x.built - x.stated) / x.stated * 100.0, out.assumptions});
    } catch (const InputError& e) {
      rep.skipped.push_back({out.id, std::string("cannot build the case: ") + e.what()});
    }
  }
  std::vector<CaseResult> unfitted, fitted;
  for (const auto& c : rep.cases) (c.fitted ? fitted : unfitted).push_back(c);
  rep.summary = summarize_errors(unfitted, "all");
  rep.fitted_summary = summarize_errors(fitted, "fitted");
  std::vector<const CaseFacts*> read;
  for (const CaseFacts& f : all)
    if (options.only.empty() || f.id.find(options.only) != std::string::npos) read.push_back(&f);
  std::map<std::string, std::vector<CaseResult>> by_source, by_metric, by_gen, by_kind;
  std::map<int, std::vector<CaseResult>> by_size;
  for (const auto& c : unfitted) {
    by_source[c.source_key].push_back(c);
    by_metric[c.metric].push_back(c);
    by_gen[c.gpu_generation].push_back(c);
    by_kind[c.kind].push_back(c);
    by_size[c.gpus <= 8 ? 0 : c.gpus <= 256 ? 1 : c.gpus <= 2048 ? 2 : 3].push_back(c);
  }
  // Coverage: every unfitted case read counts in its groups, predicted or not.
  std::map<std::string, int> t_source, t_metric, t_gen, t_kind, t_size;
  std::map<std::string, int> size_order = {
      {"1-8", 0}, {"9-256", 1}, {"257-2048", 2}, {">2048", 3}, {"not stated", 4}};
  for (const CaseFacts* f : read) {
    if (fitted_ids.count(f->id) || fitted_sources.count(f->source_key)) continue;
    ++rep.summary.total;
    ++t_source[f->source_key];
    ++t_metric[f->metric];
    ++t_gen[gpu_generation(f->gpu_id)];
    ++t_kind[case_kind(*f)];
    ++t_size[job_size_group(f->num_gpus)];
  }
  for (const CaseFacts* f : read)
    if (fitted_ids.count(f->id) || fitted_sources.count(f->source_key)) ++rep.fitted_summary.total;
  auto fill = [](std::vector<ErrorSummary>& out,
                 const std::map<std::string, std::vector<CaseResult>>& v,
                 const std::map<std::string, int>& totals) {
    for (const auto& [k, n] : totals) {
      auto it = v.find(k);
      ErrorSummary s = summarize_errors(it == v.end() ? std::vector<CaseResult>{} : it->second, k);
      s.total = n;
      out.push_back(s);
    }
  };
  fill(rep.by_source, by_source, t_source);
  fill(rep.by_metric, by_metric, t_metric);
  fill(rep.by_gpu_generation, by_gen, t_gen);
  fill(rep.by_kind, by_kind, t_kind);
  std::map<std::string, std::vector<CaseResult>> by_size_named;
  for (const auto& [k, v] : by_size) by_size_named[job_size_group(v.front().gpus)] = v;
  std::vector<ErrorSummary> sizes;
  fill(sizes, by_size_named, t_size);
  std::sort(sizes.begin(), sizes.end(), [&](const ErrorSummary& a, const ErrorSummary& b) {
    return size_order[a.group] < size_order[b.group];
  });
  rep.by_job_size = sizes;
  return rep;
}

}  // namespace

ValidationReport validate_cases(const std::vector<std::string>& paths,
                                const ValidationOptions& options) {
  if (paths.empty()) throw InputError("tutti validate: no case file given (--cases FILE)");
  std::vector<CaseFacts> all;
  std::map<std::string, std::string> seen;  // id -> file
  // One file at a time: a bad case in one file is reported before a later file is opened.
  for (const auto& path : paths) read_cases(Doc::load(path), all, seen);
  return predict_cases(paths, all, options);
}

ValidationReport validate_cases(const std::vector<Doc>& files, const ValidationOptions& options) {
  if (files.empty()) throw InputError("tutti validate: no case file given (--cases FILE)");
  std::vector<CaseFacts> all;
  std::map<std::string, std::string> seen;  // id -> file
  std::vector<std::string> names;
  for (const Doc& doc : files) {
    read_cases(doc, all, seen);
    names.push_back(doc.name());
  }
  return predict_cases(names, all, options);
}

namespace {
Json summary_json(const ErrorSummary& s) {
  return {{"group", s.group},
          {"n", s.n},
          {"total", s.total},
          {"mape_pct", s.mape_pct},
          {"median_abs_error_pct", s.median_abs_error_pct},
          {"max_abs_error_pct", s.max_abs_error_pct}};
}
Json groups_json(const std::vector<ErrorSummary>& v) {
  Json a = Json::array();
  for (const auto& x : v) a.push_back(summary_json(x));
  return a;
}

// Every default the reader applies to a null (or absent) field, and why. The md output prints it;
// each applied default is also recorded in the case's `assumptions`.
struct DefaultRow {
  const char* field;
  const char* value;
  const char* why;
};
const DefaultRow kDefaults[] = {
    {"model.kv_heads", "= heads", "multi-head attention, the case of every model without GQA"},
    {"model.mlp", "plain", "GELU MLP, as GPT-2/3 and BERT"},
    {"model.ffn_hidden", "4*hidden (plain); 8*hidden/3 rounded up to 256 (gated)",
     "GPT's rule; Llama's reference rule (multiple_of=256)"},
    {"model.vocab", "51200", "Megatron's GPT-2 vocabulary padded to a multiple of 128"},
    {"(no field) biases", "on for plain MLPs, off for gated",
     "GPT/BERT blocks carry biases; Llama-style blocks do not"},
    {"(no field) dropout", "0.1 for megatron-lm / megatron-deepspeed, else none",
     "Megatron-LM's --hidden-dropout/--attention-dropout defaults; other LLM recipes train "
     "without"},
    {"(no field) architecture", "decoder-only transformer, all weights trained, Adam",
     "the case format has no family, fine-tuning or optimizer field"},
    {"model.moe.expert_ffn_hidden", "= ffn_hidden", "an expert as wide as the dense MLP (Mixtral)"},
    {"model.moe.shared_experts, dense_layers", "0", "no shared experts, every layer MoE"},
    {"model.moe.forced_balance", "false (learned routing)",
     "true: moe_balancing forced (imbalance 1.0); false or null: aux_loss, the busiest expert "
     "at 1.52 x the mean tokens (MaxVio_global 0.52 of the 3B auxiliary-loss model, "
     "arXiv:2408.15664 Table 2), set on the busiest EP rank's expert GEMMs and all-to-alls"},
    {"model.moe.dropless", "true (Megatron's default)",
     "false: capacity-limited with capacity factor 1.0 (the case format states no factor), "
     "so the busiest expert is capped at the mean"},
    {"training.precision", "read for MXFP8 only",
     "dtype fp8 with 'MXFP8' in the precision words: the mxfp8 dtype (block-scaled GEMMs); "
     "other FP8 (per-tensor, DeepSeek block-wise) stays fp8"},
    {"(no field) MoE dispatcher, node-limited routing", "all-to-all, every copy sent",
     "the case format has no dispatcher or node-limit field (DeepEP and HybridEP appear in "
     "notes only)"},
    {"training.dtype", "bf16", "the usual half precision of the runs"},
    {"training.micro_batch", "1", "the smallest micro-batch"},
    {"training.recompute_mode",
     "lightest of none/selective/full that fits tutti's memory estimate (none if none fits)",
     "the run happened, so it fit"},
    {"training.recompute", "selective = core_attn (Megatron's default --recompute-modules)",
     "read only as 'selective: NAME ...' (a trailing parenthetical aside allowed) with every NAME "
     "an exact Megatron-Core --recompute-modules name (core_attn, moe_act, layernorm, mlp, moe, "
     "shared_experts): those modules are recomputed (mapped: 'selective: layernorm moe', "
     "'selective: moe_act layernorm', 'selective: moe_act mlp (reproduce guide)'); other words "
     "are not Megatron module names and keep the default ('norm, act': norm and act are not "
     "module names, layernorm vs. the QK norm and moe_act vs. the dense MLP's activation are "
     "ambiguous; 'selective: mlp up_proj': up_proj is not a module name)"},
    {"parallel.cp", "1", "no context parallelism"},
    {"parallel.ep", "1", "experts not sharded"},
    {"parallel.etp", "= tp",
     "Megatron-Core's default expert tensor parallelism (EP carved out of dp)"},
    {"parallel.vp", "1", "no interleaving"},
    {"parallel.dp", "GPUs / (tp*pp*cp)", "the only degree the others leave"},
    {"parallel.sharding", "optimizer (ZeRO-1)",
     "NeMo's and Megatron-Core recipes' distributed optimizer"},
    {"parallel.shard_group", "every data-parallel rank",
     "plain ZeRO / FSDP FULL_SHARD shards over the whole data-parallel group"},
    {"parallel.reshard_after_forward", "true without pipelining, false with it (sharding full)",
     "torchtitan's apply_fsdp default (reshard_after_forward = not pp_enabled)"},
    {"parallel.sp", "on when tp > 1", "Megatron-Core recipes enable it with TP"},
    {"parallel.tp_comm_overlap", "off", "Megatron-LM's default"},
    {"hardware.gpus_per_node, nvlink_domain, inter_node_per_gpu_gbps",
     "the usual server of the GPU (DGX/HGX, 8 GPUs, one NIC per GPU)",
     "the common server of each generation"},
    {"hardware.fabric", "infiniband (multi-node)", "the fabric of NVIDIA's reference clusters"},
    {"(no field) topology",
     "rail-optimized fat tree, 1:1, the server's scalable unit (catalog nodes_per_su: 20 DGX "
     "A100, 32 DGX H100; 32 where none is cited), the transport's default switch",
     "NVIDIA's DGX SuperPOD reference designs"},
    {"(no field) placement",
     "a job on several NVL72-class domains: equal segments of whole trays, one per domain",
     "Slurm --segment, required by the Megatron-LM DeepSeek-V3 GB200 reproduce guide"},
    {"software.attention",
     "from software.date: unfused before 2022-06, flash1 before 2023-08, else flash2",
     "FlashAttention (arXiv 2205.14135) and FlashAttention-2 (arXiv 2307.08691) release dates"},
    {"collective.algo", "tutti's model of NCCL's choice",
     "NCCL chooses when the source does not force one"},
    {"(no field) hbm triad size", "three 2 GiB arrays", "large enough to be bandwidth-bound"},
    {"gemm.groups, gemm.layout", "1, dense", "one plain GEMM"},
    {"serving.dtype", "bf16", "the usual half precision of serving"},
    {"serving.kv_dtype", "= serving.dtype",
     "TensorRT-LLM's FP8 quantization also sets an FP8 KV cache; other frameworks keep the "
     "weights' type"},
    {"serving.pp, ep", "1", "no pipeline; experts split over the TP ranks"},
    {"serving.replicas", "GPUs / (tp*pp)", "the only count the others leave"},
    {"serving.max_batch", "4096 for tensorrt-llm, else 256",
     "trtllm-bench's printed runtime maximum (Max Runtime Batch Size 4096); vLLM's max_num_seqs"},
    {"serving.max_tokens_per_iteration, chunked_prefill, gpu_memory_utilization", "8192, on, 0.9",
     "tutti serve's defaults (vLLM's)"},
    {"load.arrival", "poisson (mode rate)",
     "the arrival process of vLLM's benchmark_serving.py at a stated request rate"},
};
}  // namespace

Json to_json(const ValidationReport& r) {
  Json cases = Json::array();
  for (const auto& c : r.cases)
    cases.push_back({{"id", c.id},
                     {"source_key", c.source_key},
                     {"metric", c.metric},
                     {"unit", c.unit},
                     {"measured", c.measured},
                     {"predicted", c.predicted},
                     {"error_pct", c.error_pct},
                     {"layout", c.layout},
                     {"gpu_generation", c.gpu_generation},
                     {"kind", c.kind},
                     {"gpus", c.gpus},
                     {"fitted", c.fitted},
                     {"assumptions", c.assumptions}});
  Json skipped = Json::array();
  for (const auto& s : r.skipped) skipped.push_back({{"id", s.id}, {"reason", s.reason}});
  Json inconsistent = Json::array();
  for (const auto& x : r.inconsistent)
    inconsistent.push_back({{"id", x.id},
                            {"stated_params", x.stated_params},
                            {"built_params", x.built_params},
                            {"difference_pct", x.difference_pct},
                            {"assumptions", x.assumptions}});
  Json j = {{"files", r.files},
            {"total_cases", r.total_cases},
            {"cases", cases},
            {"skipped", skipped},
            {"inconsistent", inconsistent}};
  j["schema_version"] = 1;  // schemas/validation_result.schema.json
  Json s = summary_json(r.summary);
  s.erase("group");
  j["summary"] = s;
  Json fs = summary_json(r.fitted_summary);
  fs.erase("group");
  j["fitted"] = fs;
  j["by_source"] = groups_json(r.by_source);
  j["by_metric"] = groups_json(r.by_metric);
  j["by_gpu_generation"] = groups_json(r.by_gpu_generation);
  j["by_kind"] = groups_json(r.by_kind);
  j["by_job_size"] = groups_json(r.by_job_size);
  Json defaults = Json::object();
  for (const auto& [gpu, d] : r.calibration_defaults) defaults[gpu] = calibration_defaults_json(d);
  j["calibration_defaults"] = defaults;
  return j;
}

std::string to_table(const ValidationReport& r, bool md) {
  std::ostringstream o;
  std::string files;
  for (const auto& f : r.files) files += " --cases " + f;
  const int unfitted = r.summary.n;
  if (md) {
    o << "# Validation against published measurements\n\n"
         "Generated by `scripts/validation-doc.sh` (`./build/tutti validate"
      << files
      << " --format md -o docs/validation.md`); do not edit by hand.\n\n"
         "Each case states a model, a recipe, a parallel layout and the hardware of a real run as "
         "structured fields; tutti predicts the measured number from those fields and its catalog "
         "only. Notes, sources and names are never read. A null field takes the default of the "
         "table below, recorded per case in `--json` output (`assumptions`); a stated fact tutti "
         "cannot express skips the case with the reason. Error = (predicted - measured) / "
         "measured. Cases named by the calibration profile's `fitted_to` lists are fitted: they "
         "are reported apart and are not in the headline figure.\n\n"
      << fmt::format(
             "**{} cases read: {} predicted ({} unfitted, {} fitted), {} inconsistent, {} "
             "skipped. Unfitted MAPE {:.1f}%, median absolute error {:.1f}%, maximum "
             "{:.1f}%.**\n\n",
             r.total_cases, r.cases.size(), unfitted, r.fitted_summary.n, r.inconsistent.size(),
             r.skipped.size(), r.summary.mape_pct, r.summary.median_abs_error_pct,
             r.summary.max_abs_error_pct);
  } else {
    o << fmt::format(
        "{} cases: {} predicted ({} unfitted, {} fitted), {} inconsistent, {} skipped\n\n",
        r.total_cases, r.cases.size(), unfitted, r.fitted_summary.n, r.inconsistent.size(),
        r.skipped.size());
  }
  auto row = [&](const std::vector<std::string>& cells) {
    if (md) {
      o << "|";
      for (const auto& c : cells) o << " " << c << " |";
    } else {
      o << fmt::format("{:<44} {:<24} {:>12} {:>12} {:>9} {}", cells[0], cells[1], cells[2],
                       cells[3], cells[4], cells[5]);
    }
    o << "\n";
  };
  row({"case", "metric", "measured", "predicted", "error %", "fitted"});
  if (md) o << "| --- | --- | ---: | ---: | ---: | --- |\n";
  for (const auto& c : r.cases)
    row({c.id, c.metric, fmt::format("{:.4g}", c.measured), fmt::format("{:.4g}", c.predicted),
         fmt::format("{:+.1f}", c.error_pct), c.fitted ? "fitted" : ""});
  o << "\n";
  auto sums = [&](const char* title, const std::vector<ErrorSummary>& v) {
    if (md)
      o << "\n### " << title
        << "\n\n| group | predicted / total | MAPE % | median abs % | max abs % |\n| --- | ---: | "
           "---: | ---: | ---: |\n";
    else
      o << title << ":\n";
    for (const auto& s : v) {
      if (md)
        o << fmt::format("| {} | {} / {} | {:.1f} | {:.1f} | {:.1f} |\n", s.group, s.n, s.total,
                         s.mape_pct, s.median_abs_error_pct, s.max_abs_error_pct);
      else
        o << fmt::format("  {:<28} {:>3}/{:<3} MAPE {:5.1f}%  median {:5.1f}%  max {:5.1f}%\n",
                         s.group, s.n, s.total, s.mape_pct, s.median_abs_error_pct,
                         s.max_abs_error_pct);
    }
  };
  sums("Unfitted cases (headline)", {r.summary});
  sums("Fitted cases (not in the headline)", {r.fitted_summary});
  sums("By source (unfitted)", r.by_source);
  sums("By metric (unfitted)", r.by_metric);
  sums("By GPU generation (unfitted)", r.by_gpu_generation);
  sums("Dense / MoE / microbenchmark / serving (unfitted)", r.by_kind);
  sums("By job size in GPUs (unfitted)", r.by_job_size);
  if (md)
    o << "\n### Calibration defaults per GPU\n\nValues of the compute and collective models that "
         "no microbenchmark of that GPU stands behind (`tutti catalog show ID` lists the "
         "same).\n\n| GPU | defaults used |\n| --- | --- |\n";
  else
    o << "Calibration defaults per GPU (no microbenchmark of that GPU behind them):\n";
  for (const auto& [gpu, d] : r.calibration_defaults) {
    const std::string text = d.empty() ? "none" : calibration_defaults_text(d);
    if (md)
      o << fmt::format("| {} | {} |\n", gpu, text);
    else
      o << fmt::format("  {:<16} {}\n", gpu, text);
  }
  if (!r.inconsistent.empty()) {
    if (md)
      o << "\n### Inconsistent (built parameter count more than 5% from model.params; not "
           "scored)\n\n| case | stated params | built params | difference % |\n| --- | ---: | ---: "
           "| ---: |\n";
    else
      o << "Inconsistent (built parameter count more than 5% from model.params):\n";
    for (const auto& x : r.inconsistent) {
      if (md)
        o << fmt::format("| {} | {:.4g} | {:.4g} | {:+.1f} |\n", x.id, x.stated_params,
                         x.built_params, x.difference_pct);
      else
        o << fmt::format("  {}: stated {:.4g}, built {:.4g} ({:+.1f}%)\n", x.id, x.stated_params,
                         x.built_params, x.difference_pct);
    }
  }
  if (!r.skipped.empty()) {
    if (md)
      o << "\n### Skipped\n\n| case | reason |\n| --- | --- |\n";
    else
      o << "Skipped:\n";
    for (const auto& s : r.skipped) {
      if (md)
        o << "| " << s.id << " | " << s.reason << " |\n";
      else
        o << "  " << s.id << ": " << s.reason << "\n";
    }
  }
  if (md) {
    o << "\n### Defaults\n\nApplied only where a case leaves the field null (or where the case "
         "format has no field); each application is recorded in that case's `assumptions`.\n\n"
         "| field | default | why |\n| --- | --- | --- |\n";
    for (const auto& d : kDefaults)
      o << "| " << d.field << " | " << d.value << " | " << d.why << " |\n";
  }
  return o.str();
}

}  // namespace tutti
