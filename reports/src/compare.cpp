#include "tutti/reports/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/facility/simulation_document.hpp"
#include "tutti/reports/columns.hpp"
#include "tutti/reports/format.hpp"
#include "tutti/topologies/topology_result.hpp"

namespace tutti::reports {

namespace {
using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The number at `ptr` in `j`, or NaN when absent or not a number.
double get(const json& j, const char* ptr) {
  if (!j.is_object()) return kNaN;
  json::json_pointer p(ptr);
  if (!j.contains(p)) return kNaN;
  const json& v = j.at(p);
  return v.is_number() ? v.get<double>() : kNaN;
}

std::string get_str(const json& j, const char* key, std::string dflt = {}) {
  if (j.is_object() && j.contains(key) && j.at(key).is_string())
    return j.at(key).get<std::string>();
  return dflt;
}

constexpr auto kDims = enum_values<GroupDim>();
constexpr int kNumDims = static_cast<int>(kDims.size());

// The simulations and topologies of a comparison, read through their typed readers
// (simulation_document.hpp, topology_result.hpp: checked against their schema, exit 2 naming the
// key path); the comparison's own keys (name, ok, oversubscription, ...) are read here.
struct Arch {
  std::string name, file, description, error, layout;
  bool ok = false;
  std::optional<SimulationDocument> sim;  ///< When ok.
  std::optional<TopologyResult> topo;     ///< When the architecture has one.
  json over;
  /// Per oversubscription point (same index): its simulation (ok points) and topology.
  std::vector<std::optional<SimulationDocument>> point_sim;
  std::vector<std::optional<TopologyResult>> point_topo;
  double gpus = kNaN;
  double iter_s = kNaN, ttt_s = kNaN, tok_per_s_gpu = kNaN, mfu = kNaN, exposed_s = kNaN;
  double compute_s = kNaN, bubble_s = kNaN, other_s = kNaN;
  std::array<double, kNumDims> dims_s = [] {
    std::array<double, kNumDims> a;
    a.fill(kNaN);
    return a;
  }();
  double net_capex_usd = kNaN, net_power_W = kNaN, capex_usd = kNaN, cost_run_usd = kNaN;
  double usd_per_mtok = kNaN, energy_J = kNaN, cloud_run_usd = kNaN, avg_it_W = kNaN;
  double energy_J_per_token = kNaN;  ///< Facility energy per training token (physical).
  double effective_ttt_s = kNaN, goodput = kNaN;
};

double known(const std::optional<double>& v) {
  return v.value_or(kNaN);
}

/// Reads architecture `a` (at `at` in the comparison). The simulation (of an ok architecture, and
/// of each ok oversubscription point) and the topology go through their strict readers, so a
/// wrong or missing key is exit 2 naming it (architectures.1.topology.network_capex_usd), never
/// an n/a cell.
Arch read_arch(const json& a, double tokens, const std::string& at) {
  Arch r;
  r.name = get_str(a, "name", "(unnamed)");
  r.file = get_str(a, "cluster_file");
  r.description = get_str(a, "description");
  r.ok = a.value("ok", false);
  r.error = get_str(a, "error");
  r.layout = get_str(a, "layout");
  if (r.ok)
    r.sim = simulation_document_from_json(a.contains("simulation") ? a.at("simulation") : json(),
                                          "", at + ".simulation");
  if (a.contains("topology"))
    r.topo = topology_result_from_json(a.at("topology"), "", at + ".topology");
  r.over = a.value("oversubscription", json::object());
  if (r.over.is_object() && r.over.contains("points") && r.over.at("points").is_array()) {
    const json& pts = r.over.at("points");
    r.point_sim.resize(pts.size());
    r.point_topo.resize(pts.size());
    for (std::size_t k = 0; k < pts.size(); ++k) {
      if (!pts[k].is_object()) continue;
      const std::string pt = fmt::format("{}.oversubscription.points.{}", at, k);
      if (pts[k].value("ok", false) && pts[k].contains("simulation"))
        r.point_sim[k] =
            simulation_document_from_json(pts[k].at("simulation"), "", pt + ".simulation");
      if (pts[k].contains("topology"))
        r.point_topo[k] = topology_result_from_json(pts[k].at("topology"), "", pt + ".topology");
    }
  }
  r.gpus = get(a, "/gpus");
  if (!std::isfinite(r.gpus) && r.topo) r.gpus = static_cast<double>(r.topo->gpus);
  if (r.topo) {
    r.net_capex_usd = r.topo->network_capex_usd;
    r.net_power_W = r.topo->network_power_W;
  }
  if (!r.ok) return r;
  const SimulationDocument& s = *r.sim;
  r.iter_s = s.iteration_time_s;
  r.ttt_s = s.time_to_train_s;
  r.tok_per_s_gpu = s.tokens_per_s_per_gpu;
  r.mfu = s.mfu;
  r.compute_s = s.compute_s;
  r.bubble_s = s.bubble_s;
  r.other_s = s.other_s;
  double exposed = 0;
  bool any = false;
  for (int i = 0; i < kNumDims; ++i) {
    r.dims_s[i] = known(s.exposed(to_string(kDims[i])));
    if (std::isfinite(r.dims_s[i])) {
      exposed += r.dims_s[i];
      any = true;
    }
  }
  r.exposed_s = any ? exposed : kNaN;
  const SimulationFacility& f = s.facility;
  r.capex_usd = known(f.capex_usd);
  r.cost_run_usd = known(f.cost_per_run_usd);
  r.usd_per_mtok = known(f.usd_per_million_tokens);
  if (!std::isfinite(r.usd_per_mtok) && std::isfinite(r.cost_run_usd) && tokens > 0)
    r.usd_per_mtok = r.cost_run_usd / tokens * 1e6;
  r.cloud_run_usd = known(f.cloud_cost_per_run_usd);
  r.energy_J = known(f.energy_per_run_J);
  r.energy_J_per_token = known(f.physical_J_per_token);
  r.effective_ttt_s = known(f.effective_time_to_train_s);
  r.goodput = known(f.goodput);
  r.avg_it_W = known(f.avg_it_W);
  return r;
}

/// Index of the smallest finite value among ok architectures, or -1.
int best_index(const std::vector<Arch>& as, double Arch::*f) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(as.size()); ++i) {
    if (!as[i].ok || !std::isfinite(as[i].*f)) continue;
    if (best < 0 || as[i].*f < as[best].*f) best = i;
  }
  return best;
}

