// tutti plan: plan a hardware purchase for a training deadline and budget.
//   tutti plan REQUEST.json [flags]     the request file, flags override its fields
//   tutti plan --model M.json --tokens 2T --deadline 30d --gpu-types h100-sxm-80gb,b200 ...
//   tutti plan --example                the built-in example (the README's first command)
//   mpirun -np N tutti plan ...         the same answer, the search split across N ranks
//   tutti plan --jobs TRACE --cluster C --p90-wait 1h   size a shared cluster for a job trace
//                                       (`tutti cluster size`: the smallest node count of C)
// Exit: 0 a recommendation, 1 nothing meets the constraints (reason + nearest miss), 2 bad input.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cluster.hpp"
#include "common.hpp"
#include "plan_mpi.hpp"
#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/flags.hpp"
#include "tutti/core/progress.hpp"
#include "tutti/plan/planner.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/prices.hpp"

namespace tutti::cli {

namespace {

struct PlanOptions {
  std::string request;
  bool example = false, show_request = false, csv = false, no_prune = false;
  std::string model, tokens, deadline, budget, total_budget, power_cap, rack_power, rack_cooling;
  std::string gpu_types, gpu_counts, fabrics, oversubscription, networks, storage, acquisition;
  std::string facility, objective, prices, cost_basis, hardware_life, utilization;
  int racks = 0, gpus_min = 0, gpus_max = 0, finalists = -1;
  ClusterOptions trace;  // --jobs: size a cluster for a job trace instead
};

// `tutti plan --jobs TRACE --cluster C --p90-wait X`: the trace question of capacity planning,
// answered by `tutti cluster size` (rank 0 only under mpirun: the bisection is sequential).
int run_plan_trace(const PlanOptions& o, const Globals& g) {
  if (!o.request.empty() || o.example || !o.model.empty())
    throw InputError("--jobs", "jobs",
                     "also " + std::string(o.example         ? "--example"
                                           : o.model.empty() ? "REQUEST.json"
                                                             : "--model"),
                     "either a training plan (REQUEST.json, --example or --model) or a job trace "
                     "(--jobs), not both");
  if (o.trace.jobs.empty())
    throw InputError("--p90-wait", "p90-wait", "without --jobs",
                     "--jobs TRACE (.swf, .json, sacct) to size a cluster for");
  if (o.trace.cluster.empty())
    throw InputError(
        "--jobs", "cluster", "no --cluster",
        "--cluster FILE: the node type and fabric to scale (its node count is what is sized)");
  if (o.trace.p90_wait.empty())
    throw InputError("--jobs", "p90-wait", "no --p90-wait",
                     "a target for the 90th percentile of queue wait, e.g. 1h");
  MpiSession mpi;
  if (mpi.rank() != 0) return kOk;
  return run_cluster_size(g, o.trace);
}

// A list flag as JSON: numbers where the item reads as one, else strings (the strict parser
// then names the bad item).
nlohmann::json list_json(const std::string& s, bool numeric) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& item : split_list(s)) {
    if (numeric) {
      try {
        std::size_t used = 0;
        double v = std::stod(item, &used);
        if (used == item.size()) {
          if (v == static_cast<double>(static_cast<long long>(v)))
            a.push_back(static_cast<long long>(v));
          else
            a.push_back(v);
          continue;
        }
      } catch (const std::exception&) {
      }
    }
    a.push_back(item);
  }
  return a;
}

