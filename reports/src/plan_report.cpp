#include "tutti/reports/plan_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/plan/plan_result.hpp"
#include "tutti/reports/columns.hpp"
#include "tutti/reports/compare.hpp"
#include "tutti/reports/format.hpp"

namespace tutti::reports {

namespace {
using nlohmann::json;
using Config = PlanConfigurationView;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string count_text(std::optional<std::int64_t> v) {
  return v ? std::to_string(*v) : std::string();
}

/// "tp=8,pp=4,dp=16": the writer's compact string, a hand-written `string`, else the degrees.
std::string layout_text(const Config& c) {
  const Config::Layout& l = c.layout;
  if (!l.compact.empty()) return l.compact;
  if (!l.string.empty()) return l.string;
  std::string out;
  auto add = [&](const char* k, const std::string& v) {
    if (!v.empty()) out += (out.empty() ? "" : ",") + std::string(k) + "=" + v;
  };
  add("tp", count_text(l.tp));
  add("pp", count_text(l.pp));
  add("dp", count_text(l.dp));
  add("cp", count_text(l.cp));
  add("ep", count_text(l.ep));
  add("vp", count_text(l.vp));
  add("zero", count_text(l.zero));
  add("micro_batch", count_text(l.micro_batch));
  add("recompute", l.recompute);
  return out;
}

/// A short human name of a configuration: "256× h100 · rail-optimized 2:1 · InfiniBand · buy".
std::string config_label(const Config& c) {
  std::string out;
  std::string gpus = std::to_string(c.gpus);
  out += gpus + "× " + c.gpu;
  if (!c.fabric.empty()) {
    out += " · " + c.fabric;
    if (std::isfinite(c.oversubscription) && c.oversubscription != 1)
      out += " " + format_short(c.oversubscription) + ":1";
  }
  if (!c.network.empty()) out += " · " + c.network;
  if (!c.acquisition.empty()) out += " · " + c.acquisition;
  return out;
}

double cost_of(const Config& c) {
  return c.total_cost_usd;
}
double time_of(const Config& c) {
  return c.time_to_train_s;
}
double energy_of(const Config& c) {
  return c.energy_J;
}

/// The same configuration: the same global index (every configuration `tutti plan` writes has
/// one), else the same hardware, layout, time and cost.
bool same_config(const Config& a, const Config& b) {
  if (a.index && b.index) return *a.index == *b.index;
  return config_label(a) == config_label(b) && layout_text(a) == layout_text(b) &&
         time_of(a) == time_of(b) && cost_of(a) == cost_of(b);
}

std::vector<Column> config_columns(bool with_delta) {
  std::vector<Column> cols = {
      column("configuration", "GPUs × GPU type · fabric · network · buy or rent"),
      column("gpus"),
      column("layout", "Parallel layout"),
      column("time_to_train_s"),
      column("total_cost_usd", "Capex (or rental) + the run's opex"),
      column("capex_usd", "Purchase price of everything bought"),
      column("energy_J", "Facility energy of the run"),
      column("energy_J_per_token", "Facility energy of the run per training token"),
      column("peak_facility_power_W"),
      column("mfu"),
      column("bottleneck", "Largest part of the iteration breakdown"),
      column("engine", "native = flow-level engine, analytic = screening")};
  if (with_delta) {
    cols.push_back(column("time_vs_recommended_pct", "Relative to the recommendation"));
    cols.push_back(column("cost_vs_recommended_pct", "Relative to the recommendation"));
  }
  return cols;
}

std::vector<Cell> config_row(const Config& c, const Config* rec, bool is_rec) {
  std::vector<Cell> row = {Cell::str(config_label(c), c.storage, is_rec),
                           Cell::num(static_cast<double>(c.gpus)),
                           Cell::str(layout_text(c)),
                           Cell::num(time_of(c)),
                           Cell::num(cost_of(c)),
                           Cell::num(c.capex_usd),
                           Cell::num(energy_of(c)),
                           Cell::num(c.energy_J_per_token),
                           Cell::num(c.peak_facility_power_W),
                           Cell::num(c.mfu),
                           Cell::str(c.bottleneck),
                           Cell::str(c.engine)};
  if (rec) {
    row.push_back(Cell::num(percent_diff(time_of(c), time_of(*rec))));
    row.push_back(Cell::num(percent_diff(cost_of(c), cost_of(*rec))));
  }
  return row;
}

Chart frontier_chart(const std::vector<Config>& pareto, const Config* rec) {
  Chart c;
  c.id = "pareto";
  c.title = "Pareto frontier: time to train vs total cost";
  c.caption =
      "Each point is a configuration no other beats on time, cost and energy at once. Point size "
      "and colour "
      "show the run's energy (larger, yellower = more). Hover a point for its hardware and layout.";
  c.kind = ChartKind::Bubble;
  c.x_label = "Time to train";
  c.x_unit = Unit::Seconds;
  c.y_label = "Total cost";
  c.y_unit = Unit::Usd;
  c.size_label = c.color_label = "Energy per run";
  double emin = INFINITY, emax = -INFINITY;
  for (const auto& p : pareto) {
    double e = energy_of(p);
    if (std::isfinite(e)) {
      emin = std::min(emin, e);
      emax = std::max(emax, e);
    }
  }
  // Tag "#k": the point's row in the frontier table (fastest first).
  std::vector<const Config*> by_time;
  for (const auto& p : pareto) by_time.push_back(&p);
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const Config* a, const Config* b) { return time_of(*a) < time_of(*b); });
  auto point = [&](const Config& p) {
    Point pt;
    for (std::size_t k = 0; k < by_time.size(); ++k)
      if (same_config(*by_time[k], p)) pt.tag = "#" + std::to_string(k + 1);
    pt.x = time_of(p);
    pt.y = cost_of(p);
    double e = energy_of(p);
    double n = std::isfinite(e) && emax > emin ? (e - emin) / (emax - emin) : 0.5;
    pt.size = pt.color = n;
    pt.label = config_label(p);
    std::string layout = layout_text(p);
    if (!layout.empty()) pt.details.push_back("Layout: " + layout);
    pt.details.push_back("Energy: " + format_value(e, Unit::Joules));
    if (std::isfinite(p.mfu)) pt.details.push_back("MFU: " + format_value(p.mfu, Unit::Fraction));
    if (!p.bottleneck.empty()) pt.details.push_back("Bottleneck: " + p.bottleneck);
    return pt;
  };
  PointSeries frontier{"Pareto frontier", {}, false, false};
  std::vector<Point> sorted;
  for (const auto& p : pareto) {
    if (rec && same_config(p, *rec)) continue;
    frontier.points.push_back(point(p));
  }
  for (const auto& p : pareto) sorted.push_back(point(p));
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Point& a, const Point& b) { return a.x < b.x; });
  if (!frontier.points.empty()) c.point_series.push_back(std::move(frontier));
  if (rec) {
    c.point_series.push_back(PointSeries{"Recommended", {point(*rec)}, true, false});
    bool analytic_front = false;
    for (const auto& p : pareto) analytic_front = analytic_front || p.engine == "analytic";
    if (analytic_front && rec->engine == "native")
      c.caption +=
          " Some frontier points were timed by analytic screening and the recommendation by the "
          "flow-level engine (the table's \"Timed by\" column says which).";
  }
  if (sorted.size() > 1)
    c.point_series.push_back(PointSeries{"Frontier line", sorted, false, true});
  return c;
}