VerdictItem verdict_for(const std::vector<Arch>& as, double Arch::*f, const char* criterion,
                        Unit unit, const char* better, const char* missing) {
  VerdictItem v;
  v.criterion = criterion;
  v.margin_pct = kNaN;
  std::vector<int> idx;
  for (int i = 0; i < static_cast<int>(as.size()); ++i)
    if (as[i].ok && std::isfinite(as[i].*f)) idx.push_back(i);
  if (idx.empty()) {
    v.detail = missing;
    return v;
  }
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return as[a].*f < as[b].*f; });
  const Arch& w = as[idx[0]];
  if (idx.size() == 1) {
    v.winner = w.name;
    v.detail = format_value(w.*f, unit) + "; nothing to compare it with";
    return v;
  }
  const Arch& r = as[idx[1]];
  double a = w.*f, b = r.*f;
  v.margin_pct = b != 0 ? (b - a) / b * 100.0 : 0.0;
  if (std::fabs(b - a) <= 1e-9 * std::max(std::fabs(a), std::fabs(b))) {
    v.winner = "tie";
    v.detail = w.name + " and " + r.name + " are equal (" + format_value(a, unit) + ")";
    v.margin_pct = 0;
    return v;
  }
  v.winner = w.name;
  v.detail = format_sig(v.margin_pct) + "% " + better + " than " + r.name + " (" +
             format_value(a, unit) + " vs " + format_value(b, unit) + ")";
  if (idx.size() > 2) {
    const Arch& last = as[idx.back()];
    double m = last.*f != 0 ? (last.*f - a) / last.*f * 100.0 : 0.0;
    v.detail += "; " + format_sig(m) + "% " + better + " than the last, " + last.name;
  }
  return v;
}

std::vector<const Arch*> ok_archs(const std::vector<Arch>& as) {
  std::vector<const Arch*> out;
  for (const auto& a : as)
    if (a.ok) out.push_back(&a);
  return out;
}

Cell num_best(double v, bool best, std::string hint = {}) {
  return Cell::num(v, std::move(hint), best);
}

std::string tokens_text(double t) {
  if (!std::isfinite(t)) return "an unstated number of";
  static constexpr Rung kTokens[] = {{1e12, 1, 1e12, sig(), "T"}, {kBelowAll, 1, 1e9, sig(), "B"}};
  return format_si(t, {.rungs = kTokens, .sep = "", .magnitude = false});
}

// --- BOM --------------------------------------------------------------------------------------

