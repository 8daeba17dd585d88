// tutti cluster: many jobs sharing one cluster (simulate a trace; compare policies on it).
#include "cluster.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "plan_mpi.hpp"
#include "tutti/cluster/cluster_sim.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/reports/cluster_report.hpp"
#include "tutti/reports/sha256.hpp"
#include "tutti/reports/writers.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::cli {
namespace {

double time_flag(const std::string& flag, const std::string& v) {
  auto q = parse_quantity(v, Dim::Time);
  if (!q || *q <= 0)
    throw InputError(flag, flag.substr(2), "\"" + v + "\"", dim_expectation(Dim::Time) + ", > 0");
  return *q;
}

ClusterSimOptions sim_options(const Globals& g, const ClusterOptions& o) {
  ClusterSimOptions so;
  so.scheduler = parse_scheduler(o.scheduler);
  so.placement = parse_placement(o.placement);
  so.alloc = parse_alloc(o.alloc);
  so.engine = o.engine;
  so.calibration = o.calibration;
  so.failures = !o.no_failures;
  so.interference = !o.no_interference;
  so.elastic = o.elastic;
  so.reliability_profile = o.reliability;
  so.repair_s = time_flag("--repair", o.repair);
  so.checkpoint_write_s = time_flag("--checkpoint-write", o.checkpoint_write);
  so.checkpoint_interval_s = o.checkpoint_interval == "young"
                                 ? 0
                                 : time_flag("--checkpoint-interval", o.checkpoint_interval);
  if (!o.restart.empty()) so.restart_s = time_flag("--restart", o.restart);
  if (o.fair_share_by != "user" && o.fair_share_by != "team")
    throw InputError("--fair-share-by", "fair-share-by", "\"" + o.fair_share_by + "\"",
                     "user or team");
  so.fair_share_by_team = o.fair_share_by == "team";
  so.backfill_depth = o.backfill_depth;
  so.timeline_points = o.timeline_points;
  so.seed = g.seed;
  return so;
}

JobList trace(const Globals& g, const ClusterOptions& o, const Cluster& c) {
  if (o.jobs.empty() == o.synthetic.empty())
    throw InputError(
        "--jobs", "jobs",
        o.jobs.empty() ? "neither --jobs nor --synthetic" : "both --jobs and --synthetic",
        "one trace: --jobs FILE (.swf, .json, sacct --parsable2) or --synthetic KEY=VALUE,...");
  if (!o.synthetic.empty()) return synthetic_jobs(parse_synthetic(o.synthetic), g.seed);
  return load_jobs(o.jobs, o.processors_per_gpu, c.gpus_per_node);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f || !(f << text)) throw InputError(path + ": cannot write file");
}

// The command that reproduces a report (the options that change the result).
std::string command_line(const Globals& g, const ClusterOptions& o, const std::string& sub) {
  std::string c = "tutti";
  if (g.seed != 1) c += " --seed " + std::to_string(g.seed);
  for (const auto& s : g.sets) c += " --set " + shell_quote(s);
  c += " cluster " + sub + " --cluster " + shell_quote(o.cluster);
  c += o.jobs.empty() ? " --synthetic " + shell_quote(o.synthetic)
                      : " --jobs " + shell_quote(o.jobs);
  if (sub == "simulate") c += " --scheduler " + o.scheduler + " --placement " + o.placement;
  if (sub == "compare") {
    if (!o.schedulers.empty())
      c += " --schedulers " + shell_quote(fmt::format("{}", fmt::join(o.schedulers, ",")));
    if (!o.placements.empty())
      c += " --placements " + shell_quote(fmt::format("{}", fmt::join(o.placements, ",")));
  }
  c += " --alloc " + o.alloc + " --engine " + o.engine;
  if (o.no_failures) c += " --no-failures";
  if (o.no_interference) c += " --no-interference";
  if (o.elastic) c += " --elastic";
  return c + " --html " + shell_quote(o.html);
}