Table breakdown_table(const Config& rec) {
  Table t;
  t.id = "recommended-breakdown";
  t.title = "Iteration breakdown of the recommendation";
  t.columns = {column("part"), column("time_s"), column("share", "Of the iteration time")};
  const double iter = rec.iteration_time_s;
  auto add = [&](const std::string& name, double v) {
    if (!std::isfinite(v) || v == 0) return;
    t.rows.push_back({Cell::str(name), Cell::num(v), Cell::num(iter > 0 ? v / iter : kNaN)});
  };
  add("Compute", rec.breakdown.compute_s);
  for (GroupDim d : enum_values<GroupDim>()) {
    const auto it = rec.breakdown.exposed_comm_s.find(to_string(d));
    add("Exposed " + dim_label(d), it == rec.breakdown.exposed_comm_s.end() ? kNaN : it->second);
  }
  add("Pipeline bubble", rec.breakdown.bubble_s);
  add("Other", rec.breakdown.other_s);
  if (!t.rows.empty())
    t.rows.push_back({Cell::str("Iteration", "", true), Cell::num(iter, "", true), Cell::num(1.0)});
  return t;
}

Table bom_table(const Config& rec) {
  Table t;
  t.id = "recommended-bom";
  t.title = "Bill of materials of the recommendation";
  t.columns = {column("item"), column("count"), column("cost_usd"), column("power_W")};
  for (const PlanBomLineView& e : rec.bill_of_materials) {
    std::string item = !e.name.empty() ? e.name : e.id;
    if (!e.role.empty()) item += " (" + e.role + ")";
    t.rows.push_back(
        {Cell::str(item), Cell::num(e.count), Cell::num(e.price_usd), Cell::num(e.power_W)});
  }
  return t;
}

}  // namespace