/// The topology's bill of materials as rows: the network's parts (lines marked not network, the
/// nodes themselves, belong to compute capex), then the network total.
Table bom_table(const Arch& a) {
  Table t;
  t.id = "bom-" + a.name;
  t.title = "Bill of materials: " + a.name;
  t.columns = {column("item", "Part and where it sits"),
               column("kind", "Switch, NIC, optic, cable..."),
               column("count"),
               column("unit_price_usd", "Estimate from the catalog (see its source)"),
               column("cost_usd", "count × unit price"),
               column("power_W", "Total power of these parts")};
  if (!a.topo) return t;
  for (const TopologyBomLine& e : a.topo->bom) {
    if (!e.network) continue;
    std::string item = e.id;
    if (!e.role.empty()) item += " (" + e.role + ")";
    const double count = static_cast<double>(e.count);
    const double cost = e.price_usd;
    double unit = known(e.unit_price_usd);
    if (!std::isfinite(unit) && count > 0) unit = cost / count;
    std::string hint =
        e.price_estimate.value_or(false) ? "estimated price (the catalog marks it so)" : "";
    t.rows.push_back({Cell::str(item), Cell::str(e.category), Cell::num(count),
                      Cell::num(unit, hint), Cell::num(cost, hint), Cell::num(e.power_W)});
  }
  if (!t.rows.empty())
    t.rows.push_back({Cell::str("Network total", "", true), Cell::str(""), Cell::none(),
                      Cell::none(),
                      Cell::num(a.net_capex_usd, "network_capex_usd of the topology", true),
                      Cell::num(a.net_power_W, "network_power_W of the topology", true)});
  return t;
}

// --- sections ---------------------------------------------------------------------------------

Section summary_section(const std::vector<Arch>& as, const json& data) {
  Section s{"summary", "Summary", {}};
  const json& w = data.value("workload", json::object());
  std::string wname = get_str(w, "name", get_str(w, "file", "the workload"));
  s.blocks.push_back(Paragraph{
      "Workload " + wname + " (" + tokens_text(get(w, "/tokens_to_train")) +
      " tokens to train) with layout " + get_str(data, "layout", "(from the workload file)") +
      ", simulated with the " + get_str(data, "engine", "native") + " engine on " +
      std::to_string(as.size()) + " architecture" + (as.size() == 1 ? "" : "s") + "."});
  Table t;
  t.id = "summary";
  t.title = "Architectures side by side";
  t.columns = {
      column("architecture", "Cluster name"),
      column("cluster_file"),
      column("status", "ok, or why the simulation failed"),
      column("gpus"),
      column("layout", "Parallel layout used on this cluster"),
      column("iteration_time_s", "Simulated time of one training iteration"),
      column("time_to_train_s", "Iterations × iteration time (before failures)"),
      column("tokens_per_s_per_gpu"),
      column("mfu", "Model FLOPs utilisation"),
      column("exposed_comm_s", "Communication not hidden behind compute, per iteration"),
      column("network_capex_usd", "Switches, NICs, optics and cables"),
      column("network_power_W", "Switches, NICs and optics"),
      column("cost_per_run_usd", "Amortised capex + opex over the training run"),
      column("usd_per_million_tokens", "Cost per run / tokens trained × 1e6"),
      column("energy_per_run_J", "Facility energy of the training run"),
  };
  int b_iter = best_index(as, &Arch::iter_s), b_ttt = best_index(as, &Arch::ttt_s);
  int b_exp = best_index(as, &Arch::exposed_s), b_net = best_index(as, &Arch::net_capex_usd);
  int b_cost = best_index(as, &Arch::cost_run_usd), b_tok = best_index(as, &Arch::usd_per_mtok);
  int b_pow = best_index(as, &Arch::net_power_W), b_en = best_index(as, &Arch::energy_J);
  bool many = ok_archs(as).size() > 1;
  for (int i = 0; i < static_cast<int>(as.size()); ++i) {
    const Arch& a = as[i];
    auto best = [&](int b) { return many && b == i; };
    t.rows.push_back({Cell::str(a.name, a.description), Cell::str(a.file),
                      a.ok ? Cell::str("ok") : Cell::str("failed", a.error), Cell::num(a.gpus),
                      a.layout.empty() ? Cell::none() : Cell::str(a.layout),
                      num_best(a.iter_s, best(b_iter)), num_best(a.ttt_s, best(b_ttt)),
                      Cell::num(a.tok_per_s_gpu), Cell::num(a.mfu),
                      num_best(a.exposed_s, best(b_exp)), num_best(a.net_capex_usd, best(b_net)),
                      num_best(a.net_power_W, best(b_pow)), num_best(a.cost_run_usd, best(b_cost)),
                      num_best(a.usd_per_mtok, best(b_tok)), num_best(a.energy_J, best(b_en))});
  }
  t.caption =
      "Best value of each column in bold green (among architectures that simulated). Hover a cell "
      "for the exact SI value.";
  s.blocks.push_back(std::move(t));
  auto oks = ok_archs(as);
  Chart c;
  c.id = "time-to-train";
  c.title = "Time to train";
  c.kind = ChartKind::Bar;
  c.y_label = "Time to train";
  c.y_unit = Unit::Seconds;
  Series se{"Time to train", {}};
  for (const Arch* a : oks) {
    c.categories.push_back(a->name);
    se.values.push_back(a->ttt_s);
  }
  c.series.push_back(std::move(se));
  if (c.has_data()) s.blocks.push_back(std::move(c));
  return s;
}

