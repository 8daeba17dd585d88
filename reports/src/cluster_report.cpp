// Report of `tutti cluster` runs; numbers are the result documents' own (no recomputation but
// the wait-time CDF, which is the sorted job_outcomes[].wait_s).
#include "tutti/reports/cluster_report.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tutti/cluster/cluster_result.hpp"
#include "tutti/core/error.hpp"
#include "tutti/reports/format.hpp"

namespace tutti::reports {
namespace {
using nlohmann::json;
using Run = ClusterResultView;

std::string run_label(const Run& r) {
  return r.scheduler + " / " + r.placement;
}

}  // namespace

Report build_cluster_report(const json& doc) {
  if (!doc.is_array() || doc.empty())
    throw InputError("cluster report", "runs", doc.is_array() ? "an empty list" : "not a list",
                     "one run or more");
  std::vector<Run> runs;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    // Typed before anything is read: schemas/cluster_result.schema.json (issue 23).
    runs.push_back(Run::from_json(doc[i], "cluster report", "runs." + std::to_string(i)));
    if (!runs.back().job_waits_s)
      throw InputError("cluster report", "runs[" + std::to_string(i) + "]", "no job_outcomes",
                       "a tutti cluster result document with job outcomes");
  }
  Report rep;
  rep.kind = "cluster";
  const Run& r0 = runs[0];
  rep.title = "Cluster scheduling: " + r0.trace + " on " + r0.cluster;
  rep.subtitle = std::to_string(r0.jobs) + " jobs, " + std::to_string(r0.gpus) + " GPUs, " +
                 std::to_string(runs.size()) + (runs.size() == 1 ? " policy" : " policies");
  // Summary.
  Section sum{"summary", "Summary", {}};
  Table t;
  t.id = "summary";
  t.title = "Runs";
  t.columns = {
      {"policy", "Scheduler / placement", Unit::Text, ""},
      {"makespan_s", "Makespan", Unit::Seconds, "Last job's end"},
      {"allocated_utilization", "Allocated", Unit::Fraction,
       "GPU-hours held by jobs / all GPU-hours"},
      {"busy_utilization", "Busy", Unit::Fraction, "Useful work GPU-hours / all GPU-hours"},
      {"goodput", "Goodput", Unit::Fraction, "Useful / allocated"},
      {"wait_p50_s", "Wait p50", Unit::Seconds, ""},
      {"wait_p90_s", "Wait p90", Unit::Seconds, ""},
      {"wait_p99_s", "Wait p99", Unit::Seconds, ""},
      {"jct_p90_s", "JCT p90", Unit::Seconds, "Job completion time (submit to end)"},
      {"slowdown_p90", "Slowdown p90", Unit::Number, "Iteration-time stretch from shared links"},
      {"energy_J", "Energy", Unit::Joules, "Facility energy over the makespan"},
      {"cost_usd", "Cost", Unit::Usd, "Amortised capex + electricity over the makespan"}};
  std::size_t best = 0;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i].wait_s.mean < runs[best].wait_s.mean) best = i;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    t.rows.push_back({Cell::str(run_label(r), {}, i == best && runs.size() > 1),
                      Cell::num(r.makespan_s), Cell::num(r.allocated_utilization),
                      Cell::num(r.busy_utilization), Cell::num(r.goodput), Cell::num(r.wait_s.p50),
                      Cell::num(r.wait_s.p90), Cell::num(r.wait_s.p99), Cell::num(r.jct_s.p90),
                      Cell::num(r.slowdown.p90), Cell::num(r.energy_J), Cell::num(r.cost_usd)});
  }
  sum.blocks.push_back(t);
  if (runs.size() > 1)
    rep.verdict.push_back(
        {"Mean queue wait", run_label(runs[best]),
         "lowest mean wait: " + format_value(runs[best].wait_s.mean, Unit::Seconds), 0});
  rep.primary_table = "summary";
  rep.sections.push_back(std::move(sum));
  // Utilisation timelines.
  Section util{"utilisation", "GPU utilisation over time", {}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Chart c;
    c.id = "util-" + std::to_string(i);
    c.title = "Allocated vs busy GPUs: " + run_label(runs[i]);
    c.caption =
        "Busy excludes time lost to link sharing and checkpoints; the gap is GPUs held but not "
        "working.";
    c.kind = ChartKind::Line;
    c.x_label = "time since the first submission";
    c.y_label = "share of the cluster's GPUs";
    c.y_unit = Unit::Fraction;
    Series a{"allocated", {}}, b{"busy", {}};
    for (const Run::UtilPoint& p : runs[i].timeline) {
      c.categories.push_back(format_value(p.t_s, Unit::Seconds));
      a.values.push_back(p.allocated);
      b.values.push_back(p.busy);
    }
    c.series = {a, b};
    if (c.has_data()) util.blocks.push_back(c);
  }
  rep.sections.push_back(std::move(util));
  // Wait-time CDF.
  Section wait{"wait", "Queue wait distribution", {}};
  {
    Chart c;
    c.id = "wait-cdf";
    c.title = "Queue wait CDF";
    c.caption = "Wait at each percentile of the jobs (submit to first start).";
    c.kind = ChartKind::Line;
    c.x_label = "share of jobs";
    c.y_label = "queue wait";
    c.y_unit = Unit::Seconds;
    for (int q = 0; q <= 100; q += 5) c.categories.push_back(std::to_string(q) + "%");
    for (const Run& r : runs) {
      std::vector<double> w = *r.job_waits_s;
      std::sort(w.begin(), w.end());
      Series s{run_label(r), {}};
      for (int q = 0; q <= 100; q += 5) {
        const std::size_t k =
            w.empty()
                ? 0
                : std::min(w.size() - 1, static_cast<std::size_t>(std::ceil(q / 100.0 * w.size())) -
                                             (q > 0 ? 1 : 0));
        s.values.push_back(w.empty() ? std::nan("") : w[k]);
      }
      c.series.push_back(std::move(s));
    }
    wait.blocks.push_back(c);
  }
  rep.sections.push_back(std::move(wait));
  // Per-policy comparison.
  Section cmp{
      "compare", runs.size() > 1 ? "Per-policy comparison" : "Where the GPU-hours went", {}};
  {
    Chart c;
    c.id = "gpu-hours";
    c.title = "GPU-hours by use";
    c.kind = ChartKind::StackedBar;
    c.y_label = "GPU-hours";
    c.y_unit = Unit::Number;
    const std::pair<const char*, double (*)(const Run&)> parts[] = {
        {"useful work", [](const Run& r) { return r.useful_gpu_hours; }},
        {"fragmentation", [](const Run& r) { return r.idle_gpu_hours.fragmentation; }},
        {"queue head blocking", [](const Run& r) { return r.idle_gpu_hours.queue_head_blocking; }},
        {"no demand", [](const Run& r) { return r.idle_gpu_hours.no_demand; }},
        {"failures, restarts", [](const Run& r) { return r.idle_gpu_hours.failures_restarts; }},
        {"preemption", [](const Run& r) { return r.idle_gpu_hours.preemption; }},
        {"interference", [](const Run& r) { return r.idle_gpu_hours.interference; }}};
    for (const Run& r : runs) c.categories.push_back(run_label(r));
    for (const auto& part : parts) {
      Series s{part.first, {}};
      for (const Run& r : runs) s.values.push_back(part.second(r));
      c.series.push_back(std::move(s));
    }
    cmp.blocks.push_back(c);
  }
  if (runs.size() > 1) {
    Chart c;
    c.id = "waits";
    c.title = "Queue wait by policy";
    c.kind = ChartKind::Bar;
    c.y_label = "queue wait";
    c.y_unit = Unit::Seconds;
    Series p50{"p50", {}}, p90{"p90", {}}, mean{"mean", {}};
    for (const Run& r : runs) {
      c.categories.push_back(run_label(r));
      p50.values.push_back(r.wait_s.p50);
      p90.values.push_back(r.wait_s.p90);
      mean.values.push_back(r.wait_s.mean);
    }
    c.series = {p50, p90, mean};
    cmp.blocks.push_back(c);
  }
  rep.sections.push_back(std::move(cmp));
  rep.data_json = doc.dump();
  return rep;
}

}  // namespace tutti::reports
