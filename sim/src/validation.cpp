// Validation against published measurements. See validation.hpp for the contract; the defaults
// applied to unstated fields are listed in docs/validation.md and recorded per case.
#include "tutti/sim/validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

using Json = nlohmann::json;

namespace {

/// Raised inside one case to move it to `skipped` with a reason.
struct Skip {
  std::string reason;
};

const Json* find(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

double num(const Json& j, const char* key, double dflt) {
  const Json* v = find(j, key);
  return v && v->is_number() ? v->get<double>() : dflt;
}

std::string str(const Json& j, const char* key) {
  const Json* v = find(j, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The system each GPU usually ships in, from the catalog (gpus.json "usual_node"): the fair
// assumption the case README allows when a source does not name its system.
std::string node_for_gpu(const std::string& gpu_id) {
  for (const auto& g : Catalog::builtin().gpus())
    if (g.id == gpu_id && !g.usual_node.empty()) return g.usual_node;
  throw Skip{"GPU '" + gpu_id + "' has no entry (or no usual_node) in the hardware catalog"};
}

// Nodes per scalable unit of NVIDIA's reference designs: DGX A100 SuperPOD SUs hold 20 nodes
// (40-port HDR leaves, 20 down and 20 up); DGX H100/H200/B200 SuperPODs 32.
int su_nodes(const std::string& node) { return node.rfind("dgx-a100", 0) == 0 ? 20 : 32; }

DType dtype_of(const std::string& s) {
  if (s == "fp8") return DType::FP8;
  if (s == "fp16") return DType::FP16;
  if (s == "tf32") return DType::TF32;
  if (s == "fp32") return DType::FP32;
  return DType::BF16;
}

double busbw_factor(Coll c, int n) {
  switch (c) {
    case Coll::AllReduce: return 2.0 * (n - 1) / n;
    case Coll::AllGather:
    case Coll::ReduceScatter:
    case Coll::AllToAll: return static_cast<double>(n - 1) / n;
    case Coll::Broadcast: return 1.0;
  }
  return 1.0;
}

// The attention kernel a run used follows from when it ran. Fused (flash-style) attention
// arrived with FlashAttention (Dao et al., arXiv 2205.14135, May 2022) and reached Megatron-LM /
// NGC containers from mid-2022; FlashAttention-2 (arXiv 2307.08691, July 2023) replaced it at
// about twice its rate. The date comes from what the source states: an arXiv id, the yy.mm of an
// NGC or NeMo container, an ISO date, or notes saying the tables predate torch 2.0 (March 2023).
struct AttentionEra {
  enum Kind { Modern, Flash1, Unfused } kind = Modern;
  std::string reason;  // what dated the run ("" for Modern without a date)
};

AttentionEra attention_era(const Json& c) {
  const std::string src = str(c, "source"), notes = lower(str(c, "notes"));
  const bool flash_stated = notes.find("flash") != std::string::npos;
  // yymm * 1e5 + arXiv sequence number, so dates compare with arXiv ids.
  double when = -1;
  std::string what;
  std::smatch m;
  if (std::regex_search(src, m, std::regex(R"(arxiv\.org/abs/(\d{4})\.(\d{4,5}))"))) {
    when = std::stod(m[1].str()) * 1e5 + std::stod(m[2].str());
    what = "arXiv " + m[1].str() + "." + m[2].str();
  } else if (std::regex_search(src, m, std::regex(R"((\d{2})\.(\d{2}) NGC|(?:NeMo|NGC|container) (\d{2})\.(\d{2}))"))) {
    std::string yy = m[1].matched ? m[1].str() : m[3].str(), mm = m[1].matched ? m[2].str() : m[4].str();
    when = (std::stod(yy) * 100 + std::stod(mm)) * 1e5;
    what = "container " + yy + "." + mm;
  } else if (std::regex_search(src, m, std::regex(R"(\b20(\d{2})-(\d{2})-\d{2}\b)"))) {
    when = (std::stod(m[1].str()) * 100 + std::stod(m[2].str())) * 1e5;
    what = "dated 20" + m[1].str() + "-" + m[2].str();
  } else if (notes.find("predate torch 2.0") != std::string::npos) {
    when = 2302.0 * 1e5;
    what = "tables predating torch 2.0";
  }
  AttentionEra e;
  if (when < 0) return e;
  e.reason = what;
  const double flash1 = 2205.0 * 1e5 + 14135, flash2 = 2307.0 * 1e5 + 8691;
  if (when < flash1) e.kind = flash_stated ? AttentionEra::Flash1 : AttentionEra::Unfused;
  else if (when < flash2 && flash_stated) e.kind = AttentionEra::Flash1;
  return e;
}

struct Context {
  const ValidationOptions& options;
  const CalibrationProfile& profile;
};

// ---- Microbenchmark cases ----------------------------------------------------------------------

double predict_gemm(const Json& c, CaseResult& out, const Context& ctx) {
  const GpuSpec& gpu = Catalog::builtin().gpu(str(c["hardware"], "gpu_id"));
  std::string name = str(c["model"], "name") + " " + str(c, "id");
  std::smatch m;
  std::int64_t n = 0;
  if (std::regex_search(name, m, std::regex(R"(m=n=k=(\d+))")) ||
      std::regex_search(name, m, std::regex(R"((\d+)cube)")))
    n = std::stoll(m[1]);
  if (n <= 0) throw Skip{"GEMM shape not stated (expected m=n=k=N in the model name)"};
  std::string dt = str(c["training"], "dtype");
  if (dt.empty()) {
    dt = "bf16";
    out.assumptions.push_back("dtype bf16 (not stated)");
  }
  Op op;
  op.kind = OpKind::Gemm;
  op.dtype = dtype_of(dt);
  op.m = op.n = op.k = n;
  op.flops = 2.0 * n * n * n;
  double t = op_time_s(op, gpu, ctx.profile);
  return op.flops / t / 1e12;
}

double predict_hbm(const Json& c, CaseResult& out, const Context& ctx) {
  const GpuSpec& gpu = Catalog::builtin().gpu(str(c["hardware"], "gpu_id"));
  // STREAM triad a = b + s*c over three large arrays: 2 reads + 1 write per element.
  const double bytes = 3.0 * 2.0 * 1073741824.0;
  out.assumptions.push_back("triad over three 2 GiB arrays");
  Op op;
  op.kind = OpKind::MemBound;
  op.bytes = bytes;
  double t = op_time_s(op, gpu, ctx.profile);
  return bytes / t / 1e12;
}

double predict_busbw(const Json& c, CaseResult& out, const Context& ctx) {
  const Json* coll = find(c, "collective");
  if (!coll) throw Skip{"busbw case without a collective section"};
  std::string op = str(*coll, "op");
  Coll kind;
  if (op == "all_reduce") kind = Coll::AllReduce;
  else if (op == "all_gather") kind = Coll::AllGather;
  else if (op == "reduce_scatter") kind = Coll::ReduceScatter;
  else if (op == "alltoall" || op == "all_to_all") kind = Coll::AllToAll;
  else if (op == "broadcast") kind = Coll::Broadcast;
  else throw Skip{"collective '" + op + "' is not modelled"};
  double bytes = num(*coll, "message_bytes", 0);
  if (bytes <= 0) throw Skip{"collective message size not stated"};
  const Json& hw = c["hardware"];
  int gpus = static_cast<int>(num(hw, "num_gpus", 0));
  std::string node = node_for_gpu(str(hw, "gpu_id"));
  ClusterParams p;
  p.name = str(c, "id");
  p.node = node;
  int per_node = static_cast<int>(num(hw, "gpus_per_node", 8));
  p.nodes = std::max(1, (gpus + per_node - 1) / per_node);
  p.fabric = p.nodes > 1 ? "rail_optimized" : "none";
  p.nodes_per_su = su_nodes(p.node);
  Cluster cluster = make_cluster(p);
  SimCluster sc = sim_cluster(cluster);
  std::string algo = lower(str(*coll, "algo"));
  std::string notes = str(c, "notes");
  bool nvls = sc.nvls && notes.find("NCCL_NVLS_ENABLE=0") == std::string::npos && algo != "ring";
  CollectiveContext cctx = make_collective_context(*sc.topology, ctx.profile, nvls, sc.sharp);
  std::vector<int> group(gpus);
  for (int i = 0; i < gpus; ++i) group[i] = i;
  CollectivePlan plan = algo == "ring"
                            ? plan_collective_with(kind, bytes, group, cctx, CollAlgo::Ring,
                                                   NcclProto::Simple)
                            : plan_collective(kind, bytes, group, cctx);
  out.layout = std::string("algo=") + to_string(plan.algo);
  double t = simulate_collectives({plan}, *sc.topology, ctx.profile);
  return bytes / t * busbw_factor(kind, gpus) / 1e9;
}

// ---- Training cases ----------------------------------------------------------------------------

struct TrainingSetup {
  Workload workload;
  Layout layout;
  Recompute stated_recompute = Recompute::None;
  int gpus = 0;
};

TrainingSetup build_training(const Json& c, CaseResult& out) {
  const Json& model = c["model"];
  const Json& tr = c["training"];
  const Json& par = c.contains("parallel") ? c["parallel"] : Json::object();
  const Json& hw = c["hardware"];
  std::string name = str(model, "name");
  std::string lname = lower(name);
  std::string notes = lower(str(c, "notes") + " " + str(tr, "precision"));
  auto note = [&](std::string s) { out.assumptions.push_back(std::move(s)); };

  Json doc = Json::object();
  doc["name"] = str(c, "id");
  doc["source"] = str(c, "source").empty() ? std::string("validation case") : str(c, "source");
  Json m = Json::object();
  Json t = Json::object();
  const std::string metric = str(c["measured"], "metric");
  bool resnet = lname.find("resnet") != std::string::npos;
  bool bert = lname.find("bert") != std::string::npos;
  if (resnet) {
    m = {{"family", "resnet"}, {"blocks", {3, 4, 6, 3}}, {"width", 64}, {"image_size", 224},
         {"channels", 3}, {"classes", 1000}};
  } else {
    const Json* layers = find(model, "layers");
    const Json* hidden = find(model, "hidden");
    const Json* heads = find(model, "heads");
    if (!layers || !hidden || !heads) throw Skip{"model shape (layers, hidden, heads) not stated"};
    int h = hidden->get<int>();
    m["family"] = bert ? "encoder" : "transformer";
    m["layers"] = layers->get<int>();
    m["hidden"] = h;
    m["heads"] = heads->get<int>();
    m["kv_heads"] = static_cast<int>(num(model, "kv_heads", heads->get<double>()));
    bool llama_like = lname.find("llama") != std::string::npos ||
                      lname.find("mixtral") != std::string::npos ||
                      lname.find("nemotron") != std::string::npos;
    bool gated = llama_like && lname.find("nemotron") == std::string::npos;
    m["gated_mlp"] = gated;
    if (const Json* f = find(model, "ffn_hidden")) {
      m["ffn_hidden"] = f->get<int>();
    } else {
      m["ffn_hidden"] = 4 * h;
      note("ffn_hidden = 4*hidden (not stated)");
    }
    double vocab = num(model, "vocab", 0);
    if (vocab <= 0) {
      vocab = bert ? 30522 : (llama_like ? 32000 : 51200);
      note(fmt::format("vocab {} (not stated)", vocab));
    }
    m["vocab"] = static_cast<std::int64_t>(vocab);
    // Megatron-LM GPT and BERT keep dropout 0.1 on the attention probabilities and the residual
    // branches (their reference configs); Llama-style and MPT recipes train without dropout.
    bool dropout = bert || lname.find("gpt") != std::string::npos;
    m["dropout"] = dropout;
    if (dropout) note("dropout on (GPT/BERT reference configs)");
    if (bert) {
      m["bias"] = true;
      m["norm"] = "layernorm";
      m["type_vocab"] = 2;
      m["pooler"] = true;
      m["max_positions"] = 512;
    } else if (!llama_like) {
      m["bias"] = true;  // GPT and MPT-style blocks
    }
    if (const Json* moe = find(model, "moe")) {
      m["experts"] = (*moe)["experts"].get<int>();
      m["top_k"] = (*moe)["topk"].get<int>();
      m["moe_ffn_hidden"] = m["ffn_hidden"];
    }
  }
  doc["model"] = m;

  const Json* gb = find(tr, "global_batch");
  if (!gb) throw Skip{"global batch not stated"};
  t["global_batch"] = gb->get<std::int64_t>();
  if (!resnet) {
    const Json* seq = find(model, "seq_len");
    if (!seq) throw Skip{"sequence length not stated"};
    t["seq_len"] = seq->get<int>();
  }
  std::string dt = str(tr, "dtype");
  if (dt.empty()) {
    std::string prec = lower(str(tr, "precision"));
    dt = prec.find("fp8") != std::string::npos ? "fp8"
         : (prec.find("amp") != std::string::npos && bert) ? "fp16" : "bf16";
    note("dtype " + dt + " (not stated)");
  }
  if (dt == "fp4") throw Skip{"fp4 training is not modelled"};
  t["dtype"] = dt;
  t["optimizer"] = resnet ? "sgd" : "adam";
  if (!resnet && lname.find("lora") != std::string::npos) {
    t["frozen_weights"] = true;
    note("LoRA: base weights frozen (no weight gradients, reduction or optimizer step)");
  }
  if (!resnet) {
    AttentionEra era = attention_era(c);
    t["flash_attention"] = era.kind != AttentionEra::Unfused;
    if (era.kind == AttentionEra::Unfused)
      note("unfused attention (the source, " + era.reason + ", predates fused attention)");
    if (era.kind == AttentionEra::Flash1) {
      t["flash_attention_version"] = 1;
      note("FlashAttention-1 (the source, " + era.reason + ", predates FlashAttention-2)");
    }
  }
  std::string rc = str(tr, "recompute_mode");
  Recompute stated = Recompute::None;
  if (rc == "selective") stated = Recompute::Selective;
  if (rc == "full") stated = Recompute::Full;
  t["recompute"] = rc.empty() ? "none" : rc;
  doc["training"] = t;

  int gpus = static_cast<int>(num(hw, "num_gpus", 0));
  if (gpus <= 0) throw Skip{"GPU count not stated"};
  Layout l;
  auto deg = [&](const char* k, int dflt, bool required) {
    const Json* v = find(par, k);
    if (!v) {
      if (required) throw Skip{std::string("parallel degree '") + k + "' not stated"};
      return dflt;
    }
    return v->get<int>();
  };
  l.tp = deg("tp", 1, true);
  l.pp = deg("pp", 1, true);
  l.cp = deg("cp", 1, false);
  l.ep = deg("ep", 1, false);
  l.vp = deg("vp", 1, false);
  l.dp = deg("dp", 0, false);
  if (l.dp <= 0) l.dp = gpus / (l.tp * l.pp * l.cp);
  if (l.tp * l.pp * l.cp * l.dp != gpus)
    throw Skip{fmt::format("tp*pp*cp*dp = {} does not equal the {} GPUs", l.tp * l.pp * l.cp * l.dp, gpus)};
  if (l.vp > 1) l.schedule = PipeSchedule::Interleaved;
  l.recompute = stated;
  l.sequence_parallel = l.tp > 1;
  {
    // Megatron --tp-comm-overlap (Transformer Engine userbuffers), when the case states it.
    std::string stated_flags = lower(str(c, "notes") + " " + tr.dump() + " " + par.dump());
    bool tpo = stated_flags.find("tp-comm-overlap") != std::string::npos ||
               stated_flags.find("tp_comm_overlap") != std::string::npos;
    if (tpo && l.sequence_parallel) {
      l.tp_overlap = true;
      note("TP communication overlap (--tp-comm-overlap stated): TE userbuffers defaults");
    }
  }
  if (const Json* mb = find(tr, "micro_batch")) {
    l.micro_batch = mb->get<int>();
  } else {
    l.micro_batch = 1;
    note("micro_batch 1 (not stated)");
  }
  bool fsdp = notes.find("fsdp") != std::string::npos || notes.find("full_shard") != std::string::npos;
  l.zero = fsdp ? 3 : 1;
  l.fsdp = fsdp;
  if (!fsdp && gpus > 1) note("distributed optimizer (ZeRO-1), as Megatron-LM/NeMo run it");

  TrainingSetup s;
  s.workload = parse_workload(doc.dump(), str(c, "id"));
  s.layout = l;
  s.stated_recompute = stated;
  s.gpus = gpus;
  return s;
}

double predict_training(const Json& c, CaseResult& out, const Context& ctx) {
  TrainingSetup s = build_training(c, out);
  const Json& hw = c["hardware"];
  ClusterParams p;
  p.name = str(c, "id");
  p.node = node_for_gpu(str(hw, "gpu_id"));
  int per_node = static_cast<int>(num(hw, "gpus_per_node", 8));
  p.nodes = std::max(1, (s.gpus + per_node - 1) / per_node);
  p.fabric = p.nodes > 1 ? "rail_optimized" : "none";
  p.nodes_per_su = su_nodes(p.node);
  Cluster cluster = make_cluster(p);
  // An unstated recompute mode: the run happened, so it fit; take the lightest mode that fits.
  // When even full recompute does not fit tutti's estimate, the estimate is wrong about this run
  // and says nothing about its recompute: keep none, the frameworks' default.
  if (str(c["training"], "recompute_mode").empty()) {
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
  so.calibration = ctx.options.calibration;
  SimResult r = simulate(s.workload, cluster, s.layout, so);
  out.layout = to_string(s.layout);
  const std::string metric = str(c["measured"], "metric");
  const double t = r.iteration_time_s;
  const double gb = static_cast<double>(s.workload.training.global_batch);
  if (metric == "step_time") return t;
  if (metric == "tokens_per_sec_per_gpu")
    return gb * s.workload.training.seq_len / t / s.gpus;
  if (metric == "tflops_per_gpu")
    return megatron_flops_per_iteration(s.workload, s.stated_recompute) / t / s.gpus / 1e12;
  if (metric == "mfu")
    return model_flops_per_iteration(s.workload) / t / s.gpus /
           peak_flops(cluster.gpu, s.workload.training.dtype, ctx.profile) * 100.0;
  if (metric == "images_per_sec" || metric == "sequences_per_sec") return gb / t;
  throw Skip{"metric '" + metric + "' is not predicted"};
}

}  // namespace

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
  s.median_abs_error_pct = abs.size() % 2 ? abs[abs.size() / 2]
                                          : 0.5 * (abs[abs.size() / 2 - 1] + abs[abs.size() / 2]);
  s.max_abs_error_pct = abs.back();
  return s;
}

ValidationReport validate_cases(const std::string& path, const ValidationOptions& options) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  Json all;
  try {
    all = Json::parse(in);
  } catch (const Json::parse_error& e) {
    throw InputError(path + ": malformed JSON: " + e.what());
  }
  if (!all.is_array()) throw InputError(path, "(top level)", describe_json(all), "an array of cases");
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Json& c = all[i];
    std::string at = std::to_string(i);
    if (!c.is_object()) throw InputError(path, at, describe_json(c), "a case object");
    if (!find(c, "id") || !c["id"].is_string())
      throw InputError(path, at + ".id", c.contains("id") ? describe_json(c["id"]) : "nothing", "a case id string");
    const Json* meas = find(c, "measured");
    if (!meas || !find(*meas, "metric") || !find(*meas, "value") || !(*meas)["value"].is_number())
      throw InputError(path, at + ".measured", meas ? describe_json(*meas) : "nothing",
                       "an object with metric and a numeric value");
    if (!find(c, "hardware") || !find(c["hardware"], "gpu_id"))
      throw InputError(path, at + ".hardware.gpu_id", "nothing", "a catalog GPU id");
    for (const char* k : {"model", "training"})
      if (!c.contains(k) || !c[k].is_object())
        throw InputError(path, at + "." + k, c.contains(k) ? describe_json(c[k]) : "nothing", "an object");
  }

  CalibrationProfile loaded;
  if (!options.calibration.empty()) loaded = load_calibration(options.calibration);
  const CalibrationProfile& profile = options.calibration.empty() ? default_calibration() : loaded;
  Context ctx{options, profile};

  ValidationReport rep;
  rep.file = path;
  for (const Json& c : all) {
    CaseResult out;
    out.id = c["id"].get<std::string>();
    if (!options.only.empty() && out.id.find(options.only) == std::string::npos) continue;
    out.source_key = str(c, "source_key");
    out.metric = c["measured"]["metric"].get<std::string>();
    out.unit = str(c["measured"], "unit");
    out.measured = c["measured"]["value"].get<double>();
    try {
      if (out.measured == 0) throw Skip{"measured value is 0"};
      if (out.metric == "gemm_tflops") out.predicted = predict_gemm(c, out, ctx);
      else if (out.metric == "hbm_bandwidth") out.predicted = predict_hbm(c, out, ctx);
      else if (out.metric == "busbw") out.predicted = predict_busbw(c, out, ctx);
      else {
        node_for_gpu(str(c["hardware"], "gpu_id"));  // skip unknown GPUs before building anything
        out.predicted = predict_training(c, out, ctx);
      }
      out.error_pct = (out.predicted - out.measured) / out.measured * 100.0;
      rep.cases.push_back(std::move(out));
    } catch (const Skip& s) {
      rep.skipped.push_back({out.id, s.reason});
    } catch (const InputError& e) {
      rep.skipped.push_back({out.id, std::string("cannot build the case: ") + e.what()});
    }
  }
  rep.summary = summarize_errors(rep.cases, "all");
  std::map<std::string, std::vector<CaseResult>> by_source, by_metric;
  for (const auto& c : rep.cases) {
    by_source[c.source_key].push_back(c);
    by_metric[c.metric].push_back(c);
  }
  for (const auto& [k, v] : by_source) rep.by_source.push_back(summarize_errors(v, k));
  for (const auto& [k, v] : by_metric) rep.by_metric.push_back(summarize_errors(v, k));
  return rep;
}

namespace {
Json summary_json(const ErrorSummary& s) {
  return {{"group", s.group},
          {"n", s.n},
          {"mape_pct", s.mape_pct},
          {"median_abs_error_pct", s.median_abs_error_pct},
          {"max_abs_error_pct", s.max_abs_error_pct}};
}
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
                     {"assumptions", c.assumptions}});
  Json skipped = Json::array();
  for (const auto& s : r.skipped) skipped.push_back({{"id", s.id}, {"reason", s.reason}});
  Json j = {{"file", r.file}, {"cases", cases}, {"skipped", skipped}};
  Json s = summary_json(r.summary);
  s.erase("group");
  j["summary"] = s;
  j["by_source"] = Json::array();
  for (const auto& x : r.by_source) j["by_source"].push_back(summary_json(x));
  j["by_metric"] = Json::array();
  for (const auto& x : r.by_metric) j["by_metric"].push_back(summary_json(x));
  return j;
}