namespace {
Report build_plan_report_unchecked(const nlohmann::json& plan);
}  // namespace

// The document is read with nlohmann's typed accessors; a value of the wrong type or a missing
// member deep inside is bad input (exit 2), never an internal error.
Report build_plan_report(const nlohmann::json& plan) {
  try {
    return build_plan_report_unchecked(plan);
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    auto close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
    throw InputError("", "(document)", what, "a plan as `tutti plan --json` prints it");
  }
}

namespace {
Report build_plan_report_unchecked(const nlohmann::json& doc) {
  // Every key the report reads, typed (schemas/plan_result.schema.json): exit 2 if not.
  const PlanResultView plan = PlanResultView::from_json(doc, "");
  const std::vector<Config>& pareto = plan.pareto;
  const Config* rec = plan.recommended ? &*plan.recommended : nullptr;
  Report r;
  r.kind = "plan";
  r.title = "Capacity plan" + (plan.workload.empty() ? std::string() : " for " + plan.workload);
  r.subtitle = format_value(plan.evaluated, Unit::Count) + " configurations evaluated, " +
               format_value(plan.feasible, Unit::Count) + " feasible, " +
               std::to_string(pareto.size()) + " on the Pareto frontier";
  r.primary_table = "pareto";
  r.data_json = doc.dump();

  if (rec) {
    VerdictItem v;
    v.criterion = "Recommended";
    v.winner = config_label(*rec);
    v.detail = format_value(time_of(*rec), Unit::Seconds) + " to train, " +
               format_value(cost_of(*rec), Unit::Usd) + " total, " +
               format_value(energy_of(*rec), Unit::Joules);
    std::string layout = layout_text(*rec);
    if (!layout.empty()) v.detail += "; layout " + layout;
    v.margin_pct = kNaN;
    r.verdict.push_back(v);
    // Fastest and cheapest on the frontier, and how far the recommendation is from each.
    const Config* fastest = nullptr;
    const Config* cheapest = nullptr;
    for (const auto& p : pareto) {
      if (std::isfinite(time_of(p)) && (!fastest || time_of(p) < time_of(*fastest))) fastest = &p;
      if (std::isfinite(cost_of(p)) && (!cheapest || cost_of(p) < cost_of(*cheapest)))
        cheapest = &p;
    }
    if (fastest) {
      VerdictItem f{"Fastest on the frontier", config_label(*fastest),
                    format_value(time_of(*fastest), Unit::Seconds) + " to train at " +
                        format_value(cost_of(*fastest), Unit::Usd),
                    percent_diff(time_of(*rec), time_of(*fastest))};
      if (same_config(*fastest, *rec))
        f.detail += " (the recommendation)";
      else
        f.detail += "; the recommendation takes " + format_sig(f.margin_pct) + "% longer";
      r.verdict.push_back(f);
    }
    if (cheapest) {
      VerdictItem c{"Cheapest on the frontier", config_label(*cheapest),
                    format_value(cost_of(*cheapest), Unit::Usd) + " total, " +
                        format_value(time_of(*cheapest), Unit::Seconds) + " to train",
                    percent_diff(cost_of(*rec), cost_of(*cheapest))};
      if (same_config(*cheapest, *rec))
        c.detail += " (the recommendation)";
      else
        c.detail += "; the recommendation costs " + format_sig(c.margin_pct) + "% more";
      r.verdict.push_back(c);
    }
  } else {
    r.notices.push_back(
        Callout{Callout::Level::Error, "Nothing fits:",
                plan.reason.empty() ? "the plan has no recommended configuration." : plan.reason});
  }
  if (!plan.calibration_defaults.is_null())
    for (auto& c : calibration_default_notices(plan.calibration_defaults))
      r.notices.push_back(std::move(c));

  Section front{"frontier", "Pareto frontier", {}};
  Chart chart = frontier_chart(pareto, rec);
  if (chart.has_data())
    front.blocks.push_back(std::move(chart));
  else
    front.blocks.push_back(Callout{Callout::Level::Warning, "No frontier to draw:",
                                   "no feasible configuration has a time to train and a cost."});
  Table pt;
  pt.id = "pareto";
  pt.title = "Configurations on the frontier (fastest first)";
  pt.columns = config_columns(rec != nullptr);
  pt.columns.insert(pt.columns.begin(), column("point", "The point's tag in the chart"));
  std::vector<const Config*> order;
  for (const auto& p : pareto) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(),
                   [](const Config* a, const Config* b) { return time_of(*a) < time_of(*b); });
  for (std::size_t k = 0; k < order.size(); ++k) {
    const bool is_rec = rec && same_config(*order[k], *rec);
    pt.rows.push_back(config_row(*order[k], rec, is_rec));
    pt.rows.back().insert(pt.rows.back().begin(),
                          Cell::str("#" + std::to_string(k + 1), "", is_rec));
  }
  if (!pt.rows.empty()) {
    pt.caption = "The recommendation is in bold.";
    if (plan.retimed)
      pt.caption += " The frontier is that of the " + std::to_string(*plan.retimed) +
                    " configurations the flow-level engine timed (the screening frontier, the "
                    "finalists and the best of each GPU type and fabric), the set the "
                    "recommendation was picked from.";
    front.blocks.push_back(std::move(pt));
  }
  r.sections.push_back(std::move(front));