void write_report(const Globals& g, const ClusterOptions& o, const std::string& sub,
                  const nlohmann::json& runs) {
  reports::Report r = reports::build_cluster_report(runs);
  r.tool_version = std::string("tutti ") + TUTTI_VERSION;
  r.command = command_line(g, o, sub);
  const std::string ct = read_text(o.cluster);
  r.inputs.push_back({"cluster", o.cluster, reports::sha256_hex(ct), ct});
  if (!o.jobs.empty()) {
    const std::string jt = read_text(o.jobs);
    r.inputs.push_back({"jobs", o.jobs, reports::sha256_hex(jt), jt});
  }
  write_file(o.html, reports::write_html(r));
  note(g, "report written to " + o.html);
}

int run_simulate(const Globals& g, const ClusterOptions& o) {
  Cluster c = load_cluster(o.cluster, g.sets);
  ClusterSimOptions so = sim_options(g, o);
  JobList jl = trace(g, o, c);
  ProgressBar bar("jobs finished", g.verbosity >= 0);
  so.progress = bar.callback();
  ClusterResult r = simulate_cluster(c, jl, so);
  bar.finish();
  if (g.json)
    emit_json(g, to_json(r));
  else
    emit(g, cluster_text(r));
  if (!o.csv.empty()) write_file(o.csv, jobs_csv(r));
  if (!o.html.empty()) write_report(g, o, "simulate", nlohmann::json::array({to_json(r)}));
  note(g, fmt::format("simulated {} jobs in {:.3f} s wall ({:.3f} s scheduling, {:.3f} s "
                      "job-runtime simulation, "
                      "{} distinct placements timed)",
                      r.jobs, r.wall_total_s, r.wall_total_s - r.wall_runtime_s, r.wall_runtime_s,
                      r.runtime_cache_entries));
  return kOk;
}

// Under mpirun the policy pairs are dealt round-robin to the ranks (as `tutti plan` deals its
// hardware choices); each run travels as its JSON (exact: doubles print shortest round-trip) and
// its table row, and rank 0 reassembles them in pair order, so the output is byte-identical to
// one process. One process takes the same path.
int run_compare(const Globals& g, const ClusterOptions& o) {
  MpiSession mpi;
  try {
    Cluster c = load_cluster(o.cluster, g.sets);
    ClusterSimOptions base = sim_options(g, o);
    JobList jl = trace(g, o, c);
    std::vector<std::string> scheds =
        o.schedulers.empty() ? std::vector<std::string>{"fifo", "easy-backfill"} : o.schedulers;
    std::vector<std::string> places =
        o.placements.empty() ? std::vector<std::string>{"packed", "topology"} : o.placements;
    std::vector<ClusterSimOptions> pairs;
    for (const auto& s : scheds)
      for (const auto& p : places) {
        ClusterSimOptions so = base;
        so.scheduler = parse_scheduler(s, "--schedulers");
        so.placement = parse_placement(p, "--placements");
        pairs.push_back(so);
      }
    std::string payload;
    try {
      nlohmann::json mine = nlohmann::json::array();
      for (std::size_t i = static_cast<std::size_t>(mpi.rank()); i < pairs.size();
           i += static_cast<std::size_t>(mpi.size())) {
        ClusterResult r = simulate_cluster(c, jl, pairs[i]);
        mine.push_back(
            {{"run", to_json(r)}, {"header", compare_header(r)}, {"row", compare_row(r)}});
      }
      payload = "R" + mine.dump();
    } catch (const InputError& e) {
      payload = std::string("I") + e.what();  // Reported by rank 0 below; never hang the gather.
    } catch (const std::exception& e) {
      payload = std::string("E") + e.what();
    }
    auto parts = mpi.gather(payload);
    return mpi.report_on_root([&] {
      std::vector<nlohmann::json> slices;
      for (std::size_t k = 0; k < parts.size(); ++k) {
        if (parts[k].empty())
          throw InternalError(fmt::format("cluster compare: no result from rank {}", k));
        if (parts[k][0] == 'I') throw InputError(parts[k].substr(1));
        if (parts[k][0] != 'R')
          throw InternalError(
              fmt::format("cluster compare failed on rank {}: {}", k, parts[k].substr(1)));
        slices.push_back(nlohmann::json::parse(parts[k].substr(1)));
      }
      nlohmann::json runs = nlohmann::json::array(), brief = nlohmann::json::array();
      std::string text;
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        const nlohmann::json& one = slices[i % slices.size()].at(i / slices.size());
        if (i == 0) text = one["header"].get<std::string>();
        text += one["row"].get<std::string>();
        runs.push_back(one["run"]);
        brief.push_back(one["run"]);
        brief.back().erase("job_outcomes");  // to_json(r, false)
      }
      if (!o.html.empty()) write_report(g, o, "compare", runs);
      if (g.json) {
        nlohmann::json j;
        j["format"] = "tutti-cluster-compare/1";
        j["runs"] = brief;
        emit_json(g, j);
      } else {
        emit(g, text);
      }
      return static_cast<int>(kOk);
    });
  } catch (...) {
    if (mpi.rank() == 0) throw;
    return kUsage;  // Other ranks fail the same way on bad input; rank 0 reports it once.
  }
}

}  // namespace