// The request as JSON: the file (or the example, or nothing), --set overrides, then the flags.
PlanRequest build_request(const PlanOptions& o, const Globals& g) {
  nlohmann::json j = nlohmann::json::object();
  std::string name = "--model flags", base = ".";
  if (o.example) {
    if (!o.request.empty())
      throw InputError("tutti plan: give either REQUEST.json or --example, not both");
    Doc d = Doc::parse(example_plan_request(), "<built-in example>", g.sets);
    j = d.json();
    name = d.name();
  } else if (!o.request.empty()) {
    Doc d = Doc::load(o.request, g.sets);
    j = d.json();
    name = d.name();
    base = std::filesystem::path(o.request).parent_path().string();
    if (base.empty()) base = ".";
  } else {
    if (o.model.empty())
      throw InputError(
          "tutti plan: give REQUEST.json, --example, or at least --model and --gpu-types");
    for (const auto& s : g.sets) apply_override(j, s, "--set");
  }
  auto set = [&](const char* section, const char* key, const nlohmann::json& v) {
    if (section[0] == '\0')
      j[key] = v;
    else
      j[section][key] = v;
  };
  if (!o.model.empty()) set("", "workload", o.model);
  if (!o.tokens.empty()) set("", "tokens", o.tokens);
  if (!o.deadline.empty()) set("constraints", "deadline", o.deadline);
  if (!o.budget.empty()) set("constraints", "capex_budget", o.budget);
  if (!o.total_budget.empty()) set("constraints", "total_cost_budget", o.total_budget);
  if (!o.power_cap.empty()) set("constraints", "power_cap", o.power_cap);
  if (o.gpus_min > 0) set("constraints", "gpus_min", o.gpus_min);
  if (o.gpus_max > 0) set("constraints", "gpus_max", o.gpus_max);
  if (o.racks > 0) j["constraints"]["room"]["racks"] = o.racks;
  if (!o.rack_power.empty()) j["constraints"]["room"]["rack_power"] = o.rack_power;
  if (!o.rack_cooling.empty()) j["constraints"]["room"]["rack_cooling"] = o.rack_cooling;
  if (!o.gpu_types.empty()) set("search", "gpus", list_json(o.gpu_types, false));
  if (!o.gpu_counts.empty()) set("search", "gpu_counts", list_json(o.gpu_counts, true));
  if (!o.fabrics.empty()) set("search", "fabrics", list_json(o.fabrics, false));
  if (!o.oversubscription.empty())
    set("search", "oversubscription", list_json(o.oversubscription, true));
  if (!o.networks.empty()) set("search", "networks", list_json(o.networks, false));
  if (!o.storage.empty()) set("search", "storage", list_json(o.storage, false));
  if (!o.acquisition.empty()) set("search", "acquisition", list_json(o.acquisition, false));
  if (!o.facility.empty()) set("search", "facility", o.facility);
  if (!o.objective.empty()) set("", "objective", o.objective);
  if (o.finalists >= 0) set("", "finalists", o.finalists);
  if (o.no_prune) set("", "prune", false);
  if (!o.cost_basis.empty()) set("", "cost_basis", o.cost_basis);
  if (!o.hardware_life.empty()) set("", "hardware_life", o.hardware_life);
  if (!o.utilization.empty()) set("", "utilization", list_json(o.utilization, true).at(0));
  PlanRequest r = parse_plan_request(j, name, base);
  if (!o.prices.empty()) r.prices = load_prices(o.prices);  // replaces the request's "prices"
  return r;
}

