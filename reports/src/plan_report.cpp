#include "tutti/reports/plan_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/reports/columns.hpp"
#include "tutti/reports/compare.hpp"
#include "tutti/reports/format.hpp"
#include "tutti/reports/result_schema.hpp"

namespace tutti::reports {

namespace {
using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double num(const json& j, std::initializer_list<const char*> ptrs) {
  if (!j.is_object()) return kNaN;
  for (const char* p : ptrs) {
    json::json_pointer jp(p);
    if (j.contains(jp) && j.at(jp).is_number()) return j.at(jp).get<double>();
  }
  return kNaN;
}

std::string str(const json& j, std::initializer_list<const char*> ptrs) {
  if (!j.is_object()) return {};
  for (const char* p : ptrs) {
    json::json_pointer jp(p);
    if (!j.contains(jp)) continue;
    const json& v = j.at(jp);
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<long long>());
    if (v.is_number()) return format_short(v.get<double>());
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  }
  return {};
}

/// "tp=8,pp=4,dp=16" from a string or an object of degrees.
std::string layout_text(const json& c) {
  if (!c.contains("layout")) return {};
  const json& l = c.at("layout");
  if (l.is_string()) return l.get<std::string>();
  if (!l.is_object()) return {};
  if (l.contains("compact") && l.at("compact").is_string())
    return l.at("compact").get<std::string>();
  if (l.contains("string") && l.at("string").is_string()) return l.at("string").get<std::string>();
  std::string out;
  for (const char* k :
       {"tp", "pp", "dp", "cp", "ep", "vp", "zero", "micro_batch", "mb", "recompute"}) {
    if (!l.contains(k)) continue;
    const json& v = l.at(k);
    std::string s = v.is_string()           ? v.get<std::string>()
                    : v.is_number_integer() ? std::to_string(v.get<long long>())
                    : v.is_number()         ? format_short(v.get<double>())
                                            : v.dump();
    out += (out.empty() ? "" : ",") + std::string(k) + "=" + s;
  }
  return out;
}

/// A short human name of a configuration: "256× h100 · rail-optimized 2:1 · InfiniBand · buy".
std::string config_label(const json& c) {
  std::string name = str(c, {"/name", "/label"});
  if (!name.empty()) return name;
  std::string out;
  std::string gpus = str(c, {"/hardware/gpus", "/gpus"});
  std::string gpu = str(c, {"/hardware/gpu", "/gpu", "/hardware/node", "/node"});
  if (!gpus.empty() || !gpu.empty()) out += gpus + (gpus.empty() ? "" : "× ") + gpu;
  std::string fabric = str(c, {"/hardware/fabric", "/fabric"});
  double over = num(c, {"/hardware/oversubscription", "/oversubscription"});
  if (!fabric.empty()) {
    out += (out.empty() ? "" : " · ") + fabric;
    if (std::isfinite(over) && over != 1) out += " " + format_short(over) + ":1";
  }
  std::string net = str(c, {"/hardware/network", "/network"});
  if (!net.empty()) out += (out.empty() ? "" : " · ") + net;
  std::string acq = str(c, {"/hardware/acquisition", "/acquisition"});
  if (!acq.empty()) out += (out.empty() ? "" : " · ") + acq;
  if (out.empty()) out = "configuration " + str(c, {"/index"});
  return out;
}

double cost_of(const json& c) {
  return num(c, {"/total_cost_usd", "/cost/total_cost_usd", "/cost_per_run_usd",
                 "/cost/cost_per_run_usd"});
}
double time_of(const json& c) {
  return num(c, {"/time_to_train_s"});
}
double energy_of(const json& c) {
  return num(c, {"/energy_J", "/energy_per_run_J"});
}

std::string engine_of(const json& c) {
  std::string e = str(c, {"/engine"});
  if (!e.empty()) return e;
  if (c.is_object() && c.contains("native") && c.at("native").is_boolean())
    return c.at("native").get<bool>() ? "native" : "analytic";
  return {};
}

bool same_config(const json& a, const json& b) {
  if (a.is_object() && b.is_object() && a.contains("index") && b.contains("index"))
    return a.at("index") == b.at("index");
  return a == b;
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

std::vector<Cell> config_row(const json& c, const json* rec, bool is_rec) {
  std::vector<Cell> row = {Cell::str(config_label(c), str(c, {"/hardware/storage"}), is_rec),
                           Cell::num(num(c, {"/hardware/gpus", "/gpus"})),
                           Cell::str(layout_text(c)),
                           Cell::num(time_of(c)),
                           Cell::num(cost_of(c)),
                           Cell::num(num(c, {"/capex_usd", "/cost/capex_usd"})),
                           Cell::num(energy_of(c)),
                           Cell::num(num(c, {"/energy_J_per_token"})),
                           Cell::num(num(c, {"/peak_facility_power_W", "/power/peak_facility_W"})),
                           Cell::num(num(c, {"/mfu"})),
                           Cell::str(str(c, {"/bottleneck"})),
                           Cell::str(engine_of(c))};
  if (rec) {
    row.push_back(Cell::num(percent_diff(time_of(c), time_of(*rec))));
    row.push_back(Cell::num(percent_diff(cost_of(c), cost_of(*rec))));
  }
  return row;
}

Chart frontier_chart(const json& pareto, const json* rec) {
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
  std::vector<const json*> by_time;
  for (const auto& p : pareto) by_time.push_back(&p);
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const json* a, const json* b) { return time_of(*a) < time_of(*b); });
  auto point = [&](const json& p) {
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
    double mfu = num(p, {"/mfu"});
    if (std::isfinite(mfu)) pt.details.push_back("MFU: " + format_value(mfu, Unit::Fraction));
    std::string b = str(p, {"/bottleneck"});
    if (!b.empty()) pt.details.push_back("Bottleneck: " + b);
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
    for (const auto& p : pareto) analytic_front = analytic_front || engine_of(p) == "analytic";
    if (analytic_front && engine_of(*rec) == "native")
      c.caption +=
          " Some frontier points were timed by analytic screening and the recommendation by the "
          "flow-level engine (the table's \"Timed by\" column says which).";
  }
  if (sorted.size() > 1)
    c.point_series.push_back(PointSeries{"Frontier line", sorted, false, true});
  return c;
}

