// The replay driver shared by `tutti exec replay` and `tutti validate --live`: loads the
// workload (scaled down on request) and the cluster, expands the Program for the layout, checks
// the MPI world against it and runs it on this rank's device.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "exec_shared.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/flags.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/exec/environment.hpp"
#include "tutti/exec/replay.hpp"
#include "tutti/exec/session.hpp"
#include "tutti/models/layout.hpp"

#if __has_include("tutti/models/workload.hpp")
#include "tutti/models/workload.hpp"
#define TUTTI_EXEC_HAVE_WORKLOADS 1
#endif
#if __has_include("tutti/topologies/cluster.hpp")
#include "tutti/topologies/cluster.hpp"
#define TUTTI_EXEC_HAVE_CLUSTERS 1
#endif

namespace tutti::cli {

void add_replay_options(CLI::App* sub, ReplayCliOptions& o) {
  sub->add_option("--workload", o.workload, "Workload JSON (models/*.json)")->required();
  sub->add_option("--cluster", o.cluster, "Cluster JSON the ranks stand for (topologies/*.json)")
      ->required();
  sub->add_option("--parallel", o.parallel,
                  "Layout tp=..,pp=..,dp=..,... (default: the workload's)");
  sub->add_option("--scale-down", o.scale_down,
                  "Run a smaller workload: layers=N,batch=M,micro_batch=B,seq=S,hidden=H,vocab=V "
                  "(recorded with the results)");
  sub->add_option("--iterations", o.iterations, "Timed iterations (median reported)")
      ->capture_default_str();
  sub->add_option("--warmup", o.warmup, "Untimed iterations after the check pass")
      ->capture_default_str();
  sub->add_flag("--no-check", o.no_check, "Skip the pass that verifies collective results");
  sub->add_option("--device", o.device, "cpu (MPI + OpenBLAS) or gpu (NCCL + cuBLAS)")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();
  sub->add_option("--timeout", o.timeout,
                  "Abort the job (exit 3, naming the stuck rank) when no rank progresses for this "
                  "long: 1s..7d, or off")
      ->capture_default_str();
  sub->add_option("--debug-die-rank", o.debug_die_rank,
                  "Testing: this rank dies (SIGKILL) before the run")
      ->group("");
  sub->add_option("--debug-hang-rank", o.debug_hang_rank, "Testing: this rank hangs before the run")
      ->group("");
}

/// Scale-down items -> `--set` overrides on the workload file (hidden scales the MLP width too).
std::vector<std::string> scale_down_overrides(const std::string& spec,
                                              const std::string& workload_path,
                                              nlohmann::json& recorded) {
  std::vector<std::string> out;
  recorded = nlohmann::json::object();
  if (spec.empty()) return out;
  nlohmann::json raw;
  {
    std::ifstream in(workload_path, std::ios::binary);
    if (!in) throw InputError(workload_path + ": cannot read the workload file");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    raw = parse_json_text(text, workload_path);
  }
  const std::string flag = "--scale-down";
  const std::string expected =
      "KEY=positive integer with KEY one of layers, batch, micro_batch, seq, hidden, vocab";
  for (const FlagItem& item : split_flag_items(spec, flag, expected)) {
    const std::string& key = item.key;
    const long long v = flag_integer(item, flag, 1, 1LL << 40);
    auto original = [&](const char* section, const char* field) -> nlohmann::json {
      if (raw.contains(section) && raw[section].is_object() && raw[section].contains(field))
        return raw[section][field];
      return nullptr;
    };
    if (key == "layers") {
      out.push_back("model.layers=" + std::to_string(v));
      recorded["layers"] = {{"from", original("model", "layers")}, {"to", v}};
    } else if (key == "batch") {
      out.push_back("training.global_batch=" + std::to_string(v));
      recorded["global_batch"] = {{"from", original("training", "global_batch")}, {"to", v}};
    } else if (key == "micro_batch") {
      out.push_back("training.micro_batch=" + std::to_string(v));
      recorded["micro_batch"] = {{"from", original("training", "micro_batch")}, {"to", v}};
    } else if (key == "vocab") {
      out.push_back("model.vocab=" + std::to_string(v));
      recorded["vocab"] = {{"from", original("model", "vocab")}, {"to", v}};
    } else if (key == "seq") {
      out.push_back("training.seq_len=" + std::to_string(v));
      recorded["seq_len"] = {{"from", original("training", "seq_len")}, {"to", v}};
    } else if (key == "hidden") {
      auto h0 = original("model", "hidden");
      if (!h0.is_number_integer())
        throw InputError(workload_path, "model.hidden", "none", "an integer to scale from");
      double ratio = static_cast<double>(v) / h0.get<double>();
      out.push_back("model.hidden=" + std::to_string(v));
      recorded["hidden"] = {{"from", h0}, {"to", v}};
      // Keep the head size: fewer heads (and KV heads) rather than thinner ones.
      if (!original("model", "head_dim").is_number_integer())
        for (const char* f : {"heads", "kv_heads"}) {
          auto x = original("model", f);
          if (x.is_number_integer()) {
            long long nv = std::max(1LL, static_cast<long long>(x.get<double>() * ratio + 0.5));
            out.push_back(std::string("model.") + f + "=" + std::to_string(nv));
            recorded[f] = {{"from", x}, {"to", nv}};
          }
        }
      for (const char* f : {"ffn_hidden", "moe_ffn_hidden"}) {
        auto x = original("model", f);
        if (x.is_number_integer()) {
          long long nv = std::max(1LL, static_cast<long long>(x.get<double>() * ratio + 0.5));
          out.push_back(std::string("model.") + f + "=" + std::to_string(nv));
          recorded[f] = {{"from", x}, {"to", nv}};
        }
      }
    } else {
      throw InputError(flag, key, "unknown key \"" + key + "\"",
                       "one of layers, batch, micro_batch, seq, hidden, vocab");
    }
  }
  return out;
}

#if defined(TUTTI_EXEC_HAVE_WORKLOADS)
std::vector<std::array<std::int64_t, 3>> workload_gemm_shapes(const std::string& workload,
                                                              const std::string& parallel,
                                                              const std::string& scale_down,
                                                              std::vector<double>* membound_bytes) {
  nlohmann::json scaling;
  Workload w = load_workload(workload, scale_down_overrides(scale_down, workload, scaling));
  Program p = expand_program(w, resolve_layout(w, parallel, 0));
  std::vector<std::array<std::int64_t, 3>> out;
  auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    std::array<std::int64_t, 3> s{m, n, k};
    if (m > 0 && n > 0 && k > 0 && std::find(out.begin(), out.end(), s) == out.end())
      out.push_back(s);
  };
  for (const auto& c : p.classes)
    for (const auto& op : c.ops) {
      if (op.kind == OpKind::Gemm) add(op.m, op.n, op.k);
      if (op.kind == OpKind::MemBound && membound_bytes && op.bytes >= 2) {
        bool seen = false;
        for (double b : *membound_bytes) seen = seen || std::fabs(b - op.bytes) <= 0.01 * op.bytes;
        if (!seen) membound_bytes->push_back(std::round(op.bytes));
      }
      if (op.kind == OpKind::Attention) {  // as the replay runs it: Q K^T and P V
        add(op.m, op.n, op.k);
        add(op.m, op.k, op.n);
      }
    }
  return out;
}
#else
std::vector<std::array<std::int64_t, 3>> workload_gemm_shapes(const std::string&,
                                                              const std::string&,
                                                              const std::string&,
                                                              std::vector<double>*) {
  throw InputError("--workload needs the workload loader (issue 3), not in this build");
}
#endif