Section iteration_section(const std::vector<Arch>& as) {
  Section s{"iteration", "Iteration time and its breakdown", {}};
  auto oks = ok_archs(as);
  s.blocks.push_back(
      Paragraph{"Where one iteration's time goes on the critical path: compute, communication that "
                "is not hidden "
                "behind compute (per parallel dimension), the pipeline bubble, and the rest. The "
                "parts add up to the "
                "iteration time."});
  Chart c;
  c.id = "breakdown";
  c.title = "Iteration time breakdown";
  c.kind = ChartKind::StackedBar;
  c.y_label = "Time per iteration";
  c.y_unit = Unit::Seconds;
  for (const Arch* a : oks) c.categories.push_back(a->name);
  auto add_series = [&](const std::string& name, auto value_of) {
    Series se{name, {}};
    bool nonzero = false;
    for (const Arch* a : oks) {
      double v = value_of(*a);
      se.values.push_back(v);
      if (std::isfinite(v) && v != 0) nonzero = true;
    }
    if (nonzero) c.series.push_back(std::move(se));
  };
  add_series("Compute", [](const Arch& a) { return a.compute_s; });
  for (int d = 0; d < kNumDims; ++d)
    add_series(std::string("Exposed ") + dim_label(kDims[d]),
               [d](const Arch& a) { return a.dims_s[d]; });
  add_series("Pipeline bubble", [](const Arch& a) { return a.bubble_s; });
  add_series("Other", [](const Arch& a) { return a.other_s; });
  if (c.has_data()) s.blocks.push_back(std::move(c));

  Table t;
  t.id = "breakdown";
  t.title = "Iteration breakdown";
  t.columns = {column("architecture"),
               column("iteration_time_s"),
               column("compute_s"),
               column("exposed_comm_s", "Sum over the parallel dimensions"),
               column("bubble_s", "Pipeline fill and drain"),
               column("other_s"),
               column("tflops_per_gpu", "Model FLOPs per GPU per second / 1e12"),
               column("mfu"),
               column("memory_per_gpu_bytes")};
  for (const Arch* a : oks)
    t.rows.push_back({Cell::str(a->name), Cell::num(a->iter_s), Cell::num(a->compute_s),
                      Cell::num(a->exposed_s), Cell::num(a->bubble_s), Cell::num(a->other_s),
                      Cell::num(a->sim->tflops_per_gpu), Cell::num(a->mfu),
                      Cell::num(a->sim->memory_per_gpu_bytes)});
  if (!t.rows.empty()) s.blocks.push_back(std::move(t));
  return s;
}

Section comm_section(const std::vector<Arch>& as) {
  Section s{"communication", "Exposed communication per parallel dimension", {}};
  auto oks = ok_archs(as);
  Chart c;
  c.id = "exposed-comm";
  c.title = "Exposed communication per iteration, by parallel dimension";
  c.kind = ChartKind::Bar;
  c.x_label = "Parallel dimension";
  c.y_label = "Exposed time per iteration";
  c.y_unit = Unit::Seconds;
  std::vector<int> dims;
  for (int d = 0; d < kNumDims; ++d)
    for (const Arch* a : oks)
      if (std::isfinite(a->dims_s[d]) && a->dims_s[d] > 0) {
        dims.push_back(d);
        break;
      }
  for (int d : dims) c.categories.push_back(dim_label(kDims[d]));
  for (const Arch* a : oks) {
    Series se{a->name, {}};
    for (int d : dims) se.values.push_back(a->dims_s[d]);
    c.series.push_back(std::move(se));
  }
  if (dims.empty()) {
    s.blocks.push_back(Callout{Callout::Level::Info, "No exposed communication.",
                               oks.empty() ? "No architecture simulated."
                                           : "All communication is hidden behind compute."});
  } else {
    s.blocks.push_back(std::move(c));
  }
  Table t;
  t.id = "exposed-comm";
  t.title = "Exposed communication per iteration";
  t.columns = {column("architecture")};
  for (GroupDim d : kDims)
    t.columns.push_back({std::string(to_string(d)) + "_s", dim_label(d), Unit::Seconds,
                         "Exposed " + dim_label(d) + " communication"});
  t.columns.push_back(column("total_s"));
  t.columns.push_back(column("share_of_iteration"));
  for (const Arch* a : oks) {
    std::vector<Cell> row = {Cell::str(a->name)};
    for (double v : a->dims_s) row.push_back(Cell::num(v));
    row.push_back(Cell::num(a->exposed_s));
    row.push_back(Cell::num(a->iter_s > 0 ? a->exposed_s / a->iter_s : kNaN));
    t.rows.push_back(std::move(row));
  }
  if (!t.rows.empty()) s.blocks.push_back(std::move(t));
  return s;
}

