// tutti simulate: simulate a training iteration and the whole run on a cluster.
#include "simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/format.hpp"
#include "tutti/core/progress.hpp"
#include "tutti/core/units.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/sim/trace.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"
#include "tutti/topologies/failures.hpp"
#include "tutti/topologies/prices.hpp"

namespace tutti::cli {
namespace {

struct SimulateOptions {
  std::string workload, cluster, parallel, engine = "native", calibration, trace;
  std::string
      facility;  ///< --facility KEY=VALUE,... (sim/facility/include/tutti/facility/facility.hpp)
  double compute_slowdown = 1.0;
  int gpus = 0;        ///< --gpus: the job's GPUs (0 = as many as fit the cluster and the batch)
  std::string prices;  ///< --prices FILE (schemas/prices.schema.json)
  std::string tokens;  ///< --tokens: tokens to train instead of the workload's ("2T")
  long long global_batch = 0;  ///< --global-batch: sequences per step instead of the workload's
  std::string trace_ranks, trace_ops, trace_iterations;  ///< --trace-* filters (sim/trace.hpp)
  bool trace_force = false;                              ///< --trace-force: over the size limit
  std::vector<std::string> fail;  ///< --fail link=ID / switch=NAME (repeatable)
  std::string fail_rate;          ///< --fail-rate links=P,switches=P (drawn with --seed)
  std::string replicas;           ///< --replicas grouped|strict|each (engine.hpp ReplicaMode)
};

// --replicas: parsed before anything is loaded; the native engine's only.
ReplicaMode replica_mode(const SimulateOptions& o) {
  if (o.replicas.empty()) return ReplicaMode::Grouped;
  const auto m = parse_enum<ReplicaMode>(o.replicas);
  if (!m)
    throw InputError("--replicas", "", "\"" + o.replicas + "\"", enum_names<ReplicaMode>(", "));
  if (*m != ReplicaMode::Grouped && o.engine != "native")
    throw InputError("--replicas", "", o.replicas + " with --engine " + o.engine,
                     "--engine native (the engine with replica timelines), or no --replicas");
  return *m;
}

// --trace and its filters: checked before anything is loaded or simulated.
TraceOptions trace_options(const Globals& g, const SimulateOptions& o) {
  TraceOptions t;
  const bool filtered = !o.trace_ranks.empty() || !o.trace_ops.empty() ||
                        !o.trace_iterations.empty() || o.trace_force;
  if (o.trace.empty()) {
    if (filtered)
      throw InputError(!o.trace_ranks.empty()        ? "--trace-ranks"
                       : !o.trace_ops.empty()        ? "--trace-ops"
                       : !o.trace_iterations.empty() ? "--trace-iterations"
                                                     : "--trace-force",
                       "", "no --trace FILE", "--trace FILE with the trace filters");
    return t;
  }
  if (o.engine != "native")
    throw InputError("--trace", "", "--engine " + o.engine,
                     "--engine native (the engine that writes traces)");
  t.path = o.trace;
  t.filter = parse_trace_filter(o.trace_ranks, o.trace_ops, o.trace_iterations);
  t.force = o.trace_force;
  t.note = [&g](const std::string& line) { note(g, line); };
  return t;
}

// --tokens and --global-batch on top of the workload file (through its strict parser for the
// batch); returns the overrides applied, for the output.
nlohmann::json workload_overrides(Workload& w, const SimulateOptions& o) {
  nlohmann::json j = nlohmann::json::object();
  if (o.global_batch > 0) {
    j["global_batch"] = {{"value", o.global_batch}, {"workload", w.training.global_batch}};
    w = load_workload(o.workload, {"training.global_batch=" + std::to_string(o.global_batch)});
  }
  if (!o.tokens.empty()) {
    auto t = parse_quantity(o.tokens, Dim::Count);
    if (!t || *t < 1)
      throw InputError("--tokens", "tokens", "\"" + o.tokens + "\"",
                       "a token count such as \"2T\" or \"15.6T\"");
    if (!w.model.token_model())
      throw InputError(
          "--tokens", "tokens", "\"" + o.tokens + "\"",
          "a token model (" + w.name + " counts samples: set training.samples_to_train)");
    j["tokens_to_train"] = {{"value", *t}, {"workload", tokens_to_train(w)}};
    w.training.tokens_to_train = *t;
    w.training.samples_to_train = *t / w.training.seq_len;
  }
  return j;
}

std::string seconds(double s) {
  static constexpr Rung kTime[] = {{86400 * 2, 1, 86400, fixed(1), "days"},
                                   {3600, 1, 3600, fixed(2), "h"},
                                   {1, 1, 1, fixed(3), "s"},
                                   {1e-3, 1e3, 1, fixed(3), "ms"},
                                   {kBelowAll, 1e6, 1, fixed(3), "us"}};
  return format_si(s, {.rungs = kTime, .magnitude = false});
}

std::string placement_line(const Cluster& c, int job_gpus) {
  return fmt::format("placement  {}", describe_placement(c, job_gpus));
}

const char* moe_dispatch_name(const Workload& w) {
  return to_string(moe_dispatch_dtype(w));
}

// Routing other than ECMP and failures, when there are any (ECMP on a healthy fabric: nothing).
std::string network_lines(const Cluster& c) {
  std::string s;
  if (splits_flows(c.fabric.routing))
    s += fmt::format("routing    {} (each flow split evenly over its equal-cost paths{})\n",
                     to_string(c.fabric.routing),
                     c.transport.multipath && c.fabric.routing == Routing::Spray
                         ? fmt::format("; the default of transport {}", c.transport.kind)
                         : "");
  else if (c.fabric.routing == Routing::DModK)
    s += "routing    dmodk (by destination)\n";
  const AppliedFailures& f = c.failures;
  if (!f.empty()) {
    auto list = [](const std::vector<std::string>& v) {
      std::string t;
      for (std::size_t i = 0; i < v.size() && i < 8; ++i) t += (i ? ", " : "") + v[i];
      if (v.size() > 8) t += fmt::format(", ... ({} more)", v.size() - 8);
      return t;
    };
    s += fmt::format("failures   {} cable{} down{}{}, {} switch{} down{}{}  ({})\n",
                     f.cables.size(), f.cables.size() == 1 ? "" : "s", f.cables.empty() ? "" : ": ",
                     list(f.cables), f.switches.size(), f.switches.size() == 1 ? "" : "es",
                     f.switches.empty() ? "" : ": ", list(f.switches), f.request);
  }
  return s;
}

std::string table(const Workload& w, const Cluster& c, const Layout& l, const SimResult& r,
                  const FacilityResult& fr) {
  const LivedIteration v = lived_iteration(r, fr);
  const bool fac = v.fac;
  const double T_sim = v.T_sim, T_thr = v.T_thr, T_stall = v.T_stall, T = v.T, k = v.k;
  const double n = r.iterations;
  std::string s;
  s += fmt::format("workload   {} on {} ({} GPUs, {})\n", w.name, c.name, l.gpus(), c.gpu.name);
  s += fmt::format("layout     {}\n", to_string(l));
  if (l.gpus() < c.gpus()) s += placement_line(c, l.gpus()) + "\n";
  s += fmt::format("engine     {}\n",
                   r.engine);  // wall time goes to stderr: stdout is deterministic
  s += network_lines(c) + "\n";
  if (fac && T > T_sim * (1 + 1e-9))
    s +=
        fmt::format("iteration time       {}  (simulated {} + throttle, data stall and failures)\n",
                    seconds(T), seconds(T_sim));
  else
    s += fmt::format("iteration time       {}\n", seconds(T));
  if (r.tokens_per_s_per_gpu > 0)
    s += fmt::format("tokens/s per GPU     {:.1f}\n", r.tokens_per_s_per_gpu * k);
  s += fmt::format("samples/s            {:.2f}\n", r.samples_per_s * k);
  s += fmt::format("TFLOP/s per GPU      {:.1f}\n", r.tflops_per_gpu * k);
  s += fmt::format("MFU                  {:.1f}%   (HFU {:.1f}%)\n", 100 * r.mfu * k,
                   100 * r.hfu * k);
  s += fmt::format("memory per GPU       {:.1f} GiB of {:.0f} GiB\n", r.memory_per_gpu_bytes / kGiB,
                   c.gpu.hbm_bytes / kGiB);
  if (r.time_to_train_s > 0) {
    if (fac)
      s += fmt::format(
          "time to train        {}  ({:.0f} iterations; throttling, stalls and failures "
          "included)\n",
          seconds(n * T), n);
    else
      s += fmt::format("time to train        {}  ({:.0f} iterations, before failures)\n",
                       seconds(r.time_to_train_s), r.iterations);
  }
  const double it = T > 0 ? T : 1;
  s += "\nbreakdown (critical pipeline stage; rows sum to the iteration time)\n";
  s += fmt::format("  compute            {:>12}  {:5.1f}%\n", seconds(r.breakdown.compute_s),
                   100 * r.breakdown.compute_s / it);
  for (GroupDim d : enum_values<GroupDim>())
    if (r.breakdown.exposed_comm_s[d] > 0)
      s += fmt::format(
          "  exposed comm {:<6}{:>12}  {:5.1f}%\n", d == GroupDim::DPxCP ? "dp x cp" : to_string(d),
          seconds(r.breakdown.exposed_comm_s[d]), 100 * r.breakdown.exposed_comm_s[d] / it);
  s += fmt::format("  pipeline bubble    {:>12}  {:5.1f}%\n", seconds(r.breakdown.bubble_s),
                   100 * r.breakdown.bubble_s / it);
  s += fmt::format("  other              {:>12}  {:5.1f}%\n", seconds(r.breakdown.other_s),
                   100 * r.breakdown.other_s / it);
  if (fac) {
    s += fmt::format("  thermal throttle   {:>12}  {:5.1f}%\n", seconds(T_thr - T_sim),
                     100 * (T_thr - T_sim) / it);
    s += fmt::format("  data stall         {:>12}  {:5.1f}%\n", seconds(T_stall - T_thr),
                     100 * (T_stall - T_thr) / it);
    s += fmt::format("  failures, ckpt     {:>12}  {:5.1f}%\n", seconds(T - T_stall),
                     100 * (T - T_stall) / it);
  }
  // Bottleneck: the largest row.
  {
    std::pair<double, std::string> top{r.breakdown.compute_s, "compute"};
    for (GroupDim d : enum_values<GroupDim>())
      top = std::max(
          top, {r.breakdown.exposed_comm_s[d],
                std::string("exposed comm ") + (d == GroupDim::DPxCP ? "dp x cp" : to_string(d))});
    top = std::max(top, {r.breakdown.bubble_s, std::string("pipeline bubble")});
    if (fac) {
      top = std::max(top, {T_thr - T_sim, std::string("thermal throttle")});
      top = std::max(top, {T_stall - T_thr, std::string("data stall (storage)")});
      top = std::max(top, {T - T_stall, std::string("failures and checkpoints")});
    }
    s += fmt::format("  bottleneck         {}\n", top.second);
  }
  double moe = 0;
  for (double x : r.breakdown.moe_s) moe += x;
  if (moe > 0) {
    // Labels in MoePart order (None first, not printed).
    static constexpr const char* kParts[] = {
        "", "router + top-k", "token permute", "expert GEMMs", "shared experts", "all-to-all"};
    static_assert(std::size(kParts) == enum_count<MoePart>);
    s += "\nMoE layers (busy time per iteration on the stage with the most MoE work)\n";
    for (MoePart p : enum_values<MoePart>())
      if (p != MoePart::None)
        s += fmt::format("  {:<18} {:>12}  {:5.1f}%\n", kParts[enum_index(p)],
                         seconds(r.breakdown.moe_s[p]), 100 * r.breakdown.moe_s[p] / it);
    const auto& t = w.model.tf;
    s += fmt::format(
        "  assumptions: load imbalance {:.2f} ({}), {}, dispatch {}{}\n", t.moe_imbalance,
        t.moe_imbalance_set ? std::string("stated")
                            : fmt::format("default: {} routing", to_string(t.moe_balancing)),
        t.moe_capacity_factor > 0 ? fmt::format("capacity factor {:.2f}", t.moe_capacity_factor)
                                  : std::string("dropless"),
        moe_dispatch_name(w),
        t.moe_max_nodes > 0
            ? fmt::format(", at most {} nodes per token (de-duplicated)", t.moe_max_nodes)
            : std::string());
  }
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
  TraceOptions trace = trace_options(g, o);
  const ReplicaMode replicas = replica_mode(o);
  Workload w = load_workload(o.workload);
  const nlohmann::json overrides = workload_overrides(w, o);
  Cluster c = load_cluster(o.cluster, g.sets);
  if (!o.prices.empty()) apply_prices(c, load_prices(o.prices));
  {
    FailureRequest fr;
    fr.items = o.fail;
    if (!o.fail_rate.empty()) parse_fail_rate(o.fail_rate, fr);
    fr.seed = g.seed;
    apply_failures(c, fr);
  }
  Layout l;
  std::string fit_note;
  if (o.gpus > 0) {
    l = resolve_layout(w, o.parallel, o.gpus);
  } else {
    try {
      l = fit_layout(w, o.parallel, c.gpus(), &fit_note);
    } catch (const InputError& e) {
      // The GPU count came from the cluster file, not from a --gpus flag: say so.
      if (e.file() == "--gpus")
        throw InputError(o.cluster, "nodes", e.found() + " GPUs", e.expected());
      if (e.file() == "--parallel") throw;  // the flag's own error: the cluster has no part in it
      throw InputError(fmt::format("{} ({} GPUs): {}", o.cluster, c.gpus(), e.what()));
    }
  }
  if (!fit_note.empty()) note(g, fit_note);
  SimOptions so;
  so.engine = o.engine;
  so.calibration = o.calibration;
  so.trace = std::move(trace);
  so.compute_slowdown = o.compute_slowdown;
  so.seed = g.seed;
  so.replicas = replicas;
  SimResult r;
  FacilityResult fr;
  nlohmann::json j = to_json(run_simulation(w, c, l, so, &r, o.facility, &fr, g.verbosity >= 0));
  if (!overrides.empty()) j["overrides"] = overrides;
  if (g.json) {
    emit_json(g, j);
  } else {
    std::string over;
    if (overrides.contains("global_batch"))
      over += fmt::format("override   global batch {} (workload file: {})\n", o.global_batch,
                          overrides["global_batch"]["workload"].get<long long>());
    if (overrides.contains("tokens_to_train"))
      over += fmt::format("override   tokens to train {:.4g} (workload file: {:.4g})\n",
                          overrides["tokens_to_train"]["value"].get<double>(),
                          overrides["tokens_to_train"]["workload"].get<double>());
    std::string facility = "\nfacility\n";
    for (const auto& line : facility_table_lines(fr)) facility += "  " + line + "\n";
    emit(g, over + table(w, c, l, r, fr) + facility);
  }
  const std::string defaults = calibration_defaults_line(
      c.gpu.id, calibration_defaults(calibration_for(o.calibration), c.gpu));
  if (!defaults.empty()) note(g, defaults);
  for (const std::string& a : r.approximations) note(g, "approximation: " + a);
  // Wall time is not a result: stderr only, so the JSON on stdout is byte-identical across runs.
  note(g, fmt::format("simulated in {:.3f} s wall ({} engine)", r.wall_s, r.engine));
  if (!o.trace.empty()) note(g, "trace written to " + o.trace);
  return kOk;
}

}  // namespace

SimulationDocument run_simulation(const Workload& w, const Cluster& c, const Layout& l,
                                  const SimOptions& options, SimResult* result,
                                  const std::string& facility_flag, FacilityResult* facility,
                                  bool progress) {
  SimResult r;
  if (options.engine == "simgrid") {
    ProgressBar bar("simgrid: ops", progress);
    SimOptions so = options;
    so.progress = bar.callback();
    r = simulate_simgrid(w, c, l, so);
  } else {
    r = simulate(w, c, l, options);
  }
  FacilityOptions fo = parse_facility_flag(facility_flag);
  fo.seed = options.seed;
  // A bar on stderr (stdout stays deterministic) once the cooling fixed point passes 1 s.
  ProgressBar cooling("cooling fixed point: re-timings", progress);
  fo.progress = cooling.callback();
  FacilityResult fr = facility_for_run(w, c, l, options, r, fo);
  cooling.finish();
  SimulationDocument d = make_simulation_document(w, c, l, options, r, fr);
  if (result) *result = std::move(r);
  if (facility) *facility = std::move(fr);
  return d;
}

void setup_simulate(CLI::App& app, Globals& g) {
  auto o = std::make_shared<SimulateOptions>();
  auto* sub = app.add_subcommand("simulate",
                                 "Simulate a training iteration and the whole run on a cluster");
  sub->add_option("--workload,-w", o->workload, "Workload file (models/*.json)")->required();
  sub->add_option("--cluster,-c", o->cluster,
                  "Cluster file (topologies/*.json); --set applies to it")
      ->required();
  sub->add_option("--parallel,-p", o->parallel,
                  "Layout on top of the workload's: "
                  "tp=8,pp=4,vp=2,mb=1,zero=0..3,shard_group=N,reshard=0|1,... "
                  "(keys: tutti workload show --help)");
  sub->add_option("--engine", o->engine,
                  "native (flow-level events), analytic (closed forms) or simgrid")
      ->check(CLI::IsMember({"native", "analytic", "simgrid"}));
  sub->add_option("--calibration", o->calibration,
                  "Calibration profile (sim/calibration/default.json format)");
  sub->add_option(
      "--trace", o->trace,
      "Write a Chrome/Perfetto trace (native engine): one process per rank, one track per stream, "
      "sends and receives on their own tracks; refused above 100 MB (estimate on stderr)");
  sub->add_option(
      "--trace-ranks", o->trace_ranks,
      "Ranks to trace: indices and ranges, e.g. 0-7,64 (default: the first rank of each engine "
      "timeline; ranks of a timeline run in lock-step)");
  sub->add_option(
      "--trace-ops", o->trace_ops,
      "Ops to trace: kinds (gemm, attention, membound, collective, send, recv; compute = the first "
      "three, p2p = send,recv) or op names and prefixes (attn.qkv, moe.*); default: all");
  sub->add_option(
      "--trace-iterations", o->trace_iterations,
      "Iterations to trace, e.g. 0-2 (default 0): the simulated iteration, repeated at whole "
      "iteration times as the run repeats it");
  sub->add_flag("--trace-force", o->trace_force, "Write the trace even above the 100 MB limit");
  sub->add_option(
      "--facility", o->facility,
      "Facility options: life=5,facility_life=15,maintenance=0.05,utilization=1,"
      "power_cap=700W,min_clock=0.2,profile=llama3,restart=10min,interval=young,trials=1000");
  sub->add_option(
         "--gpus", o->gpus,
         "GPUs the job uses (default: the most that fit the cluster and the batch); the job fills "
         "NVLink domains in order, the rest of the cluster idles (idle power counted)")
      ->check(CLI::Range(1, 1 << 24));
  sub->add_option(
      "--prices", o->prices,
      "Your own prices (schemas/prices.schema.json): quotes on GPUs, servers, "
      "switches, NICs, optics, storage, electricity, build-out, rack space, rental per GPU-hour");
  sub->add_option("--tokens", o->tokens,
                  "Tokens to train instead of the workload file's (\"2T\"); shown as an override");
  sub->add_option(
         "--global-batch", o->global_batch,
         "Sequences per optimizer step instead of the workload file's; shown as an override")
      ->check(CLI::Range(1LL, 1LL << 30));
  sub->add_option("--fail", o->fail,
                  "Take part of the fabric down (repeatable): link=leaf0-spine1 (a cable by its "
                  "ends; #k for the "
                  "k-th parallel cable; the busiest links' names such as spine0->leaf0 work), "
                  "link=ID (L<id> of topo --export "
                  "simgrid), switch=spine0. Routes avoid them "
                  "(ECMP, adaptive or spray over the equal-cost paths left); Clos fabrics");
  sub->add_option(
      "--fail-rate", o->fail_rate,
      "Random failures: links=P (each switch-to-switch cable down with probability P), switches=P; "
      "drawn from --seed");
  sub->add_option("--replicas", o->replicas,
                  "Native engine's data-parallel replica timelines: grouped (default: replicas "
                  "meeting the same transfer loads share one; the output names what that "
                  "approximates), strict (also refined by the data-parallel collectives' flows: "
                  "exact), each (one per replica)");
  sub->add_option("--compute-slowdown", o->compute_slowdown,
                  "Multiply every compute op (>= 1, e.g. thermal throttling)")
      ->check(CLI::Range(1.0, 1e6));
  sub->callback([&g, o] { g.run = [&g, o] { return run_simulate(g, *o); }; });
}

}  // namespace tutti::cli