// Rank 0: merges the slices in rank order, refines the finalists, prints; returns the exit code.
int report(const Planner& planner, const std::vector<std::string>& parts, const PlanOptions& o,
           const Globals& g, double screen_s, double screen_cpu_s, std::uint64_t own_slice,
           int ranks) {
  std::vector<ScreenResult> results;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty() || parts[i][0] != 'R')
      throw InternalError(fmt::format("plan screening failed on rank {}: {}", i,
                                      parts[i].empty() ? "no result" : parts[i].substr(1)));
    results.push_back(deserialize(parts[i].substr(1)));
  }
  ScreenResult merged = merge(results, planner.request().objective, planner.request().finalists);
  note(g, fmt::format(
              "tutti plan: screened {} configurations ({} simulated) in {:.2f} s wall on {} "
              "rank(s); rank 0: {} configurations in {:.2f} s of CPU = {:.0f} per second per core",
              merged.configurations, merged.simulated, screen_s, ranks, own_slice, screen_cpu_s,
              static_cast<double>(own_slice) / std::max(screen_cpu_s, 1e-9)));
  ProgressBar timing("timing the frontier and runners-up (flow-level)", g.verbosity >= 0);
  PlanResult result = planner.finish(merged, timing.callback());
  timing.finish();
  // Which calibration values are defaults for the GPUs the plan shows (plan times with the
  // built-in profile): a JSON field keyed by GPU id, and one stderr line per GPU.
  std::vector<std::string> shown;
  auto show = [&](const Evaluation& e) {
    const std::string& id = planner.hardware()[e.hardware].gpu;
    if (std::find(shown.begin(), shown.end(), id) == shown.end()) shown.push_back(id);
  };
  if (result.found) show(result.recommended);
  for (const Evaluation& e : result.pareto) show(e);
  for (const Evaluation& e : result.finalists) show(e);
  for (const Evaluation& e : result.alternatives) show(e);
  nlohmann::json defaults = nlohmann::json::object();
  for (const auto& id : shown) {
    const auto d = calibration_defaults(default_calibration(), Catalog::builtin().gpu(id));
    defaults[id] = calibration_defaults_json(d);
    const std::string line = calibration_defaults_line(id, d);
    if (!line.empty()) note(g, "tutti plan: " + line);
  }
  if (g.json) {
    nlohmann::json j = planner.to_json(result);
    j["calibration_defaults"] = defaults;
    emit_json(g, j);
  } else if (o.csv)
    emit(g, planner.to_csv(result));
  else
    emit(g, planner.to_text(result));
  if (result.found) return kOk;
  note(g, "tutti plan: no configuration meets the constraints: " + result.reason);
  return kNo;
}

int run_plan(const PlanOptions& o, const Globals& g) {
  if (!o.trace.jobs.empty() || !o.trace.p90_wait.empty()) return run_plan_trace(o, g);
  MpiSession mpi;
  try {
    if (o.show_request) {
      if (mpi.rank() == 0) emit(g, example_plan_request());
      return kOk;
    }
    PlanRequest req = build_request(o, g);
    Planner planner(std::move(req));
    // Static, deterministic partition: hardware choices dealt round-robin to the ranks (their
    // costs differ a lot, so contiguous blocks would leave ranks idle); each rank merges its own
    // parts, rank 0 merges the ranks' results. merge() is exact, so any split gives one answer.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    std::uint64_t own = 0;
    for (std::uint32_t h = 0; h < planner.hardware().size(); ++h)
      if (static_cast<int>(h % static_cast<std::uint32_t>(mpi.size())) == mpi.rank()) {
        ranges.push_back(planner.hardware_range(h));
        own += ranges.back().second - ranges.back().first;
      }

    auto t0 = std::chrono::steady_clock::now();
    std::clock_t c0 = std::clock();
    std::string payload;
    {
      ProgressBar bar("screening", mpi.rank() == 0 && g.verbosity >= 0);
      try {
        ScreenResult mine =
            planner.screen(ranges, [&bar](std::uint64_t d, std::uint64_t t) { bar.update(d, t); });
        payload = "R" + serialize(mine);
      } catch (const std::exception& e) {
        payload = std::string("E") + e.what();  // Reported by rank 0 below; never hang the gather.
      }
      bar.finish();
    }
    double screen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double screen_cpu_s = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    auto parts = mpi.gather(payload);
    return mpi.report_on_root(
        [&] { return report(planner, parts, o, g, screen_s, screen_cpu_s, own, mpi.size()); });
  } catch (...) {
    if (mpi.rank() == 0) throw;
    // Other ranks fail the same way on bad input; rank 0 reports it once.
    return kUsage;
  }
}

}  // namespace

