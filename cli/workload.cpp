// tutti workload show: parameters, FLOPs, memory per GPU and the Program of a workload.
#include "tutti/models/workload.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/format.hpp"
#include "tutti/core/units.hpp"
#if __has_include("tutti/topologies/catalog.hpp")
#include "tutti/topologies/catalog.hpp"
#define TUTTI_HAVE_CATALOG 1
#endif

namespace tutti::cli {
namespace {

struct ShowOptions {
  std::string file;
  std::string parallel;
  int gpus = 0;
  std::string gpu;
  std::string hbm;
};

nlohmann::json layout_json(const Layout& l) {
  const char* sched = to_string(l.schedule);
  const char* rc = to_string(l.recompute);
  nlohmann::json j = {{"tp", l.tp},
                      {"pp", l.pp},
                      {"dp", l.dp},
                      {"cp", l.cp},
                      {"ep", l.ep},
                      {"vp", l.vp},
                      {"zero", l.zero},
                      {"fsdp", l.fsdp},
                      {"sequence_parallel", l.sequence_parallel},
                      {"tp_overlap", l.tp_overlap},
                      {"micro_batch", l.micro_batch},
                      {"schedule", sched},
                      {"recompute", rc},
                      {"gpus", l.gpus()}};
  if (l.recompute_modules != 0)
    j["recompute_modules"] = recompute_modules_string(l.recompute_modules);
  return j;
}

nlohmann::json memory_json(const MemoryBreakdown& m) {
  return {{"stage", m.stage},
          {"total_bytes", m.total_bytes},
          {"weights_bytes", m.weights_bytes},
          {"gradients_bytes", m.gradients_bytes},
          {"optimizer_bytes", m.optimizer_bytes},
          {"activations_bytes", m.activations_bytes},
          {"temporary_bytes", m.temporary_bytes},
          {"activations_per_layer_bytes", m.activations_per_layer_bytes},
          {"in_flight_microbatches", m.in_flight_microbatches},
          {"layers", m.layers}};
}

std::string gib(double b) {
  static constexpr Rung kGiBRung[] = {{kBelowAll, 1, kGiB, fixed(2), "GiB"}};
  return format_si(b, {kGiBRung});
}

int run_show(const Globals& g, const ShowOptions& o) {
  Workload w = load_workload(o.file, g.sets);
  Layout l = resolve_layout(w, o.parallel, o.gpus);
  double hbm = 0;
  std::string gpu_id;
  if (!o.hbm.empty()) {
    auto v = parse_quantity(o.hbm, Dim::Bytes);
    if (!v || *v <= 0)
      throw InputError("--hbm", "hbm", "\"" + o.hbm + "\"", dim_expectation(Dim::Bytes));
    hbm = *v;
  }
  if (!o.gpu.empty()) {
#ifdef TUTTI_HAVE_CATALOG
    const GpuSpec& spec = Catalog::builtin().gpu(o.gpu);
    gpu_id = spec.id;
    if (hbm <= 0) hbm = spec.hbm_bytes;
#else
    throw InputError("--gpu", "gpu", "\"" + o.gpu + "\"",
                     "--hbm SIZE: the hardware catalog (issue 4) is not in this build");
#endif
  }
  check_layout(w, l, hbm);
  Program p = expand_program(w, l);
  ProgramSummary s = summarize(p);
  MemoryBreakdown mem = memory_per_gpu(w, l);

  nlohmann::json j;
  j["workload"] = w.name;
  j["file"] = w.file;
  j["family"] = to_string(w.model.family);
  j["layout"] = layout_json(l);
  j["params"] = params(w);
  j["active_params"] = active_params(w);
  j["tokens_per_iteration"] = p.tokens_per_iteration;
  j["samples_per_iteration"] = p.samples_per_iteration;
  j["microbatches"] = microbatches(w, l);
  j["model_flops_per_iteration"] = p.model_flops_per_iteration;
  j["hardware_flops_per_iteration"] = p.hardware_flops_per_iteration;
  j["megatron_flops_per_iteration"] =
      megatron_flops_per_iteration(w, l.recompute, l.recompute_modules);
  j["flops_per_token"] = model_flops_per_token(w);
  j["flops_per_token_unit"] = w.model.token_model() ? "token" : "sample";
  double ttt = tokens_to_train(w);
  j["tokens_to_train"] = ttt;
  double per_iter = w.model.token_model() ? p.tokens_per_iteration : p.samples_per_iteration;
  j["iterations_to_train"] = ttt > 0 ? ttt / per_iter : 0.0;
  j["model_flops_to_train"] = ttt > 0 ? ttt / per_iter * p.model_flops_per_iteration : 0.0;
  j["memory_per_gpu"] = memory_json(mem);
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& m : memory_per_stage(w, l)) stages.push_back(m.total_bytes);
  j["memory_total_bytes_per_stage"] = stages;
  if (!gpu_id.empty()) j["gpu"] = gpu_id;
  if (hbm > 0) j["hbm_bytes"] = hbm;
  nlohmann::json prog;
  prog["classes"] = p.classes.size();
  prog["world"] = p.world;
  prog["ops"] = s.ops;
  prog["names"] = p.names.size();
  nlohmann::json kinds;
  for (OpKind k : enum_values<OpKind>()) kinds[to_string(k)] = s.ops_by_kind[k];
  prog["ops_by_kind"] = kinds;
  prog["p2p_bytes_all_ranks"] = s.p2p_bytes_all_ranks;
  nlohmann::json colls = nlohmann::json::array();
  for (const auto& c : s.collectives)
    colls.push_back({{"collective", to_string(c.coll)},
                     {"group", to_string(c.group)},
                     {"group_size", c.group_size},
                     {"ops", c.ops},
                     {"bytes_per_rank_max", c.bytes_per_rank_max},
                     {"bytes_all_ranks", c.bytes_all_ranks}});
  prog["collectives"] = colls;
  j["program"] = prog;
  if (g.json) {
    emit_json(g, j);
    return kOk;
  }
  std::string t;
  t += fmt::format("workload   {} ({}, {})\n", w.name, to_string(w.model.family), w.file);
  t += fmt::format("layout     {} ({} GPUs)\n", to_string(l), l.gpus());
  t += fmt::format("params     {:.4g} total, {:.4g} active\n", params(w), active_params(w));
  t += fmt::format(
      "FLOPs      {:.4g} model / iteration, {:.4g} hardware / iteration, {:.4g} per {}\n",
      p.model_flops_per_iteration, p.hardware_flops_per_iteration, model_flops_per_token(w),
      w.model.token_model() ? "token" : "sample");
  if (ttt > 0)
    t += fmt::format("training   {:.4g} {} = {:.4g} iterations, {:.4g} model FLOPs\n", ttt,
                     w.model.token_model() ? "tokens" : "samples", ttt / per_iter,
                     ttt / per_iter * p.model_flops_per_iteration);
  t += fmt::format("memory     stage {} (worst): {} total\n", mem.stage, gib(mem.total_bytes));
  t += fmt::format("             weights     {:>12}\n", gib(mem.weights_bytes));
  t += fmt::format("             gradients   {:>12}\n", gib(mem.gradients_bytes));
  t += fmt::format("             optimizer   {:>12}\n", gib(mem.optimizer_bytes));
  t +=
      fmt::format("             activations {:>12}  ({} layers x {:.3g} micro-batches in flight)\n",
                  gib(mem.activations_bytes), mem.layers, mem.in_flight_microbatches);
  t += fmt::format("             temporary   {:>12}\n", gib(mem.temporary_bytes));
  if (hbm > 0)
    t += fmt::format("             fits in     {:>12} of HBM{}\n", gib(hbm),
                     gpu_id.empty() ? "" : " (" + gpu_id + ")");
  t += fmt::format("program    {} classes, {} ops (", p.classes.size(), s.ops);
  for (OpKind k : enum_values<OpKind>())
    t += fmt::format("{}{} {}", k != OpKind{} ? ", " : "", s.ops_by_kind[k], to_string(k));
  t += ")\n";
  t += fmt::format("  {:<15} {:<6} {:>6} {:>8} {:>16} {:>16}\n", "collective", "group", "size",
                   "ops", "max GiB/rank", "total GiB");
  for (const auto& c : s.collectives)
    t += fmt::format("  {:<15} {:<6} {:>6} {:>8} {:>16.3f} {:>16.1f}\n", to_string(c.coll),
                     to_string(c.group), c.group_size, c.ops, c.bytes_per_rank_max / kGiB,
                     c.bytes_all_ranks / kGiB);
  if (s.p2p_bytes_all_ranks > 0)
    t += fmt::format("  {:<15} {:<6} {:>6} {:>8} {:>16} {:>16.1f}\n", "send/recv", "pp", 2,
                     s.ops_by_kind[OpKind::Send], "", s.p2p_bytes_all_ranks / kGiB);
  emit(g, t);
  return kOk;
}

}  // namespace

