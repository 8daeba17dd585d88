// tutti serve: inference serving on a cluster (sim/serve): continuous batching, paged KV cache,
// latency percentiles, throughput, goodput and the facility view.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "exec_shared.hpp"
#include "tutti/core/error.hpp"
#include "tutti/exec/environment.hpp"
#include "tutti/exec/replay.hpp"
#include "tutti/exec/session.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/reports/serve_report.hpp"
#include "tutti/reports/writers.hpp"
#include "tutti/serve/plan.hpp"
#include "tutti/serve/simulator.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::cli {
namespace {

struct ServeSimulateOptions {
  std::string workload, cluster, config, calibration, facility, csv, html;
  bool requests = false;  ///< --requests: every request in the JSON output.
};

int run_serve_simulate(const Globals& g, const ServeSimulateOptions& o) {
  Workload w = load_workload(o.workload);
  Cluster c = load_cluster(o.cluster);
  serve::ServeConfig cfg = serve::load_serve_config(o.config, g.sets);
  const CalibrationProfile profile =
      o.calibration.empty() ? default_calibration() : load_calibration(o.calibration);
  FacilityOptions fo = parse_facility_flag(o.facility);
  serve::ServeResult r = serve::simulate_serving(w, cfg, sim_cluster(c), profile, g.seed);
  serve::ServeFacility f = serve::serve_facility(r, c, fo);
  if (!o.csv.empty()) {
    std::ofstream out(o.csv, std::ios::binary);
    if (!out) throw InputError(o.csv + ": cannot write file");
    out << serve::to_csv(r);
  }
  if (!o.html.empty()) {
    reports::Report rep = reports::build_serve_report(serve::to_json(r, f, true));
    rep.tool_version = std::string("tutti ") + TUTTI_VERSION;
    rep.command = "tutti";
    for (const std::string& kv : g.sets) rep.command += " --set " + shell_quote(kv);
    rep.command += " serve simulate -w " + shell_quote(o.workload) + " -c " +
                   shell_quote(o.cluster) + " --config " + shell_quote(o.config) + " --seed " +
                   std::to_string(g.seed) + " --html " + shell_quote(o.html);
    std::ofstream out(o.html, std::ios::binary);
    if (!out) throw InputError(o.html + ": cannot write file");
    out << reports::write_html(rep);
  }
  if (g.json)
    emit_json(g, serve::to_json(r, f, o.requests));
  else
    emit(g, serve::to_text(r, f));
  return kOk;
}

struct ServePlanCliOptions {
  std::string workload, config, calibration;
  std::vector<std::string> clusters, nodes;
  std::vector<int> batches;
  double attainment = 0.99;
  bool rent = false, no_disagg = false;
  int max_pp = 8;
};

int run_serve_plan(const Globals& g, const ServePlanCliOptions& o) {
  Workload w = load_workload(o.workload);
  serve::ServeConfig cfg = serve::load_serve_config(o.config, g.sets);
  const CalibrationProfile profile =
      o.calibration.empty() ? default_calibration() : load_calibration(o.calibration);
  std::vector<Cluster> clusters;
  std::vector<std::string> labels;
  for (const std::string& f : o.clusters) {
    clusters.push_back(load_cluster(f));
    labels.push_back(f);
    for (const std::string& n : o.nodes) {
      clusters.push_back(load_cluster(f, {"node=" + n}));
      labels.push_back(f + ":node=" + n);
    }
  }
  std::vector<serve::HardwareOption> hw;
  for (std::size_t i = 0; i < clusters.size(); ++i) hw.push_back({labels[i], &clusters[i]});
  serve::ServePlanOptions po;
  po.attainment = o.attainment;
  po.rent = o.rent;
  po.disaggregation = !o.no_disagg;
  po.max_pp = o.max_pp;
  if (!o.batches.empty()) po.max_batches = o.batches;
  serve::ServePlanResult r = serve::plan_serving(w, cfg, hw, profile, g.seed, po);
  if (g.json)
    emit_json(g, serve::to_json(r));
  else
    emit(g, serve::to_text(r));
  return r.best >= 0 ? kOk : kNo;
}

struct ServeReplayOptions {
  std::string workload, cluster, config, calibration, phase = "decode", timeout = "120s",
                                                      device = "cpu";
  int sequences = 8;
  std::int64_t context = 512;
  int iterations = 5, warmup = 2;
};

/// The batch of one replayed step: `n` decodes at context `ctx`, or `n` prompts of `ctx` tokens.
serve::BatchShape replay_batch(const ServeReplayOptions& o) {
  serve::BatchShape b;
  const double n = o.sequences, c = static_cast<double>(o.context);
  if (o.phase == "decode") {
    b.decodes = o.sequences;
    b.decode_context_tokens = n * c;
  } else {
    b.prefill_tokens = o.sequences * o.context;
    b.prefill_attn_pairs = n * c * (c + 1) / 2;
    b.prefill_context_tokens = n * c;
  }
  b.logits = o.sequences;
  return b;
}

int run_serve_replay(const Globals& g, const ServeReplayOptions& o) {
  return run_mpi(g, o.timeout, [&](exec::Session& s, exec::Watchdog& wd) {
    Workload w = load_workload(o.workload);
    Cluster c = load_cluster(o.cluster);
    serve::ServeConfig cfg = serve::load_serve_config(o.config, g.sets);
    const CalibrationProfile profile =
        o.calibration.empty() ? default_calibration() : load_calibration(o.calibration);
    serve::StepModel model(w, cfg.serving, sim_cluster(c), profile);
    const serve::BatchShape b = replay_batch(o);
    Program p = model.step_program(b);
    s.require_world(p.world, "tutti serve replay -w " + o.workload + " -c " + o.cluster +
                                 " --config " + o.config);
    const serve::StepTime predicted = model.time(b);
    exec::ReplayOptions ro;
    ro.iterations = o.iterations;
    ro.warmup = o.warmup;
    exec::ReplayResult r =
        o.device == "gpu" ? exec::replay_gpu(s, p, ro, &wd) : exec::replay_cpu(s, p, ro, &wd);
    nlohmann::json env = exec::environment_json(s, nullptr, o.device == "gpu");
    if (s.rank() != 0) return static_cast<int>(kOk);
    nlohmann::json doc = measurements_document("tutti serve replay", env);
    nlohmann::json res;
    exec::to_json(res, r, p);
    doc["replay"] = {
        {"workload", o.workload},
        {"cluster", o.cluster},
        {"layout", to_string(p.layout)},
        {"scale_down", nlohmann::json::object()},
        {"overrides", g.sets},
        {"serve",
         {{"config", o.config},
          {"phase", o.phase},
          {"sequences", o.sequences},
          {"context_tokens", o.context},
          {"tokens", b.tokens()},
          {"predicted_s", predicted.total_s},
          {"predicted_comm_s", predicted.comm_s},
          {"dtype", to_string(cfg.serving.dtype)},
          {"calibration", o.calibration.empty() ? std::string("default") : o.calibration}}},
        {"result", res}};
    const std::int64_t wrong = res["check"]["wrong_elements"].get<std::int64_t>();
    if (g.json || !g.output.empty()) emit_json(g, doc);
    if (!g.json) {
      std::string line = fmt::format(
          "serve replay: {} step of {} sequences x {} tokens on {} ranks ({}): measured median "
          "{:.3f} ms "
          "(min {:.3f}, max {:.3f}); the step model predicts {:.3f} ms on {}; {} communication ops "
          "checked, {} wrong elements\n",
          o.phase, o.sequences, o.context, r.world, to_string(p.layout), r.iteration_time_s * 1e3,
          r.iteration_min_s * 1e3, r.iteration_max_s * 1e3, predicted.total_s * 1e3, c.name,
          r.checked_ops, wrong);
      std::fputs(line.c_str(), g.output.empty() ? stdout : stderr);
    }
    if (wrong > 0) {
      std::fprintf(stderr, "tutti: error: collective results were wrong\n");
      return static_cast<int>(kInternal);
    }
    return static_cast<int>(kOk);
  });
}

}  // namespace