Section links_section(const std::vector<Arch>& as) {
  Section s{"links", "Link utilisation hot spots by tier", {}};
  auto oks = ok_archs(as);
  s.blocks.push_back(
      Paragraph{"The busiest links the engine reports, grouped by tier: utilisation is bytes "
                "carried over an iteration "
                "divided by what the link could carry in that time."});
  // tier -> arch -> (max utilisation, busiest link, bytes, count)
  struct Hot {
    double util = kNaN, bytes = kNaN;
    std::string link;
    int count = 0;
  };
  std::vector<std::string> tiers;
  std::map<std::pair<std::string, std::string>, Hot> hot;
  for (const Arch* a : oks)
    for (const SimulationLink& l : a->sim->bottleneck_links) {
      if (std::find(tiers.begin(), tiers.end(), l.tier) == tiers.end()) tiers.push_back(l.tier);
      Hot& h = hot[{l.tier, a->name}];
      ++h.count;
      if (!std::isfinite(h.util) || l.utilization > h.util) {
        h.util = l.utilization;
        h.bytes = l.bytes;
        h.link = l.link;
      }
    }
  std::size_t listed = 0;
  for (const Arch* a : oks) listed = std::max(listed, a->sim->bottleneck_links.size());
  if (listed > 0)
    s.blocks.push_back(
        Paragraph{"The engine lists its " + std::to_string(listed) +
                  " busiest links per architecture; a tier that is not shown carried less "
                  "than the least busy link listed."});
  if (tiers.empty()) {
    s.blocks.push_back(Callout{Callout::Level::Info, "No link data.",
                               "The simulation results list no bottleneck links."});
    return s;
  }
  Chart c;
  c.id = "hot-links";
  c.title = "Busiest link per tier (utilisation)";
  c.kind = ChartKind::Bar;
  c.x_label = "Tier";
  c.y_label = "Utilisation";
  c.y_unit = Unit::Fraction;
  c.categories = tiers;
  for (const Arch* a : oks) {
    Series se{a->name, {}};
    for (const auto& t : tiers) {
      auto it = hot.find({t, a->name});
      se.values.push_back(it == hot.end() ? kNaN : it->second.util);
    }
    c.series.push_back(std::move(se));
  }
  if (c.has_data()) s.blocks.push_back(std::move(c));
  Table t;
  t.id = "hot-links";
  t.title = "Hot spots by tier";
  t.columns = {column("architecture"),
               column("tier"),
               column("busiest_link"),
               column("utilization", "Of the iteration time"),
               column("bytes_per_iteration_B"),
               column("links_listed", "Bottleneck links of this tier in the engine's list")};
  for (const Arch* a : oks)
    for (const auto& tier : tiers) {
      auto it = hot.find({tier, a->name});
      if (it == hot.end()) continue;
      const Hot& h = it->second;
      t.rows.push_back({Cell::str(a->name), Cell::str(tier), Cell::str(h.link),
                        Cell::num(h.util, "", h.util >= 0.8), Cell::num(h.bytes),
                        Cell::num(h.count)});
    }
  t.caption = "Utilisation of 80% or more is in bold.";
  s.blocks.push_back(std::move(t));
  return s;
}

Section network_section(const std::vector<Arch>& as) {
  Section s{"network", "The network's bill of materials, cost and power", {}};
  Chart c;
  c.id = "network-capex";
  c.title = "Network capex";
  c.kind = ChartKind::Bar;
  c.y_label = "Network capex";
  c.y_unit = Unit::Usd;
  Series se{"Network capex", {}};
  for (const auto& a : as)
    if (std::isfinite(a.net_capex_usd)) {
      c.categories.push_back(a.name);
      se.values.push_back(a.net_capex_usd);
    }
  c.series.push_back(std::move(se));
  const bool capex_chart = c.has_data();
  if (capex_chart) s.blocks.push_back(std::move(c));
  bool any = false;
  for (const auto& a : as) {
    Table t = bom_table(a);
    if (t.rows.empty()) {
      if (a.topo)
        s.blocks.push_back(Callout{Callout::Level::Info, a.name + ":",
                                   "the topology lists no bill of materials."});
      continue;
    }
    any = true;
    s.blocks.push_back(std::move(t));
  }
  if (!any && !capex_chart)
    s.blocks.push_back(Callout{Callout::Level::Warning, "No bill of materials.",
                               "No architecture came with network parts, cost or power."});
  return s;
}

