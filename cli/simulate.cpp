// tutti simulate: simulate a training iteration and the whole run on a cluster.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common.hpp"
#include "simulate.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/sim/facility.hpp"
#include "tutti/sim/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::cli {
namespace {

struct SimulateOptions {
  std::string workload, cluster, parallel, engine = "native", calibration, trace;
  std::string facility;  ///< --facility KEY=VALUE,... (sim/include/tutti/sim/facility.hpp)
  double compute_slowdown = 1.0;
};

std::string seconds(double s) {
  if (s >= 86400 * 2) return fmt::format("{:.1f} days", s / 86400);
  if (s >= 3600) return fmt::format("{:.2f} h", s / 3600);
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} us", s * 1e6);
}

std::string table(const Workload& w, const Cluster& c, const Layout& l, const SimResult& r) {
  std::string s;
  s += fmt::format("workload   {} on {} ({} GPUs, {})\n", w.name, c.name, l.gpus(), c.gpu.name);
  s += fmt::format("layout     {}\n", to_string(l));
  s += fmt::format("engine     {}\n\n", r.engine);  // wall time goes to stderr: stdout is deterministic
  s += fmt::format("iteration time       {}\n", seconds(r.iteration_time_s));
  if (r.tokens_per_s_per_gpu > 0) s += fmt::format("tokens/s per GPU     {:.1f}\n", r.tokens_per_s_per_gpu);
  s += fmt::format("samples/s            {:.2f}\n", r.samples_per_s);
  s += fmt::format("TFLOP/s per GPU      {:.1f}\n", r.tflops_per_gpu);
  s += fmt::format("MFU                  {:.1f}%   (HFU {:.1f}%)\n", 100 * r.mfu, 100 * r.hfu);
  s += fmt::format("memory per GPU       {:.1f} GiB of {:.0f} GiB\n", r.memory_per_gpu_bytes / kGiB,
                   c.gpu.hbm_bytes / kGiB);
  if (r.time_to_train_s > 0)
    s += fmt::format("time to train        {}  ({:.0f} iterations, before failures)\n",
                     seconds(r.time_to_train_s), r.iterations);
  const double it = r.iteration_time_s > 0 ? r.iteration_time_s : 1;
  s += "\nbreakdown (critical pipeline stage)\n";
  s += fmt::format("  compute            {:>12}  {:5.1f}%\n", seconds(r.breakdown.compute_s), 100 * r.breakdown.compute_s / it);
  for (GroupDim d : enum_values<GroupDim>())
    if (r.breakdown.exposed_comm_s[d] > 0)
      s += fmt::format("  exposed comm {:<6}{:>12}  {:5.1f}%\n", d == GroupDim::DPxCP ? "dp x cp" : to_string(d),
                       seconds(r.breakdown.exposed_comm_s[d]), 100 * r.breakdown.exposed_comm_s[d] / it);
  s += fmt::format("  pipeline bubble    {:>12}  {:5.1f}%\n", seconds(r.breakdown.bubble_s), 100 * r.breakdown.bubble_s / it);
  s += fmt::format("  other              {:>12}  {:5.1f}%\n", seconds(r.breakdown.other_s), 100 * r.breakdown.other_s / it);
  if (!r.bottleneck_links.empty()) {
    s += "\nbusiest links\n";
    for (std::size_t i = 0; i < r.bottleneck_links.size() && i < 5; ++i) {
      const LinkUse& u = r.bottleneck_links[i];
      s += fmt::format("  {:<28} {:<11} {:5.1f}%  {:.2f} GB/iteration\n", u.name, to_string(u.tier),
                       100 * u.utilization, u.bytes / 1e9);
    }
  }
  return s;
}

int run_simulate(const Globals& g, const SimulateOptions& o) {
  if (o.engine != "native" && o.engine != "analytic" && o.engine != "simgrid")
    throw InputError("--engine", "engine", "\"" + o.engine + "\"", "native, analytic or simgrid");
  Workload w = load_workload(o.workload);
  Cluster c = load_cluster(o.cluster, g.sets);
  Layout l = resolve_layout(w, o.parallel, c.gpus());
  SimOptions so;
  so.engine = o.engine;
  so.calibration = o.calibration;
  so.trace_path = o.trace;
  so.compute_slowdown = o.compute_slowdown;
  so.seed = g.seed;
  SimResult r;
  FacilityResult fr;
  nlohmann::json j = simulation_document(w, c, l, so, &r, o.facility, &fr);
  if (g.json) {
    emit_json(g, j);
  } else {
    std::string facility = "\nfacility\n";
    for (const auto& line : facility_table_lines(fr)) facility += "  " + line + "\n";
    emit(g, table(w, c, l, r) + facility);
    note(g, fmt::format("simulated in {:.3f} s wall ({} engine)", r.wall_s, r.engine));
  }
  if (!o.trace.empty()) note(g, "trace written to " + o.trace);
  return kOk;
}

}  // namespace

nlohmann::json simulation_document(const Workload& w, const Cluster& c, const Layout& l,
                                   const SimOptions& options, SimResult* result,
                                   const std::string& facility_flag, FacilityResult* facility) {
  SimResult r = options.engine == "simgrid" ? simulate_simgrid(w, c, l, options) : simulate(w, c, l, options);
  FacilityOptions fo = parse_facility_flag(facility_flag);
  fo.seed = options.seed;
  FacilityResult fr = facility_for_run(w, c, l, options, r, fo);
  nlohmann::json j;
  to_json(j, r);
  j["workload"] = w.name;
  j["cluster"] = c.name;
  j["gpus"] = l.gpus();
  j["layout"] = to_string(l);
  j["calibration"] = options.calibration.empty() ? "default" : options.calibration;
  j["facility"] = facility_to_json(fr);
  if (result) *result = std::move(r);
  if (facility) *facility = std::move(fr);
  return j;
}

void setup_simulate(CLI::App& app, Globals& g) {
  auto o = std::make_shared<SimulateOptions>();
  auto* sub = app.add_subcommand("simulate", "Simulate a training iteration and the whole run on a cluster");
  sub->add_option("--workload,-w", o->workload, "Workload file (models/*.json)")->required();
  sub->add_option("--cluster,-c", o->cluster, "Cluster file (topologies/*.json); --set applies to it")->required();
  sub->add_option("--parallel,-p", o->parallel, "Layout on top of the workload's: tp=8,pp=4,vp=2,mb=1,zero=0..3,shard_group=N,reshard=0|1,... "
                  "(keys: tutti workload show --help)");
  sub->add_option("--engine", o->engine, "native (flow-level events), analytic (closed forms) or simgrid")
      ->check(CLI::IsMember({"native", "analytic", "simgrid"}));
  sub->add_option("--calibration", o->calibration, "Calibration profile (sim/calibration/default.json format)");
  sub->add_option("--trace", o->trace, "Write a Chrome/Perfetto trace (one track per stream per stage)");
  sub->add_option("--facility", o->facility,
                  "Facility options: life=5,facility_life=15,maintenance=0.05,utilization=1,"
                  "power_cap=700W,min_clock=0.2,profile=llama3,restart=10min,interval=young,trials=1000");
  sub->add_option("--compute-slowdown", o->compute_slowdown, "Multiply every compute op (>= 1, e.g. thermal throttling)")
      ->check(CLI::Range(1.0, 1e6));
  sub->callback([&g, o] { g.run = [&g, o] { return run_simulate(g, *o); }; });
}

}  // namespace tutti::cli