  if (rec) {
    Section rs{"recommendation", "The recommendation", {}};
    Table kv;
    kv.id = "recommended";
    kv.title = config_label(*rec);
    kv.columns = {column("field"), column("value")};
    auto kvrow = [&](const std::string& k, const std::string& v) {
      if (!v.empty() && v != "n/a") kv.rows.push_back({Cell::str(k), Cell::str(v)});
    };
    kvrow("GPU", rec->gpu);
    kvrow("Node", rec->node);
    kvrow("Nodes", count_text(rec->nodes));
    kvrow("GPUs", std::to_string(rec->gpus));
    kvrow("Fabric", rec->fabric);
    kvrow("Oversubscription",
          std::isfinite(rec->oversubscription) ? format_short(rec->oversubscription) : "");
    kvrow("Network", rec->network);
    kvrow("Storage", rec->storage);
    kvrow("Acquisition", rec->acquisition);
    kvrow("Parallel layout", layout_text(*rec));
    kvrow("Iteration time", format_value(rec->iteration_time_s, Unit::Seconds));
    kvrow("Time to train", format_value(time_of(*rec), Unit::Seconds));
    kvrow("Total cost", format_value(cost_of(*rec), Unit::Usd));
    kvrow("Capex", format_value(rec->capex_usd, Unit::Usd));
    kvrow("Run opex", format_value(rec->run_opex_usd, Unit::Usd));
    kvrow("Energy per run", format_value(energy_of(*rec), Unit::Joules));
    kvrow("Energy per token", format_value(rec->energy_J_per_token, Unit::Joules));
    kvrow("Average IT power", format_value(rec->avg_it_power_W, Unit::Watts));
    kvrow("Peak facility power", format_value(rec->peak_facility_power_W, Unit::Watts));
    kvrow("Memory per GPU", format_value(rec->memory_per_gpu_bytes, Unit::Bytes));
    kvrow("MFU", format_value(rec->mfu, Unit::Fraction));
    kvrow("Bottleneck", rec->bottleneck);
    kvrow("Timed by", rec->engine);
    rs.blocks.push_back(std::move(kv));
    Table bt = breakdown_table(*rec);
    if (!bt.rows.empty()) rs.blocks.push_back(std::move(bt));
    Table bom = bom_table(*rec);
    if (!bom.rows.empty()) rs.blocks.push_back(std::move(bom));
    if (!rec->price_origins.is_null()) {
      Table ot = price_origins_table({{config_label(*rec), rec->price_origins}});
      if (!ot.rows.empty()) rs.blocks.push_back(std::move(ot));
    }
    r.sections.push_back(std::move(rs));
  }