Section cost_section(const std::vector<Arch>& as, const json& data) {
  Section s{"cost", "Time to train and cost per run", {}};
  auto oks = ok_archs(as);
  double tokens = get(data, "/workload/tokens_to_train");
  Table t;
  t.id = "cost";
  t.title = "Run cost";
  t.columns = {column("architecture"),
               column("time_to_train_s", "Before failures"),
               column("effective_time_to_train_s",
                      "Including checkpoints, rework and restarts (reliability model)"),
               column("goodput", "Useful share of the wall time"),
               column_as("energy_per_run_J", "Energy", "Facility energy of the run"),
               column("energy_J_per_token", "Facility energy of the run per training token"),
               column("avg_it_W"),
               column_as("capex_usd", "Cluster capex",
                         "Everything bought: GPUs, servers, network, storage, build-out"),
               column("cost_per_run_usd", "Amortised capex + opex over the run"),
               column("usd_per_million_tokens"),
               column("cloud_cost_per_run_usd", "Same run at the catalog's rental prices")};
  int b_cost = best_index(as, &Arch::cost_run_usd), b_tok = best_index(as, &Arch::usd_per_mtok);
  bool any_cost = false;
  for (const Arch* a : oks) {
    int i = static_cast<int>(a - as.data());
    if (std::isfinite(a->cost_run_usd)) any_cost = true;
    t.rows.push_back(
        {Cell::str(a->name), Cell::num(a->ttt_s), Cell::num(a->effective_ttt_s),
         Cell::num(a->goodput), Cell::num(a->energy_J), Cell::num(a->energy_J_per_token),
         Cell::num(a->avg_it_W), Cell::num(a->capex_usd),
         num_best(a->cost_run_usd, oks.size() > 1 && i == b_cost),
         num_best(a->usd_per_mtok, oks.size() > 1 && i == b_tok), Cell::num(a->cloud_run_usd)});
  }
  if (!any_cost && !oks.empty())
    s.blocks.push_back(
        Callout{Callout::Level::Warning, "No cost model in the results.",
                "The simulation results carry no cost figures, so cost per run and per token "
                "are not shown (never estimated here)."});
  if (!t.rows.empty()) s.blocks.push_back(std::move(t));
  if (std::isfinite(tokens))
    s.blocks.push_back(Paragraph{"Cost per token divides the cost per run by the " +
                                 tokens_text(tokens) + " tokens the workload trains on."});
  Chart c;
  c.id = "cost-per-run";
  c.title = "Cost per training run";
  c.kind = ChartKind::Bar;
  c.y_label = "Cost per run";
  c.y_unit = Unit::Usd;
  Series se{"Cost per run", {}};
  for (const Arch* a : oks)
    if (std::isfinite(a->cost_run_usd)) {
      c.categories.push_back(a->name);
      se.values.push_back(a->cost_run_usd);
    }
  c.series.push_back(std::move(se));
  if (c.has_data()) s.blocks.push_back(std::move(c));
  std::vector<std::pair<std::string, json>> origins;
  for (const Arch* a : oks)
    if (!a->sim->facility.cost_origins.is_null())
      origins.emplace_back(a->name, a->sim->facility.cost_origins);
  Table ot = price_origins_table(origins);
  if (!ot.rows.empty()) s.blocks.push_back(std::move(ot));
  return s;
}