void setup_plan(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand(
      "plan",
      "Plan a hardware purchase: which GPUs, how many, which fabric, which parallel layout meet a\n"
      "training deadline and budget, at what cost and energy (analytic screening, then the\n"
      "flow-level engine on the finalists). Under mpirun the search is split across ranks.");
  auto o = std::make_shared<PlanOptions>();
  sub->add_option("request", o->request, "Plan request file (schemas/plan_request.schema.json)");
  sub->add_flag(
      "--example", o->example,
      "Run the built-in example: Llama 3 70B, 2T tokens in 30 days, H100 vs H200 vs B200");
  sub->add_flag("--show-request", o->show_request, "Print the built-in example request and exit");
  sub->add_flag("--csv", o->csv, "CSV output (one row per Pareto configuration)");
  sub->add_option("--model", o->model, "Workload file (overrides the request's workload)");
  sub->add_option("--tokens", o->tokens, "Tokens to train, e.g. 2T");
  sub->add_option("--deadline", o->deadline, "Longest time to train, e.g. 30d");
  sub->add_option("--budget", o->budget, "Capex budget, e.g. '$400M'");
  sub->add_option("--total-budget", o->total_budget, "Total cost budget (capex or rent + opex)");
  sub->add_option("--power-cap", o->power_cap, "Facility power cap, e.g. 20MW");
  sub->add_option("--racks", o->racks, "Racks of an existing room");
  sub->add_option("--rack-power", o->rack_power, "Power a rack may draw, e.g. 40kW");
  sub->add_option("--rack-cooling", o->rack_cooling, "Heat the room removes per rack, e.g. 40kW");
  sub->add_option("--gpus-min", o->gpus_min, "Fewest GPUs to consider");
  sub->add_option("--gpus-max", o->gpus_max, "Most GPUs to consider");
  sub->add_option("--gpu-types", o->gpu_types, "GPU or node catalog ids, comma-separated");
  sub->add_option("--gpu-counts", o->gpu_counts, "GPU counts to try, comma-separated");
  sub->add_option("--fabrics", o->fabrics, "Fabric generators, comma-separated");
  sub->add_option("--oversubscription", o->oversubscription, "Oversubscription ratios, e.g. 1,2");
  sub->add_option("--networks", o->networks, "infiniband,roce");
  sub->add_option("--storage", o->storage, "Storage catalog ids, comma-separated");
  sub->add_option("--acquisition", o->acquisition, "buy,rent");
  sub->add_option("--facility", o->facility, "Facility preset id");
  sub->add_option("--objective", o->objective, "What to minimise: cost|time|energy");
  sub->add_option("--finalists", o->finalists,
                  "Configurations re-simulated with the flow-level engine");
  sub->add_option(
      "--prices", o->prices,
      "Your own prices (schemas/prices.schema.json); replaces the request's \"prices\"");
  sub->add_option(
      "--cost-basis", o->cost_basis,
      "What a bought configuration costs for ranking: run (capex amortised over the hardware life "
      "at the utilisation + the run's opex; default) or purchase (the whole purchase + opex)");
  sub->add_option("--hardware-life", o->hardware_life,
                  "Amortisation of bought hardware, e.g. 5y (default 5y)");
  sub->add_option("--utilization", o->utilization,
                  "Share of the year the owned cluster does paid work (default 1)");
  sub->add_flag("--no-prune", o->no_prune, "Evaluate every configuration (same answer, slower)");
  // Sizing a shared cluster for a job trace (tutti cluster size).
  sub->add_option("--jobs", o->trace.jobs,
                  "Size a shared cluster for this job trace instead (.swf, .json job list, sacct): "
                  "the smallest node "
                  "count of --cluster meeting --p90-wait (as tutti cluster size)");
  sub->add_option("--cluster", o->trace.cluster,
                  "With --jobs: cluster file whose node count is sized (--set applies)");
  sub->add_option("--p90-wait", o->trace.p90_wait,
                  "With --jobs: target 90th percentile of queue wait, e.g. 1h");
  sub->add_option("--max-nodes", o->trace.max_nodes,
                  "With --jobs: largest node count tried (default 4x the file's)");
  sub->add_option("--scheduler", o->trace.scheduler, "With --jobs: scheduler (as tutti cluster)")
      ->capture_default_str();
  sub->add_option("--placement", o->trace.placement, "With --jobs: placement")
      ->capture_default_str();
  sub->add_option("--alloc", o->trace.alloc, "With --jobs: allocate whole nodes or GPUs: node|gpu")
      ->capture_default_str();
  sub->add_flag("--no-failures", o->trace.no_failures, "With --jobs: no node failures");
  sub->add_flag("--elastic", o->trace.elastic, "With --jobs: elastic jobs grow and shrink");
  sub->callback([o, &g] { g.run = [o, &g] { return run_plan(*o, g); }; });
}

}  // namespace tutti::cli