  Section ru{"runners-up", "Runners-up", {}};
  const std::vector<Config>& finalists = plan.finalists;
  Table rt;
  rt.id = "runners-up";
  rt.title = "Runners-up";
  rt.columns = config_columns(rec != nullptr);
  const std::vector<Config>& pool = finalists.empty() ? pareto : finalists;
  for (const auto& p : pool)
    if (!rec || !same_config(p, *rec)) rt.rows.push_back(config_row(p, rec, false));
  if (rt.rows.empty()) {
    ru.blocks.push_back(
        Callout{Callout::Level::Info, "No runners-up:",
                rec ? "the recommendation is the only configuration left." : "nothing fits."});
  } else {
    rt.caption = finalists.empty()
                     ? "The other configurations of the frontier."
                     : "The other finalists, re-simulated with the flow-level engine.";
    ru.blocks.push_back(std::move(rt));
  }
  const std::vector<Config>& alternatives = plan.alternatives;
  if (!alternatives.empty()) {
    Table at;
    at.id = "alternatives";
    at.title = "Best on other hardware";
    at.columns = config_columns(rec != nullptr);
    for (const auto& p : alternatives) at.rows.push_back(config_row(p, rec, false));
    at.caption =
        "The best configuration of each other GPU type and fabric that meets every constraint.";
    ru.blocks.push_back(std::move(at));
  }
  r.sections.push_back(std::move(ru));

  if (!plan.constraints.empty()) {
    Section cs{"constraints", "Constraints that shaped the answer", {}};
    Table ct;
    ct.id = "constraints";
    ct.title = "Constraints and search bounds";
    ct.columns = {column("constraint"), column("value")};
    for (const auto& [constraint, value] : plan.constraints)
      ct.rows.push_back({Cell::str(constraint), Cell::str(value)});
    ct.caption =
        "A configuration outside these bounds was not searched; widen them in the request to see "
        "it.";
    cs.blocks.push_back(std::move(ct));
    r.sections.push_back(std::move(cs));
  }

  Section ss{"search", "The search", {}};
  Table st;
  st.id = "search";
  st.title = "Search counts";
  st.columns = {column("what"), column("count")};
  for (const auto& [k, v] : {std::pair{"evaluated", plan.evaluated},
                             {"simulated", plan.simulated},
                             {"pruned", plan.pruned},
                             {"feasible", plan.feasible}})
    if (std::isfinite(v)) st.rows.push_back({Cell::str(k), Cell::num(v)});
  for (const auto& [k, v] : plan.violations)
    st.rows.push_back({Cell::str("violates " + k), Cell::num(v)});
  if (!st.rows.empty()) ss.blocks.push_back(std::move(st));
  if (plan.nearest_miss && !rec) {
    Table nt;
    nt.id = "nearest";
    nt.title = "Nearest miss";
    nt.columns = config_columns(false);
    nt.rows.push_back(config_row(*plan.nearest_miss, nullptr, false));
    if (plan.nearest_miss->violations)
      nt.caption = "Violates: " + json(*plan.nearest_miss->violations).dump() + ".";
    ss.blocks.push_back(std::move(nt));
  }
  if (!ss.blocks.empty()) r.sections.push_back(std::move(ss));
  return r;
}
}  // namespace

}  // namespace tutti::reports