Section oversub_section(const std::vector<Arch>& as) {
  Section s{"oversubscription", "Sensitivity to oversubscription", {}};
  s.blocks.push_back(
      Paragraph{"Each fabric that supports it is simulated again with its oversubscription changed "
                "(the same mechanism "
                "as --set on the cluster), everything else equal."});
  struct P {
    double ratio;
    std::string label;
  };
  std::vector<P> labels;
  Table t;
  t.id = "oversubscription";
  t.title = "Oversubscription sweep";
  t.columns = {column("architecture"),
               column("oversubscription", "Downlinks : uplinks at the leaves"),
               column("ratio"),
               column("iteration_time_s"),
               column("time_to_train_s"),
               column("slowdown_pct", "Time to train relative to the cluster as described"),
               column("network_capex_usd"),
               column("cost_per_run_usd")};
  std::vector<std::string> unsupported;
  for (const auto& a : as) {
    if (!a.ok) continue;
    const json& pts = a.over.contains("points") ? a.over.at("points") : json();
    if (!a.over.value("supported", false) || !pts.is_array() || pts.empty()) {
      std::string why = get_str(a.over, "reason", "not swept");
      unsupported.push_back(a.name + ": " + why);
      continue;
    }
    for (std::size_t k = 0; k < pts.size(); ++k) {
      const json& p = pts[k];
      double ratio = get(p, "/ratio");
      std::string label = get_str(p, "label", format_short(ratio) + ":1");
      if (std::none_of(labels.begin(), labels.end(), [&](const P& x) { return x.label == label; }))
        labels.push_back({ratio, label});
      bool ok = p.value("ok", false);
      const std::optional<SimulationDocument>& ps = a.point_sim.at(k);
      const double net_capex = a.point_topo.at(k) ? a.point_topo[k]->network_capex_usd : kNaN;
      double ttt = ps ? ps->time_to_train_s : kNaN;
      std::string hint = p.value("baseline", false) ? "the cluster as described" : "";
      if (!ok) {
        t.rows.push_back({Cell::str(a.name), Cell::str(label), Cell::num(ratio),
                          Cell::str("failed", get_str(p, "error")), Cell::none(get_str(p, "error")),
                          Cell::none(), Cell::num(net_capex), Cell::none()});
        continue;
      }
      t.rows.push_back({Cell::str(a.name), Cell::str(label, hint), Cell::num(ratio),
                        Cell::num(ps ? ps->iteration_time_s : kNaN), Cell::num(ttt),
                        Cell::num(percent_diff(ttt, a.ttt_s)), Cell::num(net_capex),
                        Cell::num(ps ? known(ps->facility.cost_per_run_usd) : kNaN)});
    }
  }
  std::stable_sort(labels.begin(), labels.end(),
                   [](const P& x, const P& y) { return x.ratio < y.ratio; });
  Chart c;
  c.id = "oversubscription";
  c.title = "Time to train vs oversubscription";
  c.kind = ChartKind::Line;
  c.x_label = "Oversubscription";
  c.y_label = "Time to train";
  c.y_unit = Unit::Seconds;
  for (const auto& l : labels) c.categories.push_back(l.label);
  for (const auto& a : as) {
    if (!a.ok || !a.over.value("supported", false)) continue;
    Series se{a.name, std::vector<double>(labels.size(), kNaN)};
    const json& pts = a.over.contains("points") ? a.over.at("points") : json();
    if (!pts.is_array()) continue;
    for (std::size_t k = 0; k < pts.size(); ++k) {
      const json& p = pts[k];
      if (!p.value("ok", false)) continue;
      std::string label = get_str(p, "label", format_short(get(p, "/ratio")) + ":1");
      const std::optional<SimulationDocument>& ps = a.point_sim.at(k);
      for (std::size_t i = 0; i < labels.size(); ++i)
        if (labels[i].label == label) se.values[i] = ps ? ps->time_to_train_s : kNaN;
    }
    c.series.push_back(std::move(se));
  }
  if (c.has_data()) s.blocks.push_back(std::move(c));
  const bool swept = !t.rows.empty();
  if (swept) s.blocks.push_back(std::move(t));
  for (const auto& u : unsupported)
    s.blocks.push_back(Callout{Callout::Level::Info, "Not swept:", u});
  if (!swept && unsupported.empty())
    s.blocks.push_back(
        Callout{Callout::Level::Info, "Nothing to sweep:", "no architecture simulated."});
  return s;
}

}  // namespace

namespace {
Report build_compare_report_unchecked(const nlohmann::json& data);
}  // namespace

std::vector<Callout> calibration_default_notices(const nlohmann::json& by_gpu) {
  std::vector<Callout> out;
  if (!by_gpu.is_object()) return out;
  for (auto it = by_gpu.begin(); it != by_gpu.end(); ++it) {
    if (!it->is_array() || it->empty()) continue;
    std::string text;
    for (const auto& d : *it) {
      if (!text.empty()) text += "; ";
      text += d.value("what", d.value("key", "?")) + " " + format_sig(d.value("value", 0.0)) +
              " (" + d.value("basis", "") + ")";
    }
    out.push_back(Callout{Callout::Level::Warning, "Calibration defaults on " + it.key() + ":",
                          text + ". No microbenchmark of this GPU stands behind these values; "
                                 "replace them with a measured profile (tutti calibrate)."});
  }
  return out;
}

Table price_origins_table(const std::vector<std::pair<std::string, nlohmann::json>>& rows) {
  // The figures in the order a bill reads; the keys are facility.cost.origins'.
  static const std::pair<const char*, const char*> kFigures[] = {
      {"servers", "Servers"},       {"network", "Network"},  {"storage", "Storage"},
      {"facility", "Facility"},     {"capex", "Capex"},      {"electricity", "Electricity"},
      {"rack_space", "Rack space"}, {"owned", "Owned cost"}, {"cloud", "Rental"}};
  Table t;
  t.id = "price-origins";
  t.title = "Where each price comes from";
  t.columns = {column("name")};
  for (const auto& [key, label] : kFigures) t.columns.push_back({key, label, Unit::Text, ""});
  for (const auto& [name, origins] : rows) {
    if (!origins.is_object()) continue;
    std::vector<Cell> row = {Cell::str(name)};
    for (const auto& f : kFigures) {
      auto it = origins.find(f.first);
      row.push_back(it != origins.end() && it->is_string() ? Cell::str(it->get<std::string>())
                                                           : Cell::none());
    }
    t.rows.push_back(std::move(row));
  }
  t.caption =
      "catalog: a cited catalog price; estimate: the catalog marks the price an estimate, or the "
      "figure is derived from one; user: a quote from --prices; no price: nothing to price it "
      "with, so no figure is shown (never $0).";
  return t;
}