int run_cluster_size(const Globals& g, const ClusterOptions& o) {
  const double target = time_flag("--p90-wait", o.p90_wait);
  ClusterSimOptions so = sim_options(g, o);
  Cluster base = load_cluster(o.cluster, g.sets);
  JobList jl = trace(g, o, base);
  const int gpn = base.gpus_per_node;
  int widest = 0;
  for (const auto& j : jl.jobs) widest = std::max(widest, j.gpus);
  int lo = std::max(1, (widest + gpn - 1) / gpn),
      hi = o.max_nodes > 0 ? o.max_nodes : 4 * base.nodes;
  if (hi < lo)
    throw InputError("--max-nodes", "max-nodes", std::to_string(hi),
                     fmt::format(">= {} (the widest job)", lo));
  std::vector<std::pair<int, ClusterResult>> tried;
  auto run_at = [&](int n) -> const ClusterResult& {
    for (auto& t : tried)
      if (t.first == n) return t.second;
    std::vector<std::string> sets = g.sets;
    sets.push_back("nodes=" + std::to_string(n));
    Cluster c = load_cluster(o.cluster, sets);
    tried.emplace_back(n, simulate_cluster(c, jl, so));
    note(g, fmt::format("{} nodes: wait p90 {:.0f} s", n, tried.back().second.wait_s.p90));
    return tried.back().second;
  };
  if (run_at(hi).wait_s.p90 > target) {
    const std::string msg = fmt::format(
        "no cluster up to {} nodes meets wait p90 <= {:.0f} s (at {} nodes: {:.0f} s); "
        "raise --max-nodes or relax --p90-wait",
        hi, target, hi, run_at(hi).wait_s.p90);
    if (g.json)
      emit_json(g, {{"format", "tutti-cluster-size/1"}, {"fits", false}, {"reason", msg}});
    else
      emit(g, msg + "\n");
    return kNo;
  }
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (run_at(mid).wait_s.p90 <= target)
      hi = mid;
    else
      lo = mid + 1;
  }
  const ClusterResult& r = run_at(lo);
  if (g.json) {
    nlohmann::json j{{"format", "tutti-cluster-size/1"},
                     {"fits", true},
                     {"nodes", lo},
                     {"gpus", lo * gpn},
                     {"p90_wait_target_s", target},
                     {"result", to_json(r, false)}};
    j["tried"] = nlohmann::json::array();
    for (const auto& t : tried)
      j["tried"].push_back({{"nodes", t.first}, {"wait_p90_s", t.second.wait_s.p90}});
    emit_json(g, j);
  } else {
    emit(g, fmt::format("smallest cluster meeting wait p90 <= {:.0f} s: {} nodes ({} GPUs)\n\n",
                        target, lo, lo * gpn) +
                cluster_text(r));
  }
  return kOk;
}