namespace {
// The issue's goals, stated with the current figures: MAPE <= 10% over all cases, and below
// Calculon's 3.65% on the Korthikanti et al. 2022 subset. tests/sim/validation_test.cpp holds
// the suite to both.
std::string goal_line(const ValidationReport& r) {
  double korthikanti = -1;
  for (const auto& g : r.by_source)
    if (g.group == "korthikanti2022") korthikanti = g.mape_pct;
  std::string k = korthikanti < 0 ? std::string("no Korthikanti cases in this file")
                                   : fmt::format("{:.1f}%: {}", korthikanti,
                                                 korthikanti < 3.65 ? "met" : "not met");
  return fmt::format(
      "Goals: MAPE <= 10% over the public cases ({:.1f}%: {}); below Calculon's 3.65% on the "
      "Korthikanti et al. 2022 subset ({}). `tests/sim/validation_test.cpp` fails when either "
      "figure rises above its goal.\n\n",
      r.summary.mape_pct, r.summary.mape_pct <= 10.0 ? "met" : "not met", k);
}
}  // namespace

std::string to_table(const ValidationReport& r, bool md) {
  std::ostringstream o;
  if (md) {
    o << "# Validation against published measurements\n\n"
         "Generated by `./build/tutti validate --cases " << r.file
      << " --format md -o docs/validation.md`; do not edit by hand.\n\n"
         "Each case states a model, a recipe, a parallel layout and the hardware of a real run; "
         "tutti predicts the measured number from that and its catalog only (one catalog, no "
         "per-case fitting). Defaults for unstated fields are recorded per case in `--json` "
         "output (`assumptions`). Error = (predicted - measured) / measured.\n\n"
      << fmt::format("**{} cases predicted, {} skipped. MAPE {:.1f}%, median absolute error "
                     "{:.1f}%, maximum {:.1f}%.**\n\n",
                     r.summary.n, r.skipped.size(), r.summary.mape_pct,
                     r.summary.median_abs_error_pct, r.summary.max_abs_error_pct)
      << goal_line(r);
  }
  auto row = [&](const std::vector<std::string>& cells) {
    if (md) {
      o << "|";
      for (const auto& c : cells) o << " " << c << " |";
    } else {
      o << fmt::format("{:<44} {:<24} {:>12} {:>12} {:>9}", cells[0], cells[1], cells[2], cells[3], cells[4]);
    }
    o << "\n";
  };
  row({"case", "metric", "measured", "predicted", "error %"});
  if (md) o << "| --- | --- | ---: | ---: | ---: |\n";
  for (const auto& c : r.cases)
    row({c.id, c.metric, fmt::format("{:.4g}", c.measured), fmt::format("{:.4g}", c.predicted),
         fmt::format("{:+.1f}", c.error_pct)});
  o << "\n";
  auto sums = [&](const char* title, const std::vector<ErrorSummary>& v) {
    if (md) o << "\n### " << title << "\n\n| group | n | MAPE % | median abs % | max abs % |\n| --- | ---: | ---: | ---: | ---: |\n";
    else o << title << ":\n";
    for (const auto& s : v) {
      if (md)
        o << fmt::format("| {} | {} | {:.1f} | {:.1f} | {:.1f} |\n", s.group, s.n, s.mape_pct,
                         s.median_abs_error_pct, s.max_abs_error_pct);
      else
        o << fmt::format("  {:<28} n={:<3} MAPE {:5.1f}%  median {:5.1f}%  max {:5.1f}%\n", s.group,
                         s.n, s.mape_pct, s.median_abs_error_pct, s.max_abs_error_pct);
    }
  };
  sums("All cases", {r.summary});
  sums("By source", r.by_source);
  sums("By metric", r.by_metric);
  if (!r.skipped.empty()) {
    if (md) o << "\n### Skipped\n\n| case | reason |\n| --- | --- |\n";
    else o << "Skipped:\n";
    for (const auto& s : r.skipped) {
      if (md) o << "| " << s.id << " | " << s.reason << " |\n";
      else o << "  " << s.id << ": " << s.reason << "\n";
    }
  }
  return o.str();
}

}  // namespace tutti