nlohmann::json run_replay(exec::Session& s, exec::Watchdog& wd, const ReplayCliOptions& o) {
#if defined(TUTTI_EXEC_HAVE_WORKLOADS)
  if (o.iterations < 1) throw InputError("--iterations", "", std::to_string(o.iterations), ">= 1");
  if (o.warmup < 0) throw InputError("--warmup", "", std::to_string(o.warmup), ">= 0");
  nlohmann::json scaling;
  std::vector<std::string> overrides = scale_down_overrides(o.scale_down, o.workload, scaling);
  Workload w = load_workload(o.workload, overrides);
  Layout l;
  try {
    l = resolve_layout(w, o.parallel, s.size());
  } catch (const InputError& e) {
    // The layout may be fine but for another world size: say that (with the launch hint).
    // resolve_layout names the GPU count "--gpus", a flag exec replay does not have: the count
    // here is the MPI world's.
    Layout alone = resolve_layout(w, o.parallel, 0);
    if (alone.gpus() == s.size()) {
      if (e.file() != "--gpus") throw;
      throw InputError("the MPI world", "ranks", std::to_string(s.size()), e.expected());
    }
    l = alone;
  }
  // The world must equal the layout's GPU count; this also catches a missing launcher.
  s.require_world(l.gpus(), o.command + " --workload " + o.workload + " --cluster " + o.cluster +
                                (o.parallel.empty() ? "" : " --parallel " + o.parallel));
#ifdef TUTTI_EXEC_HAVE_CLUSTERS
  Cluster c = load_cluster(o.cluster);
  const int cluster_gpus = c.gpus();
  if (l.gpus() > cluster_gpus)
    throw InputError(o.cluster, "nodes", std::to_string(cluster_gpus) + " GPUs",
                     "at least the layout's " + std::to_string(l.gpus()) + " GPUs");
#endif
  Program p = expand_program(w, l);
  debug_fault(s.rank(), o.debug_die_rank, o.debug_hang_rank);
  exec::ReplayOptions ro;
  ro.iterations = o.iterations;
  ro.warmup = o.warmup;
  ro.check = !o.no_check;
  exec::ReplayResult r =
      o.device == "gpu" ? exec::replay_gpu(s, p, ro, &wd) : exec::replay_cpu(s, p, ro, &wd);
  nlohmann::json env = exec::environment_json(s, nullptr, o.device == "gpu");
  if (s.rank() != 0) return nullptr;
  nlohmann::json doc = measurements_document("tutti exec replay", env);
  nlohmann::json res;
  exec::to_json(res, r, p);
  doc["replay"] = {{"workload", o.workload}, {"cluster", o.cluster},   {"layout", to_string(l)},
                   {"scale_down", scaling},  {"overrides", overrides}, {"result", res}};
  return doc;
#else
  (void)s;
  (void)wd;
  (void)o;
  throw InputError(
      "tutti exec replay needs the workload and cluster loaders (issues 3 and 4), not in this "
      "build yet");
#endif
}

}  // namespace tutti::cli