void setup_workload(CLI::App& app, Globals& g) {
  auto* sub =
      app.add_subcommand("workload", "Describe a workload: parameters, FLOPs, memory, Program");
  sub->require_subcommand(1);
  auto opts = std::make_shared<ShowOptions>();
  auto* show =
      sub->add_subcommand("show", "Parameters, FLOPs, memory per GPU and Program summary of FILE");
  show->add_option("file", opts->file, "Workload JSON file (models/*.json)")->required();
  show->add_option("--parallel", opts->parallel,
                   "Layout over the file's: tp=8,pp=4,dp=2,cp=1,ep=1,vp=2,zero=1,mb=1,sp=1,fsdp=0,"
                   "shard_group=N (hybrid sharding, 0 = all dp ranks),reshard=0|1 (zero=3),"
                   "recompute=none|selective|full,recompute_modules=layernorm+moe (Megatron "
                   "--recompute-modules, names joined by +),schedule=1f1b|interleaved|gpipe");
  show->add_option("--gpus", opts->gpus,
                   "GPU count; dp = gpus / (tp*pp*cp) unless --parallel names dp")
      ->check(CLI::Range(1, 1 << 26));
  show->add_option("--gpu", opts->gpu, "GPU id from the hardware catalog (its HBM bounds memory)");
  show->add_option("--hbm", opts->hbm,
                   "HBM per GPU, e.g. 80GiB (checks that the layout fits; overrides --gpu's)");
  show->callback([&g, opts] { g.run = [&g, opts] { return run_show(g, *opts); }; });
}

}  // namespace tutti::cli
