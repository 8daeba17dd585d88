// tutti serve: inference serving on a cluster (sim/serve): continuous batching, paged KV cache,
// latency percentiles, throughput, goodput and the facility view.
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "common.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/serve/simulator.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/sim/facility.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::cli {
namespace {

struct ServeSimulateOptions {
  std::string workload, cluster, config, calibration, facility, csv;
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
  if (g.json)
    emit_json(g, serve::to_json(r, f, o.requests));
  else
    emit(g, serve::to_text(r, f));
  return kOk;
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
  sub->add_flag("--requests", o->requests, "With --json: include every request's record");
  sub->callback([&g, o] { g.run = [&g, o] { return run_serve_simulate(g, *o); }; });
}

}  // namespace tutti::cli