void setup_serve(CLI::App& app, Globals& g) {
  auto* serve =
      app.add_subcommand("serve", "Inference serving: simulate continuous batching on a cluster");
  serve->require_subcommand(1);
  auto o = std::make_shared<ServeSimulateOptions>();
  auto* sub = serve->add_subcommand(
      "simulate",
      "Simulate serving a model: continuous batching, paged KV cache, TTFT/TPOT percentiles, "
      "throughput, goodput, power and cost per token");
  sub->add_option("--workload,-w", o->workload,
                  "Model file (models/*.json; decoder-only transformer)")
      ->required();
  sub->add_option("--cluster,-c", o->cluster, "Cluster file (topologies/*.json)")->required();
  sub->add_option("--config", o->config,
                  "Serving configuration (schemas/serve.schema.json): traffic, serving, slo; --set "
                  "applies to it")
      ->required();
  sub->add_option("--calibration", o->calibration,
                  "Calibration profile (sim/calibration/default.json format)");
  sub->add_option(
      "--facility", o->facility,
      "Facility options: life=5,facility_life=15,maintenance=0.05,utilization=1,power_cap=700W");
  sub->add_option("--csv", o->csv, "Write one CSV row per request to this file");
  sub->add_option("--html", o->html, "Write a self-contained HTML report (charts) to this file");
  sub->add_flag("--requests", o->requests, "With --json: include every request's record");
  sub->callback([&g, o] { g.run = [&g, o] { return run_serve_simulate(g, *o); }; });

  auto p = std::make_shared<ServePlanCliOptions>();
  auto* plan = serve->add_subcommand(
      "plan",
      "Cheapest hardware and serving configuration meeting the SLOs of a load, with the Pareto "
      "frontier of cost vs p99 latency vs energy per token (exit 1 when nothing meets them)");
  plan->add_option("--workload,-w", p->workload, "Model file (models/*.json)")->required();
  plan->add_option("--config", p->config,
                   "Serving configuration whose traffic and slo are the load; --set applies to it")
      ->required();
  plan->add_option("--cluster,-c", p->clusters, "Hardware option: a cluster file (repeatable)")
      ->required();
  plan->add_option(
      "--node", p->nodes,
      "Also try each cluster with this node type (catalog id, e.g. dgx-b200; repeatable)");
  plan->add_option("--max-batch", p->batches, "max_batch values to try (default 32, 128, 256)");
  plan->add_option("--attainment", p->attainment,
                   "Share of requests that must meet every SLO (default 0.99)")
      ->check(CLI::Range(0.0, 1.0));
  plan->add_flag("--rent", p->rent, "Rank by the rented price per million tokens instead of owned");
  plan->add_flag("--no-disaggregation", p->no_disagg, "Do not try prefill/decode disaggregation");
  plan->add_option("--max-pp", p->max_pp,
                   "Largest pipeline degree tried when TP fills a node (pipelines span nodes; "
                   "default 8, 1: none)")
      ->check(CLI::Range(1, 1024));
  plan->add_option("--calibration", p->calibration, "Calibration profile");
  plan->callback([&g, p] { g.run = [&g, p] { return run_serve_plan(g, *p); }; });

  auto q = std::make_shared<ServeReplayOptions>();
  auto* rep = serve->add_subcommand(
      "replay",
      "Run one prefill or decode step of the serving configuration for real (the same GEMMs/GEMVs, "
      "attention, KV reads and TP/EP collectives) on CPU ranks over MPI, or on GPUs with NCCL and "
      "cuBLAS "
      "(--device gpu): mpirun -np TP tutti serve replay ...");
  rep->add_option("--workload,-w", q->workload, "Model file (models/*.json)")->required();
  rep->add_option("--cluster,-c", q->cluster,
                  "Cluster the step model predicts for (topologies/*.json)")
      ->required();
  rep->add_option("--config", q->config,
                  "Serving configuration (its serving section; --set applies to it)")
      ->required();
  rep->add_option("--phase", q->phase, "decode (one token per sequence) or prefill (whole prompts)")
      ->check(CLI::IsMember({"decode", "prefill"}));
  rep->add_option("--sequences", q->sequences, "Sequences in the step (default 8)")
      ->check(CLI::Range(1, 1 << 20));
  rep->add_option("--context", q->context,
                  "Decode: context tokens per sequence; prefill: prompt tokens (default 512)")
      ->check(CLI::Range(1, 1 << 24));
  rep->add_option("--iterations", q->iterations, "Timed iterations (median reported)")
      ->check(CLI::Range(1, 100000));
  rep->add_option("--warmup", q->warmup, "Untimed iterations")->check(CLI::Range(0, 100000));
  rep->add_option("--calibration", q->calibration,
                  "Calibration profile of the step model's prediction (e.g. from `tutti calibrate` "
                  "of an earlier replay)")
      ->check(CLI::ExistingFile);
  rep->add_option("--timeout", q->timeout, "Watchdog: abort when no rank progresses for this long");
  rep->add_option("--device", q->device,
                  "cpu (MPI + OpenBLAS) or gpu (NCCL + cuBLAS, one GPU per rank)")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();
  rep->callback([&g, q] { g.run = [&g, q] { return run_serve_replay(g, *q); }; });
}

}  // namespace tutti::cli
