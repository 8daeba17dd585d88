// ClusterResult writers: JSON (schemas/cluster_result.schema.json), CSV, text tables.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tutti/cluster/cluster_result.hpp"
#include "tutti/cluster/cluster_sim.hpp"
#include "tutti/core/format.hpp"
#include "tutti/core/units.hpp"

namespace tutti {
namespace {

nlohmann::json pct(const Percentiles& p) {
  return {{"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"mean", p.mean}};
}

std::string dur(double s) {
  static constexpr Rung kTime[] = {{2 * kDay, 1, kDay, fixed(1), "d"},
                                   {kHour, 1, kHour, fixed(1), "h"},
                                   {60, 1, 60, fixed(1), "min"},
                                   {kBelowAll, 1, 1, fixed(0), "s"}};
  return format_si(s, {.rungs = kTime, .magnitude = false});
}

// Energy in MWh with one decimal, at every size (kWh first, as the line has always computed it).
std::string mwh(double J) {
  static constexpr Rung kMWh[] = {{kBelowAll, 1, 1e3, fixed(1), "MWh"}};
  return format_si(J / kJoulePerKWh, {.rungs = kMWh, .magnitude = false});
}

// Whole dollars, "$1234567".
std::string usd(double v) {
  static constexpr Rung kUsd[] = {{kBelowAll, 1, 1, fixed(0), ""}};
  return format_si(v, {.rungs = kUsd, .prefix = "$", .sep = "", .magnitude = false});
}

}  // namespace

nlohmann::json to_json(const ClusterResult& r, bool with_jobs) {
  nlohmann::json j;
  j["schema_version"] = kClusterResultSchemaVersion;
  j["format"] = "tutti-cluster-result/1";
  j["cluster"] = r.cluster;
  j["trace"] = r.trace;
  j["scheduler"] = r.scheduler;
  j["placement"] = r.placement;
  j["alloc"] = r.alloc;
  j["engine"] = r.engine;
  j["gpus"] = r.gpus;
  j["nodes"] = r.nodes;
  j["jobs"] = r.jobs;
  j["completed"] = r.completed;
  j["makespan_s"] = r.makespan_s;
  j["gpu_hours"] = r.gpu_hours;
  j["allocated_gpu_hours"] = r.allocated_gpu_hours;
  j["useful_gpu_hours"] = r.useful_gpu_hours;
  j["allocated_utilization"] = r.allocated_utilization;
  j["busy_utilization"] = r.busy_utilization;
  j["goodput"] = r.goodput;
  j["idle_gpu_hours"] = {{"fragmentation", r.idle.fragmentation},
                         {"queue_head_blocking", r.idle.head_blocking},
                         {"no_demand", r.idle.no_demand},
                         {"failures_restarts", r.idle.failures},
                         {"preemption", r.idle.preemption},
                         {"interference", r.idle.interference},
                         {"total", r.idle.total()}};
  j["wait_s"] = pct(r.wait_s);
  j["jct_s"] = pct(r.jct_s);
  j["slowdown"] = pct(r.slowdown);
  j["failures"] = r.failures;
  j["restarts"] = r.restarts;
  j["preemptions"] = r.preemptions;
  if (r.resizes > 0) j["resizes"] = r.resizes;
  j["energy_J"] = r.energy_J;
  j["energy_cost_usd"] = r.energy_cost_usd;
  j["cost_usd"] = r.cost_usd;
  j["runtime_cache_entries"] = r.runtime_cache_entries;
  j["defaults"] = r.defaults;
  nlohmann::json users = nlohmann::json::array();
  for (const UserSummary& u : r.users)
    users.push_back({{"user", u.name},
                     {"jobs", u.jobs},
                     {"gpu_hours", u.gpu_hours},
                     {"wait_s", pct(u.wait_s)},
                     {"jct_s", pct(u.jct_s)}});
  j["users"] = users;
  nlohmann::json tl = nlohmann::json::array();
  for (const UtilPoint& p : r.timeline)
    tl.push_back({{"t_s", p.t_s}, {"allocated", p.allocated}, {"busy", p.busy}});
  j["timeline"] = tl;
  if (with_jobs) {
    nlohmann::json js = nlohmann::json::array();
    for (const JobOutcome& o : r.outcomes) {
      js.push_back({{"id", o.id},
                    {"user", r.users.empty() ? "" : r.users[o.user].name},
                    {"gpus", o.gpus},
                    {"submit_s", o.submit_s},
                    {"start_s", o.start_s},
                    {"end_s", o.end_s},
                    {"wait_s", o.wait_s},
                    {"jct_s", o.jct_s},
                    {"solo_s", o.solo_s},
                    {"slowdown", o.slowdown},
                    {"restarts", o.restarts},
                    {"preemptions", o.preemptions},
                    {"nodes", o.nodes},
                    {"domains", o.domains},
                    {"groups", o.groups}});
      if (o.min_gpus_used > 0) {
        js.back()["min_gpus_used"] = o.min_gpus_used;
        js.back()["max_gpus_used"] = o.max_gpus_used;
        js.back()["resizes"] = o.resizes;
      }
    }
    j["job_outcomes"] = js;
  }
  return j;
}

std::string jobs_csv(const ClusterResult& r) {
  std::string s =
      "id,user,gpus,submit_s,start_s,end_s,wait_s,jct_s,solo_s,slowdown,restarts,preemptions,nodes,"
      "domains,groups\n";
  for (const JobOutcome& o : r.outcomes)
    s += fmt::format("{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.6f},{},{},{},{},{}\n",
                     o.id, r.users.empty() ? "" : r.users[o.user].name, o.gpus, o.submit_s,
                     o.start_s, o.end_s, o.wait_s, o.jct_s, o.solo_s, o.slowdown, o.restarts,
                     o.preemptions, o.nodes, o.domains, o.groups);
  return s;
}

std::string cluster_text(const ClusterResult& r) {
  std::string s;
  s += fmt::format("cluster    {} ({} GPUs, {} nodes)\n", r.cluster, r.gpus, r.nodes);
  s += fmt::format("trace      {} ({} jobs)\n", r.trace, r.jobs);
  s += fmt::format("scheduler  {}, placement {}, allocation by {}, job runtimes {}\n\n",
                   r.scheduler, r.placement, r.alloc, r.engine);
  s += fmt::format("makespan             {}\n", dur(r.makespan_s));
  s += fmt::format(
      "GPU utilisation      {:.1f}% allocated, {:.1f}% busy (goodput {:.1f}% of allocated)\n",
      100 * r.allocated_utilization, 100 * r.busy_utilization, 100 * r.goodput);
  s += fmt::format("queue wait           p50 {}  p90 {}  p99 {}  (mean {})\n", dur(r.wait_s.p50),
                   dur(r.wait_s.p90), dur(r.wait_s.p99), dur(r.wait_s.mean));
  s += fmt::format("job completion time  p50 {}  p90 {}  p99 {}\n", dur(r.jct_s.p50),
                   dur(r.jct_s.p90), dur(r.jct_s.p99));
  s += fmt::format("interference         slowdown p50 {:.3f}  p90 {:.3f}  p99 {:.3f}\n",
                   r.slowdown.p50, r.slowdown.p90, r.slowdown.p99);
  s += fmt::format("failures             {} node failures, {} job restarts, {} preemptions\n",
                   r.failures, r.restarts, r.preemptions);
  if (r.resizes > 0) s += fmt::format("elastic              {} grow/shrink steps\n", r.resizes);
  s += fmt::format("energy, cost         {}, {} (electricity {})\n", mwh(r.energy_J),
                   usd(r.cost_usd), usd(r.energy_cost_usd));
  const double tot = r.gpu_hours > 0 ? r.gpu_hours : 1;
  s += fmt::format("\nGPU-hours ({:.0f} in all)\n", r.gpu_hours);
  auto row = [&](const char* name, double h) {
    s += fmt::format("  {:<22} {:>12.1f}  {:5.1f}%\n", name, h, 100 * h / tot);
  };
  row("useful work", r.useful_gpu_hours);
  row("idle: fragmentation", r.idle.fragmentation);
  row("idle: queue head", r.idle.head_blocking);
  row("idle: no demand", r.idle.no_demand);
  row("lost: failures", r.idle.failures);
  row("lost: preemption", r.idle.preemption);
  row("lost: interference", r.idle.interference);
  if (r.users.size() > 1) {
    s += "\nper user                jobs   GPU-h    wait p50    wait p90     JCT p90\n";
    for (const UserSummary& u : r.users)
      s += fmt::format("  {:<20} {:>5} {:>7.0f} {:>11} {:>11} {:>11}\n", u.name, u.jobs,
                       u.gpu_hours, dur(u.wait_s.p50), dur(u.wait_s.p90), dur(u.jct_s.p90));
  }
  s += "\nassumptions\n";
  for (const std::string& d : r.defaults) s += "  " + d + "\n";
  return s;
}

std::string compare_header(const ClusterResult& r) {
  std::string s = fmt::format("cluster {} ({} GPUs), trace {} ({} jobs)\n\n", r.cluster, r.gpus,
                              r.trace, r.jobs);
  s += fmt::format("{:<24} {:<9} {:>9} {:>7} {:>7} {:>10} {:>10} {:>10} {:>8} {:>9} {:>9}\n",
                   "scheduler", "placement", "makespan", "alloc%", "busy%", "wait p50", "wait p90",
                   "JCT p90", "slow p90", "frag GPUh", "head GPUh");
  return s;
}

std::string compare_row(const ClusterResult& r) {
  return fmt::format(
      "{:<24} {:<9} {:>9} {:>7.1f} {:>7.1f} {:>10} {:>10} {:>10} {:>8.3f} {:>9.0f} {:>9.0f}\n",
      r.scheduler, r.placement, dur(r.makespan_s), 100 * r.allocated_utilization,
      100 * r.busy_utilization, dur(r.wait_s.p50), dur(r.wait_s.p90), dur(r.jct_s.p90),
      r.slowdown.p90, r.idle.fragmentation, r.idle.head_blocking);
}

std::string compare_text(const std::vector<ClusterResult>& rs) {
  std::string s;
  if (rs.empty()) return s;
  s += compare_header(rs[0]);
  for (const ClusterResult& r : rs) s += compare_row(r);
  return s;
}

}  // namespace tutti