namespace {

void common_flags(CLI::App* sub, ClusterOptions& o) {
  sub->add_option("--cluster", o.cluster, "Cluster file (topologies/*.json); --set applies to it")
      ->required();
  sub->add_option("--jobs", o.jobs,
                  "Job trace: .swf (Parallel Workloads Archive), .json (tutti job list), else "
                  "sacct --parsable2");
  sub->add_option("--synthetic", o.synthetic,
                  "Synthetic trace instead: "
                  "jobs=1000,span=30d,min_gpus=1,max_gpus=64,median=2h,sigma=1,users=8,comm=0.2");
  sub->add_option("--alloc", o.alloc, "Allocate whole nodes or GPUs: node|gpu")
      ->capture_default_str();
  sub->add_option("--engine", o.engine, "Engine timing workload jobs: analytic|native")
      ->capture_default_str();
  sub->add_option("--calibration", o.calibration, "Calibration profile for the engine");
  sub->add_flag("--no-failures", o.no_failures, "No node failures");
  sub->add_flag("--no-interference", o.no_interference,
                "Jobs do not slow each other on shared links");
  sub->add_flag("--elastic", o.elastic,
                "Jobs with min_gpus/max_gpus (JSON job list) grow into free GPUs and shrink for "
                "the queue head");
  sub->add_option("--reliability", o.reliability,
                  "Reliability profile (topologies/catalog/reliability.json)")
      ->capture_default_str();
  sub->add_option("--repair", o.repair, "Time a failed node is out of service")
      ->capture_default_str();
  sub->add_option("--checkpoint-interval", o.checkpoint_interval, "Checkpoint interval, or young")
      ->capture_default_str();
  sub->add_option("--checkpoint-write", o.checkpoint_write, "Time to write one checkpoint")
      ->capture_default_str();
  sub->add_option("--restart", o.restart, "Time to restart a failed job (default: the profile's)");
  sub->add_option("--processors-per-gpu", o.processors_per_gpu, "SWF processors per GPU")
      ->capture_default_str();
  sub->add_option("--fair-share-by", o.fair_share_by, "fair-share scheduler: user|team")
      ->capture_default_str();
  sub->add_option("--backfill-depth", o.backfill_depth, "Queued jobs scanned per pass")
      ->capture_default_str();
  sub->add_option("--timeline-points", o.timeline_points, "Utilisation samples")
      ->capture_default_str();
  sub->add_option("--html", o.html,
                  "Write the HTML report (utilisation timeline, wait CDF, comparison)");
}

}  // namespace

void setup_cluster(CLI::App& app, Globals& g) {
  auto* top =
      app.add_subcommand("cluster", "Many jobs on one cluster: scheduling, placement, idle GPUs");
  top->require_subcommand(1);
  {
    auto o = std::make_shared<ClusterOptions>();
    auto* sub = top->add_subcommand("simulate", "Run a job trace on a cluster (discrete-event)");
    common_flags(sub, *o);
    sub->add_option("--scheduler", o->scheduler,
                    "fifo|easy-backfill|conservative-backfill|fair-share|gang")
        ->capture_default_str();
    sub->add_option("--placement", o->placement, "packed|spread|topology")->capture_default_str();
    sub->add_option("--csv", o->csv, "Write one row per job to this CSV file");
    sub->footer(
        "Example:\n  tutti cluster simulate --cluster topologies/dgx-h100-superpod-1su.json "
        "--jobs tests/data/cluster/jobs-small.json --scheduler easy-backfill --placement topology");
    sub->callback([&g, o] { g.run = [&g, o] { return run_simulate(g, *o); }; });
  }
  {
    auto o = std::make_shared<ClusterOptions>();
    auto* sub =
        top->add_subcommand("compare", "Run several schedulers x placements on the same trace");
    common_flags(sub, *o);
    sub->add_option("--schedulers", o->schedulers,
                    "Schedulers to compare (default fifo easy-backfill)")
        ->delimiter(',');
    sub->add_option("--placements", o->placements,
                    "Placements to compare (default packed topology)")
        ->delimiter(',');
    sub->callback([&g, o] { g.run = [&g, o] { return run_compare(g, *o); }; });
  }
  {
    auto o = std::make_shared<ClusterOptions>();
    auto* sub = top->add_subcommand(
        "size", "Smallest cluster (node count) meeting a p90 queue-wait target");
    common_flags(sub, *o);
    sub->add_option("--scheduler", o->scheduler, "Scheduler")->capture_default_str();
    sub->add_option("--placement", o->placement, "Placement")->capture_default_str();
    sub->add_option("--p90-wait", o->p90_wait, "Target: 90th percentile of queue wait (\"1h\")")
        ->required();
    sub->add_option("--max-nodes", o->max_nodes,
                    "Largest node count tried (default 4x the file's)");
    sub->callback([&g, o] { g.run = [&g, o] { return run_cluster_size(g, *o); }; });
  }
}

}  // namespace tutti::cli