// The document is read with nlohmann's typed accessors; a value of the wrong type or a missing
// member deep inside is bad input (exit 2), never an internal error.
Report build_compare_report(const nlohmann::json& data) {
  try {
    return build_compare_report_unchecked(data);
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    auto close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
    throw InputError("", "(document)", what,
                     "a comparison document as `tutti report compare --format json` writes it");
  }
}

namespace {
Report build_compare_report_unchecked(const nlohmann::json& data) {
  if (!data.is_object() || !data.contains("architectures") || !data.at("architectures").is_array())
    throw InputError("", "architectures", data.is_object() ? "no such array" : describe_json(data),
                     "a comparison document with an \"architectures\" array");
  const double tokens = get(data, "/workload/tokens_to_train");
  const json& archs = data.at("architectures");
  std::vector<Arch> as;
  for (std::size_t i = 0; i < archs.size(); ++i)
    as.push_back(read_arch(archs[i], tokens, fmt::format("architectures.{}", i)));

  Report r;
  r.kind = "compare";
  const json& w = data.value("workload", json::object());
  std::string wname = get_str(w, "name", get_str(w, "file", "workload"));
  std::string names;
  for (const auto& a : as) names += (names.empty() ? "" : " vs ") + a.name;
  r.title = "Network architectures for " + wname;
  r.subtitle = names.empty() ? "No architecture given"
                             : names + " · layout " + get_str(data, "layout", "from the workload");
  r.primary_table = "summary";
  r.data_json = data.dump();

  auto oks = ok_archs(as);
  {
    json by_gpu = json::object();
    for (const Arch* a : oks)
      for (const auto& [gpu, defaults] : a->sim->calibration_defaults)
        by_gpu[gpu] = calibration_defaults_json(defaults);
    for (auto& c : calibration_default_notices(by_gpu)) r.notices.push_back(std::move(c));
  }
  for (const auto& a : as)
    if (!a.ok)
      r.notices.push_back(Callout{Callout::Level::Error, "Simulation failed on " + a.name + ":",
                                  a.error.empty() ? "no reason given" : a.error});
  if (as.empty())
    r.notices.push_back(
        Callout{Callout::Level::Error, "No architecture given.", "Nothing to compare."});
  else if (oks.empty())
    r.notices.push_back(Callout{Callout::Level::Error, "No architecture could be simulated.",
                                "There is nothing to compare; see the failures above."});
  else if (oks.size() == 1)
    r.notices.push_back(
        Callout{Callout::Level::Warning, "Only one architecture:",
                as.size() == 1
                    ? oks[0]->name + " is described alone; there is nothing to compare it with."
                    : oks[0]->name +
                          " is the only one that simulated; there is nothing to compare it with."});
  if (!oks.empty()) {
    r.verdict.push_back(verdict_for(as, &Arch::ttt_s, "Fastest to train", Unit::Seconds, "faster",
                                    "no time to train in the results"));
    r.verdict.push_back(verdict_for(as, &Arch::cost_run_usd, "Cheapest run", Unit::Usd, "cheaper",
                                    "no cost model in the results"));
    r.verdict.push_back(verdict_for(as, &Arch::usd_per_mtok, "Cheapest per token", Unit::Usd,
                                    "cheaper", "no cost model in the results"));
    r.verdict.push_back(verdict_for(as, &Arch::net_capex_usd, "Cheapest network", Unit::Usd,
                                    "cheaper", "no network bill of materials"));
    if (oks.size() > 1 && r.verdict[0].winner.size() && r.verdict[0].winner != "tie") {
      std::string line = r.verdict[0].winner + " trains fastest";
      const auto& c = r.verdict[2].winner.empty() ? r.verdict[1] : r.verdict[2];
      if (!c.winner.empty() && c.winner != "tie")
        line += c.winner == r.verdict[0].winner ? " and is also the cheapest per token."
                                                : "; " + c.winner + " is the cheapest per token.";
      else
        line += ".";
      r.notices.insert(r.notices.begin(), Callout{Callout::Level::Good, "Verdict:", line});
    }
  }
  r.sections.push_back(summary_section(as, data));
  if (!oks.empty()) {
    r.sections.push_back(iteration_section(as));
    r.sections.push_back(comm_section(as));
    r.sections.push_back(links_section(as));
  }
  r.sections.push_back(network_section(as));
  if (!oks.empty()) {
    r.sections.push_back(cost_section(as, data));
    r.sections.push_back(oversub_section(as));
  }
  return r;
}
}  // namespace

}  // namespace tutti::reports
