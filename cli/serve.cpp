// tutti serve: inference serving on a cluster (sim/serve): continuous batching, paged KV cache,
// latency percentiles, throughput, goodput and the facility view.
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "common.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/reports/serve_report.hpp"
#include "tutti/reports/writers.hpp"
#include "tutti/serve/plan.hpp"
#include "tutti/serve/simulator.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/sim/facility.hpp"
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
  const CalibrationProfile profile = o.calibration.empty() ? default_calibration() : load_calibration(o.calibration);
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
    rep.command += " serve simulate -w " + shell_quote(o.workload) + " -c " + shell_quote(o.cluster) +
                  " --config " + shell_quote(o.config) + " --seed " + std::to_string(g.seed) + " --html " +
                  shell_quote(o.html);
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
};

int run_serve_plan(const Globals& g, const ServePlanCliOptions& o) {
  Workload w = load_workload(o.workload);
  serve::ServeConfig cfg = serve::load_serve_config(o.config, g.sets);
  const CalibrationProfile profile = o.calibration.empty() ? default_calibration() : load_calibration(o.calibration);
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
  if (!o.batches.empty()) po.max_batches = o.batches;
  serve::ServePlanResult r = serve::plan_serving(w, cfg, hw, profile, g.seed, po);
  if (g.json)
    emit_json(g, serve::to_json(r));
  else
    emit(g, serve::to_text(r));
  return r.best >= 0 ? kOk : kNo;
}

}  // namespace

void setup_serve(CLI::App& app, Globals& g) {
  auto* serve = app.add_subcommand("serve", "Inference serving: simulate continuous batching on a cluster");
  serve->require_subcommand(1);
  auto o = std::make_shared<ServeSimulateOptions>();
  auto* sub = serve->add_subcommand(
      "simulate",
      "Simulate serving a model: continuous batching, paged KV cache, TTFT/TPOT percentiles, "
      "throughput, goodput, power and cost per token");
  sub->add_option("--workload,-w", o->workload, "Model file (models/*.json; decoder-only transformer)")->required();
  sub->add_option("--cluster,-c", o->cluster, "Cluster file (topologies/*.json)")->required();
  sub->add_option("--config", o->config,
                  "Serving configuration (schemas/serve.schema.json): traffic, serving, slo; --set applies to it")
      ->required();
  sub->add_option("--calibration", o->calibration, "Calibration profile (sim/calibration/default.json format)");
  sub->add_option("--facility", o->facility,
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
  plan->add_option("--config", p->config, "Serving configuration whose traffic and slo are the load; --set applies to it")
      ->required();
  plan->add_option("--cluster,-c", p->clusters, "Hardware option: a cluster file (repeatable)")->required();
  plan->add_option("--node", p->nodes, "Also try each cluster with this node type (catalog id, e.g. dgx-b200; repeatable)");
  plan->add_option("--max-batch", p->batches, "max_batch values to try (default 32, 128, 256)");
  plan->add_option("--attainment", p->attainment, "Share of requests that must meet every SLO (default 0.99)")
      ->check(CLI::Range(0.0, 1.0));
  plan->add_flag("--rent", p->rent, "Rank by the rented price per million tokens instead of owned");
  plan->add_flag("--no-disaggregation", p->no_disagg, "Do not try prefill/decode disaggregation");
  plan->add_option("--calibration", p->calibration, "Calibration profile");
  plan->callback([&g, p] { g.run = [&g, p] { return run_serve_plan(g, *p); }; });
}

}  // namespace tutti::cli