Table breakdown_table(const json& rec) {
  Table t;
  t.id = "recommended-breakdown";
  t.title = "Iteration breakdown of the recommendation";
  t.columns = {column("part"), column("time_s"), column("share", "Of the iteration time")};
  double iter = num(rec, {"/iteration_time_s"});
  auto add = [&](const std::string& name, double v) {
    if (!std::isfinite(v) || v == 0) return;
    t.rows.push_back({Cell::str(name), Cell::num(v), Cell::num(iter > 0 ? v / iter : kNaN)});
  };
  add("Compute", num(rec, {"/breakdown/compute_s"}));
  for (GroupDim d : enum_values<GroupDim>())
    add("Exposed " + dim_label(d),
        num(rec, {(std::string("/breakdown/exposed_comm_s/") + to_string(d)).c_str()}));
  add("Pipeline bubble", num(rec, {"/breakdown/bubble_s"}));
  add("Other", num(rec, {"/breakdown/other_s"}));
  if (!t.rows.empty())
    t.rows.push_back({Cell::str("Iteration", "", true), Cell::num(iter, "", true), Cell::num(1.0)});
  return t;
}

Table bom_table(const json& rec) {
  Table t;
  t.id = "recommended-bom";
  t.title = "Bill of materials of the recommendation";
  t.columns = {column("item"), column("count"), column("cost_usd"), column("power_W")};
  if (!rec.is_object()) return t;
  // `tutti plan --json`: bill_of_materials{..., items[]}; older shapes: bom[].
  const json* src = nullptr;
  if (rec.contains("bill_of_materials") && rec.at("bill_of_materials").is_object() &&
      rec.at("bill_of_materials").contains("items"))
    src = &rec.at("bill_of_materials").at("items");
  else if (rec.contains("bom"))
    src = &rec.at("bom");
  if (!src) return t;
  const json& bom = *src;
  auto add = [&](const std::string& key, const json& e) {
    if (!e.is_object()) return;
    std::string item = str(e, {"/item", "/part", "/name", "/id"});
    if (item.empty()) item = key;
    std::string tier = str(e, {"/role", "/tier", "/kind"});
    if (!tier.empty()) item += " (" + tier + ")";
    t.rows.push_back({Cell::str(item), Cell::num(num(e, {"/count", "/quantity"})),
                      Cell::num(num(e, {"/cost_usd", "/total_usd", "/price_usd"})),
                      Cell::num(num(e, {"/power_W"}))});
  };
  if (bom.is_array())
    for (const auto& e : bom) add({}, e);
  else if (bom.is_object())
    for (const auto& [k, e] : bom.items()) {
      if (e.is_number())
        t.rows.push_back({Cell::str(k), Cell::none(), Cell::num(e.get<double>()), Cell::none()});
      else
        add(k, e);
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
Report build_plan_report_unchecked(const nlohmann::json& plan) {
  if (!plan.is_object() || (!plan.contains("pareto") && !plan.contains("recommended")))
    throw InputError(
        "", "pareto", plan.is_object() ? "no \"pareto\" nor \"recommended\"" : describe_json(plan),
        "a plan as `tutti plan --json` prints it (keys recommended, pareto, evaluated, feasible)");
  check_result(plan, "plan_result.schema.json",
               "");  // every key the report reads, typed: exit 2 if not
  const json empty = json::array();
  const json& pareto =
      plan.contains("pareto") && plan.at("pareto").is_array() ? plan.at("pareto") : empty;
  const json* rec = plan.contains("recommended") && plan.at("recommended").is_object() &&
                            !plan.at("recommended").empty()
                        ? &plan.at("recommended")
                        : nullptr;
  Report r;
  r.kind = "plan";
  std::string wname = str(plan, {"/workload/name", "/request/workload", "/workload/file"});
  r.title = "Capacity plan" + (wname.empty() ? std::string() : " for " + wname);
  double evaluated = num(plan, {"/evaluated"}), feasible = num(plan, {"/feasible"});
  r.subtitle = format_value(evaluated, Unit::Count) + " configurations evaluated, " +
               format_value(feasible, Unit::Count) + " feasible, " + std::to_string(pareto.size()) +
               " on the Pareto frontier";
  r.primary_table = "pareto";
  r.data_json = plan.dump();

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
    const json* fastest = nullptr;
    const json* cheapest = nullptr;
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
    std::string reason = str(plan, {"/reason"});
    r.notices.push_back(Callout{
        Callout::Level::Error,
        "Nothing fits:", reason.empty() ? "the plan has no recommended configuration." : reason});
  }
  if (plan.contains("calibration_defaults"))
    for (auto& c : calibration_default_notices(plan["calibration_defaults"]))
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
  std::vector<const json*> order;
  for (const auto& p : pareto) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(),
                   [](const json* a, const json* b) { return time_of(*a) < time_of(*b); });
  for (std::size_t k = 0; k < order.size(); ++k) {
    const bool is_rec = rec && same_config(*order[k], *rec);
    pt.rows.push_back(config_row(*order[k], rec, is_rec));
    pt.rows.back().insert(pt.rows.back().begin(),
                          Cell::str("#" + std::to_string(k + 1), "", is_rec));
  }
  if (!pt.rows.empty()) {
    pt.caption = "The recommendation is in bold.";
    if (plan.contains("retimed") && plan.at("retimed").is_number())
      pt.caption += " The frontier is that of the " + plan.at("retimed").dump() +
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
    kvrow("GPU", str(*rec, {"/hardware/gpu", "/gpu"}));
    kvrow("Node", str(*rec, {"/hardware/node", "/node"}));
    kvrow("Nodes", str(*rec, {"/hardware/nodes", "/nodes"}));
    kvrow("GPUs", str(*rec, {"/hardware/gpus", "/gpus"}));
    kvrow("Fabric", str(*rec, {"/hardware/fabric", "/fabric"}));
    kvrow("Oversubscription", str(*rec, {"/hardware/oversubscription", "/oversubscription"}));
    kvrow("Network", str(*rec, {"/hardware/network", "/network"}));
    kvrow("Storage", str(*rec, {"/hardware/storage", "/storage"}));
    kvrow("Acquisition", str(*rec, {"/hardware/acquisition", "/acquisition"}));
    kvrow("Parallel layout", layout_text(*rec));
    kvrow("Iteration time", format_value(num(*rec, {"/iteration_time_s"}), Unit::Seconds));
    kvrow("Time to train", format_value(time_of(*rec), Unit::Seconds));
    kvrow("Total cost", format_value(cost_of(*rec), Unit::Usd));
    kvrow("Capex", format_value(num(*rec, {"/capex_usd", "/cost/capex_usd"}), Unit::Usd));
    kvrow("Run opex", format_value(num(*rec, {"/run_opex_usd"}), Unit::Usd));
    kvrow("Energy per run", format_value(energy_of(*rec), Unit::Joules));
    kvrow("Energy per token", format_value(num(*rec, {"/energy_J_per_token"}), Unit::Joules));
    kvrow("Average IT power",
          format_value(num(*rec, {"/avg_it_power_W", "/power/avg_it_W"}), Unit::Watts));
    kvrow("Peak facility power",
          format_value(num(*rec, {"/peak_facility_power_W", "/power/facility_W"}), Unit::Watts));
    kvrow("Memory per GPU", format_value(num(*rec, {"/memory_per_gpu_bytes"}), Unit::Bytes));
    kvrow("MFU", format_value(num(*rec, {"/mfu"}), Unit::Fraction));
    kvrow("Bottleneck", str(*rec, {"/bottleneck"}));
    kvrow("Timed by", engine_of(*rec));
    rs.blocks.push_back(std::move(kv));
    Table bt = breakdown_table(*rec);
    if (!bt.rows.empty()) rs.blocks.push_back(std::move(bt));
    Table bom = bom_table(*rec);
    if (!bom.rows.empty()) rs.blocks.push_back(std::move(bom));
    const json::json_pointer origins_at("/facility/cost/origins");
    if (rec->contains(origins_at)) {
      Table ot = price_origins_table({{config_label(*rec), rec->at(origins_at)}});
      if (!ot.rows.empty()) rs.blocks.push_back(std::move(ot));
    }
    r.sections.push_back(std::move(rs));
  }

  Section ru{"runners-up", "Runners-up", {}};
  const json& finalists =
      plan.contains("finalists") && plan.at("finalists").is_array() ? plan.at("finalists") : empty;
  Table rt;
  rt.id = "runners-up";
  rt.title = "Runners-up";
  rt.columns = config_columns(rec != nullptr);
  const json& pool = finalists.empty() ? pareto : finalists;
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
  const json& alternatives = plan.contains("alternatives") && plan.at("alternatives").is_array()
                                 ? plan.at("alternatives")
                                 : empty;
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

  if (plan.contains("constraints") && plan.at("constraints").is_array() &&
      !plan.at("constraints").empty()) {
    Section cs{"constraints", "Constraints that shaped the answer", {}};
    Table ct;
    ct.id = "constraints";
    ct.title = "Constraints and search bounds";
    ct.columns = {column("constraint"), column("value")};
    for (const auto& c : plan.at("constraints"))
      ct.rows.push_back({Cell::str(str(c, {"/constraint"})), Cell::str(str(c, {"/value"}))});
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
  for (const char* k : {"evaluated", "simulated", "pruned", "feasible"}) {
    double v = num(plan, {(std::string("/") + k).c_str()});
    if (std::isfinite(v)) st.rows.push_back({Cell::str(k), Cell::num(v)});
  }
  if (plan.contains("violations") && plan.at("violations").is_object())
    for (const auto& [k, v] : plan.at("violations").items())
      if (v.is_number())
        st.rows.push_back({Cell::str("violates " + k), Cell::num(v.get<double>())});
  if (!st.rows.empty()) ss.blocks.push_back(std::move(st));
  const char* miss_key = plan.contains("nearest_miss") ? "nearest_miss" : "nearest";
  if (plan.contains(miss_key) && plan.at(miss_key).is_object() && !rec) {
    Table nt;
    nt.id = "nearest";
    nt.title = "Nearest miss";
    nt.columns = config_columns(false);
    nt.rows.push_back(config_row(plan.at(miss_key), nullptr, false));
    if (plan.at(miss_key).contains("violations"))
      nt.caption = "Violates: " + plan.at(miss_key).at("violations").dump() + ".";
    ss.blocks.push_back(std::move(nt));
  }
  if (!ss.blocks.empty()) r.sections.push_back(std::move(ss));
  return r;
}
}  // namespace

}  // namespace tutti::reports
