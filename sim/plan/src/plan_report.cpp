// The planner's outputs: JSON for scripts, a table for people, CSV; and the "nothing fits" reason.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "plan_impl.hpp"
#include "tutti/core/format.hpp"
#include "tutti/core/units.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/plan/plan_result.hpp"

namespace tutti {

using Json = nlohmann::json;

const char* violation_name(int bit) {
  static constexpr const char* kNames[kNumViolations] = {
      "memory",    "deadline",   "capex_budget", "total_cost_budget",
      "power_cap", "room_racks", "room_cooling", "no_price"};
  return bit >= 0 && bit < kNumViolations ? kNames[bit] : "?";
}

/// Exposed gradient-group communication: DP, DPxCP, EDP (expert gradients) and the hybrid
/// sharding groups together.
static double dp_family_s(const Breakdown& b) {
  return b.exposed_comm_s[GroupDim::DP] + b.exposed_comm_s[GroupDim::DPxCP] +
         b.exposed_comm_s[GroupDim::EDP] + b.exposed_comm_s[GroupDim::DPShard] +
         b.exposed_comm_s[GroupDim::DPReplica];
}

// The ranked iteration as the run lives it: the simulated breakdown, then thermal throttling
// (the throttled iteration) and data stalls + failures (time to train / iterations) on top, so
// the rows sum to the lived iteration (the same split as `tutti simulate`'s breakdown).
struct LivedRows {
  double simulated_s = 0, throttle_s = 0, stall_failures_s = 0, lived_s = 0;
};
static LivedRows lived_rows(const Evaluation& e, double iterations) {
  const Breakdown& b = e.breakdown;
  LivedRows r;
  r.simulated_s = b.compute_s + b.bubble_s + b.other_s;
  for (double x : b.exposed_comm_s) r.simulated_s += x;
  const double throttled = std::max(r.simulated_s, e.iteration_time_s);
  r.throttle_s = throttled - r.simulated_s;
  r.lived_s = iterations > 0 ? std::max(throttled, e.time_to_train_s / iterations) : throttled;
  r.stall_failures_s = r.lived_s - throttled;
  return r;
}
static std::string lived_bottleneck(const Evaluation& e, const LivedRows& r);

const char* bottleneck_name(const Breakdown& b) {
  // The gradient groups (DP, DPxCP, EDP) count as one DP communication.
  const std::pair<const char*, double> comm[] = {
      {"TP communication", b.exposed_comm_s[GroupDim::TP]},
      {"CP communication", b.exposed_comm_s[GroupDim::CP]},
      {"DP communication", dp_family_s(b)},
      {"EP communication", b.exposed_comm_s[GroupDim::EP]},
      {"PP communication", b.exposed_comm_s[GroupDim::PP]}};
  const char* name = "compute";
  double best = b.compute_s;
  for (const auto& [n, v] : comm)
    if (v > best) {
      best = v;
      name = n;
    }
  if (b.bubble_s > best) {
    best = b.bubble_s;
    name = "pipeline bubble";
  }
  if (b.other_s > best) name = "other";
  return name;
}

static std::string lived_bottleneck(const Evaluation& e, const LivedRows& r) {
  const Breakdown& b = e.breakdown;
  double best = b.compute_s;
  for (double x : b.exposed_comm_s) best = std::max(best, x);
  best = std::max({best, dp_family_s(b), b.bubble_s, b.other_s});
  if (r.throttle_s > best && r.throttle_s >= r.stall_failures_s) return "thermal throttle";
  if (r.stall_failures_s > best) return "data stall and failures";
  return bottleneck_name(b);
}

namespace {

std::string layout_text(const Layout& l) {
  std::string s = fmt::format("tp={} pp={} dp={}", l.tp, l.pp, l.dp);
  if (l.cp > 1) s += fmt::format(" cp={}", l.cp);
  if (l.ep > 1) s += fmt::format(" ep={}", l.ep);
  if (l.etp > 0) s += fmt::format(" etp={}", l.etp);
  if (l.vp > 1) s += fmt::format(" vp={}", l.vp);
  s += fmt::format(" mb={} zero={}", l.micro_batch, l.zero);
  if (l.shard_group > 0 && l.shard_group < l.dp * l.cp)
    s += fmt::format(" shard_group={}", l.shard_group);
  if (l.zero >= 3) s += fmt::format(" reshard={}", l.reshard_after_forward() ? 1 : 0);
  s += fmt::format(" rc={}", to_string(l.recompute));
  return s;
}

std::string fabric_short(const HardwareChoice& h) {
  std::string f = h.fabric == "rail_optimized" ? "rail"
                  : h.fabric == "fat_tree"     ? "fat-tree"
                                               : h.fabric.substr(0, 8);
  return fmt::format("{} {} {}:1", f, h.network == Network::InfiniBand ? "IB" : "RoCE",
                     h.oversubscription);
}

Json layout_json(const Layout& l) {
  return Json{{"tp", l.tp},
              {"pp", l.pp},
              {"dp", l.dp},
              {"cp", l.cp},
              {"ep", l.ep},
              {"etp", l.expert_tp()},
              {"vp", l.vp},
              {"micro_batch", l.micro_batch},
              {"zero", l.zero},
              {"shard_group", l.shard_size()},  // ranks one state is sharded over
              {"reshard", l.zero >= 3 && l.reshard_after_forward()},
              {"sequence_parallel", l.sequence_parallel},
              {"recompute", to_string(l.recompute)},
              {"schedule", l.vp > 1 ? "interleaved" : "1f1b"},
              {"string", to_string(l)},
              {"compact", to_compact_string(l)}};
}

Json breakdown_json(const Breakdown& b) {
  return Json{{"compute_s", b.compute_s},
              {"exposed_comm_s",
               {{"tp", b.exposed_comm_s[GroupDim::TP]},
                {"cp", b.exposed_comm_s[GroupDim::CP]},
                {"dp", dp_family_s(b)},
                {"ep", b.exposed_comm_s[GroupDim::EP]},
                {"pp", b.exposed_comm_s[GroupDim::PP]}}},
              {"bubble_s", b.bubble_s},
              {"other_s", b.other_s}};
}

Json hardware_choice_json(const HardwareChoice& h, Acquisition a) {
  return Json{{"gpu", h.gpu},
              {"node", h.node},
              {"gpus", h.gpus},
              {"nodes", h.nodes},
              {"fabric", h.fabric},
              {"oversubscription", h.oversubscription},
              {"network", to_string(h.network)},
              {"storage", h.storage},
              {"acquisition", to_string(a)}};
}

// The planner's wording of its figures (one decimal of days, "$465k", "1.20 MW"): core/format.hpp
// ladders with the planner's digits.
std::string days(double s) {
  static constexpr Rung kDays[] = {{0, 1, kDay, fixed(1), "d"}};
  return format_si(s, {kDays});
}
std::string money(double usd) {
  static constexpr Rung kUsd[] = {{1e9, 1, 1e9, fixed(2), "B"},
                                  {1e6, 1, 1e6, fixed(1), "M"},
                                  {1e3, 1, 1e3, fixed(0), "k"},
                                  {kBelowAll, 1, 1, fixed(0), ""}};
  return format_si(usd, {.rungs = kUsd, .prefix = "$", .sep = "", .magnitude = false});
}
std::string energy(double J) {
  double MWh = J / kJoulePerKWh / 1e3;
  static constexpr Rung kEnergy[] = {{1000, 1, 1e3, fixed(2), "GWh"},
                                     {kBelowAll, 1, 1, fixed(0), "MWh"}};
  return format_si(MWh, {.rungs = kEnergy, .magnitude = false});
}
/// Facility energy per training token, joules ("-" for models without tokens).
std::string per_token(double J) {
  return J > 0 ? fmt::format("{:.3g} J", J) : std::string("-");
}
std::string watts(double W) {
  static constexpr Rung kWatts[] = {{1e6, 1, 1e6, fixed(2), "MW"},
                                    {kBelowAll, 1, 1e3, fixed(0), "kW"}};
  return format_si(W, {.rungs = kWatts, .magnitude = false});
}
std::string thousands(std::uint64_t n) {
  return format_thousands(static_cast<double>(n));
}
std::string pct(double part, double whole) {
  return whole > 0 ? fmt::format("{:.0f}%", 100.0 * part / whole) : "-";
}

std::string violations_text(const Evaluation& e, const PlanRequest& r) {
  std::vector<std::string> v;
  if (e.violations & kMemory)
    v.push_back(fmt::format("needs {:.1f} GiB per GPU", e.memory_per_gpu_bytes / kGiB));
  if (e.violations & kDeadline)
    v.push_back(fmt::format("takes {} (deadline {})", days(e.time_to_train_s), days(r.deadline_s)));
  if (e.violations & kCapex)
    v.push_back(
        fmt::format("costs {} to buy (budget {})", money(e.capex_usd), money(r.capex_budget_usd)));
  if (e.violations & kTotalCost)
    v.push_back(fmt::format("costs {} in all (budget {})", money(e.total_cost_usd),
                            money(r.total_cost_budget_usd)));
  if (e.violations & kPowerCap)
    v.push_back(fmt::format("draws {} at peak (cap {})", watts(e.peak_facility_power_W),
                            watts(r.power_cap_W)));
  if (e.violations & kRoomRacks)
    v.push_back(fmt::format("needs more than the room's {} racks", r.room.racks));
  if (e.violations & kRoomCooling)
    v.push_back("one node draws more than a rack may draw or the room may cool");
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "; " : "") + v[i];
  return s;
}

template <class T, class F>
std::string joined(const std::vector<T>& v, F f) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + f(v[i]);
  return s;
}

// Every constraint and search bound that shaped the answer, one "name: value" per entry.
std::vector<std::pair<std::string, std::string>> constraints_list(const PlanRequest& q) {
  std::vector<std::pair<std::string, std::string>> c;
  if (!q.gpu_counts.empty())
    c.emplace_back("GPU counts", joined(q.gpu_counts, [](int n) {
                                   return thousands(static_cast<std::uint64_t>(n));
                                 }) + " (search.gpu_counts)");
  c.emplace_back("GPUs per job",
                 fmt::format("{} to {} (constraints.gpus_min, gpus_max: a smaller or larger job "
                             "is not searched)",
                             thousands(static_cast<std::uint64_t>(q.gpus_min)),
                             thousands(static_cast<std::uint64_t>(q.gpus_max))));
  c.emplace_back("hardware",
                 joined(q.gpus, [](const std::string& x) { return x; }) + " (search.gpus)");
  c.emplace_back("fabrics",
                 joined(q.fabrics, [](const std::string& x) { return x; }) + "; oversubscription " +
                     joined(q.oversubscription, [](double o) { return fmt::format("{}:1", o); }) +
                     "; " +
                     joined(q.networks, [](Network n) { return std::string(to_string(n)); }));
  c.emplace_back("acquisition",
                 joined(q.acquisition, [](Acquisition a) { return std::string(to_string(a)); }));
  c.emplace_back("deadline", q.deadline_s > 0 ? days(q.deadline_s) : "none");
  c.emplace_back("capex budget",
                 q.capex_budget_usd > 0
                     ? money(q.capex_budget_usd) + " (purchase price of everything bought)"
                     : "none");
  c.emplace_back("total cost budget",
                 q.total_cost_budget_usd > 0
                     ? money(q.total_cost_budget_usd) + " (capex or rental plus the run's opex)"
                     : "none");
  if (q.power_cap_W > 0) c.emplace_back("power cap", watts(q.power_cap_W) + " facility peak");
  if (q.room.racks > 0) c.emplace_back("room", fmt::format("{} racks", q.room.racks));
  c.emplace_back("objective", std::string("lowest ") + to_string(q.objective));
  return c;
}

}  // namespace

std::string describe(const HardwareChoice& h, Acquisition a) {
  return fmt::format("{} x {} ({} GPUs), {} {}:1 {}, {}", h.nodes, h.node, h.gpus, h.fabric,
                     h.oversubscription, h.network == Network::InfiniBand ? "InfiniBand" : "RoCE",
                     to_string(a));
}

std::string explain_no_fit(const PlanRequest& r, const std::vector<HardwareChoice>& hw,
                           const PlanResult& result) {
  const ScreenResult& s = result.screen;
  std::string why;
  if (s.feasible > 0) {
    why = fmt::format(
        "{} configurations passed screening, but none of the {} re-simulated with the "
        "flow-level engine still meets every constraint",
        thousands(s.feasible), result.finalists.size());
    const Evaluation* near = nullptr;
    for (const auto& e : result.finalists)
      if (near == nullptr || nearer_miss(e, *near)) near = &e;
    if (near != nullptr)
      why +=
          fmt::format("; nearest miss: {}, {}: {}", describe(hw[near->hardware], near->acquisition),
                      layout_text(near->layout), violations_text(*near, r));
    return why;
  }
  why = fmt::format("none of {} configurations meets every constraint (",
                    thousands(s.configurations));
  bool first = true;
  for (int b = 0; b < kNumViolations; ++b) {
    if (s.violated[b] == 0) continue;
    why += fmt::format("{}{} {}", first ? "" : ", ", thousands(s.violated[b]), violation_name(b));
    first = false;
  }
  why += ")";
  if (s.min_time_to_train_s > 0 && r.deadline_s > 0 && s.min_time_to_train_s > r.deadline_s)
    why += fmt::format("; the fastest takes {} against a deadline of {}",
                       days(s.min_time_to_train_s), days(r.deadline_s));
  if (s.min_capex_usd > 0 && r.capex_budget_usd > 0 && s.min_capex_usd > r.capex_budget_usd)
    why += fmt::format("; the cheapest to buy costs {} against a budget of {}",
                       money(s.min_capex_usd), money(r.capex_budget_usd));
  if (!s.nearest.empty()) {
    const Evaluation& n = s.nearest[0];
    why += fmt::format("; nearest miss: {}, {}: {}", describe(hw[n.hardware], n.acquisition),
                       layout_text(n.layout), violations_text(n, r));
  } else if (s.pruned > 0) {
    why +=
        "; every hardware choice was ruled out before simulation (rerun with --no-prune for a "
        "nearest miss)";
  }
  return why;
}

namespace {

Json config_json(const Planner::Impl& I, const Evaluation& e, bool details) {
  const HardwareChoice& h = I.hardware[e.hardware];
  Json j;
  j["index"] = e.index;
  j["hardware"] = hardware_choice_json(h, e.acquisition);
  j["acquisition"] = to_string(e.acquisition);
  j["layout"] = layout_json(e.layout);
  j["engine"] = e.native ? "native" : "analytic";
  j["feasible"] = e.feasible();
  if (!e.feasible()) {
    j["violations"] = Json::array();
    for (int b = 0; b < kNumViolations; ++b)
      if (e.violations & (1u << b)) j["violations"].push_back(violation_name(b));
    j["violation"] = e.violation;
  }
  j["time_to_train_s"] = e.time_to_train_s;
  j["iteration_time_s"] = e.iteration_time_s;
  j["mfu"] = e.mfu;
  j["memory_per_gpu_bytes"] = e.memory_per_gpu_bytes;
  j["breakdown"] = breakdown_json(e.breakdown);
  j["bottleneck"] = bottleneck_name(e.breakdown);
  {
    const double tpi = tokens_per_iteration(I.workload);
    const LivedRows lr = lived_rows(e, tpi > 0 ? tokens_to_train(I.workload) / tpi : 0);
    j["lived"] = {{"iteration_time_s", lr.lived_s},
                  {"simulated_iteration_time_s", lr.simulated_s},
                  {"throttle_s", lr.throttle_s},
                  {"data_stall_and_failures_s", lr.stall_failures_s},
                  {"bottleneck", lived_bottleneck(e, lr)}};
  }
  j["capex_usd"] = e.capex_usd;
  j["run_opex_usd"] = e.run_opex_usd;
  j["total_cost_usd"] = e.total_cost_usd;
  j["cost_basis"] = e.acquisition == Acquisition::Buy ? to_string(I.request.cost_basis) : "rental";
  j["purchase_usd"] = e.acquisition == Acquisition::Buy ? Json(e.capex_usd) : Json(nullptr);
  j["owned_run_usd"] = e.acquisition == Acquisition::Buy ? Json(e.owned_run_usd) : Json(nullptr);
  j["rental_usd"] = e.rental_usd > 0 ? Json(e.rental_usd) : Json(nullptr);  // null: no rental price
  j["breakeven_utilization"] =
      e.breakeven_utilization > 0 ? Json(e.breakeven_utilization) : Json(nullptr);
  j["energy_J"] = e.energy_J;
  j["energy_J_per_token"] =
      e.energy_J_per_token > 0 ? Json(e.energy_J_per_token) : Json(nullptr);  // null: no tokens
  j["avg_it_power_W"] = e.avg_it_power_W;
  j["peak_facility_power_W"] = e.peak_facility_power_W;
  if (details && (e.violations & kMemory) == 0) {
    auto model = I.model(e.hardware);
    j["bill_of_materials"] = hardware_json(*model);
    j["bom"] = j["bill_of_materials"]["items"];  // the lines alone, as reports read them
    j["facility"] = facility_json(*model, I.workload, I.request, e, I.native_perf(e));
  }
  return j;
}

}  // namespace

Json Planner::to_json(const PlanResult& r) const {
  const Impl& I = *impl_;
  Json j;
  j["schema_version"] = kPlanResultSchemaVersion;
  Json req;
  tutti::to_json(req, I.request);
  j["request"] = req;
  j["workload"] = workload_json(I.workload);
  j["evaluated"] = r.screen.configurations;
  j["simulated"] = r.screen.simulated;
  j["pruned"] = r.screen.pruned;
  j["invalid"] = r.screen.invalid;
  j["feasible"] = r.screen.feasible;
  j["violations"] = Json::object();
  for (int b = 0; b < kNumViolations; ++b)
    j["violations"][violation_name(b)] = r.screen.violated[b];
  j["unbuildable"] = Json::array();
  for (auto h : r.screen.unbuildable) {
    Json u = hardware_choice_json(I.hardware[h], Acquisition::Buy);
    u.erase("acquisition");
    u["reason"] = I.build_error(h);
    j["unbuildable"].push_back(u);
  }
  j["found"] = r.found;
  j["recommended"] = r.found ? config_json(I, r.recommended, true) : Json(nullptr);
  // Bill of materials and power/cooling for every frontier point and finalist (the first 64 of
  // a very large frontier: each needs its cluster built again).
  constexpr std::size_t kDetailed = 64;
  j["pareto"] = Json::array();
  for (std::size_t i = 0; i < r.pareto.size(); ++i)
    j["pareto"].push_back(config_json(I, r.pareto[i], i < kDetailed));
  j["finalists"] = Json::array();
  for (const auto& e : r.finalists) j["finalists"].push_back(config_json(I, e, true));
  j["alternatives"] = Json::array();
  for (const auto& e : r.alternatives) j["alternatives"].push_back(config_json(I, e, true));
  j["retimed"] = r.retimed;
  j["constraints"] = Json::array();  // in print order
  for (const auto& [k, v] : constraints_list(I.request))
    j["constraints"].push_back({{"constraint", k}, {"value", v}});
  if (!r.found) {
    j["reason"] = r.reason;
    j["nearest_miss"] =
        r.screen.nearest.empty() ? Json(nullptr) : config_json(I, r.screen.nearest[0], true);
  }
  return j;
}

std::string Planner::to_text(const PlanResult& r) const {
  const Impl& I = *impl_;
  const PlanRequest& q = I.request;
  std::string o;
  auto line = [&o](const std::string& s) { o += s + "\n"; };
  std::string cons;
  if (q.deadline_s > 0) cons += ", deadline " + days(q.deadline_s);
  if (q.capex_budget_usd > 0) cons += ", capex budget " + money(q.capex_budget_usd);
  if (q.total_cost_budget_usd > 0) cons += ", total budget " + money(q.total_cost_budget_usd);
  if (q.power_cap_W > 0) cons += ", power cap " + watts(q.power_cap_W);
  if (q.room.racks > 0) cons += fmt::format(", room of {} racks", q.room.racks);
  line(fmt::format("tutti plan: {} on {} tokens{}", I.workload.name,
                   format_quantity(tokens_to_train(I.workload), Dim::Count), cons));
  const ScreenResult& s = r.screen;
  line(fmt::format(
      "searched {} configurations ({} hardware choices x parallel layouts{}): {} fit in "
      "memory and were simulated, {} meet every constraint, {} on the Pareto frontier",
      thousands(s.configurations), I.hardware.size(),
      q.acquisition.size() == 2 ? " x buy/rent" : "", thousands(s.simulated), thousands(s.feasible),
      r.pareto.size()));
  if (!s.unbuildable.empty())
    line(fmt::format("{} hardware choices could not be built and were skipped, e.g. {}: {}",
                     s.unbuildable.size(), describe(I.hardware[s.unbuildable[0]], Acquisition::Buy),
                     I.build_error(s.unbuildable[0])));
  line("");
  if (r.found) {
    const Evaluation& e = r.recommended;
    const HardwareChoice& h = I.hardware[e.hardware];
    auto model = I.model(e.hardware);
    Json fac = facility_json(*model, I.workload, q, e, I.native_perf(e));
    Json bom = hardware_json(*model);
    line(fmt::format("RECOMMENDED  (lowest {} that meets every constraint; {} engine)",
                     to_string(q.objective), e.native ? "flow-level" : "analytic"));
    line(fmt::format("  hardware    {}", describe(h, e.acquisition)));
    line(fmt::format("  layout      {}", layout_text(e.layout)));
    line(fmt::format(
        "  time        {} to train, failures included (iteration {:.2f} s, MFU {:.1f}%)",
        days(e.time_to_train_s), e.iteration_time_s, 100 * e.mfu));
    const Breakdown& b = e.breakdown;
    const double tpi = tokens_per_iteration(I.workload);
    const LivedRows lr = lived_rows(e, tpi > 0 ? tokens_to_train(I.workload) / tpi : 0);
    double it =
        lr.lived_s > 0 ? lr.lived_s : e.iteration_time_s;  // rows sum to the lived iteration
    line(fmt::format(
        "  iteration   compute {} | TP {} | CP {} | DP {} | EP {} | PP {} | bubble {} | other {} | "
        "throttle {} | stalls+failures {}",
        pct(b.compute_s, it), pct(b.exposed_comm_s[GroupDim::TP], it),
        pct(b.exposed_comm_s[GroupDim::CP], it), pct(dp_family_s(b), it),
        pct(b.exposed_comm_s[GroupDim::EP], it), pct(b.exposed_comm_s[GroupDim::PP], it),
        pct(b.bubble_s, it), pct(b.other_s, it), pct(lr.throttle_s, it),
        pct(lr.stall_failures_s, it)));
    line(fmt::format("  bottleneck  {}", lived_bottleneck(e, lr)));
    // Which basis the ranking used, and the other two figures beside it (same cost model as
    // `tutti simulate`); every figure with its price origin.
    std::string tag;
    if (fac.contains("cost") && fac["cost"].contains("origins"))
      tag =
          " [" +
          fac["cost"]["origins"].value(e.acquisition == Acquisition::Buy ? "owned" : "cloud", "") +
          "]";
    const std::string rent = e.rental_usd > 0 ? money(e.rental_usd) : std::string("no price");
    const std::string breakeven =
        e.breakeven_utilization > 0
            ? fmt::format("; break-even at {:.0f}% utilisation", 100 * e.breakeven_utilization)
            : std::string();
    if (e.acquisition == Acquisition::Buy)
      line(
          fmt::format("  cost        {}{} ranked on cost_basis={}{}: owned for the run {} (capex "
                      "over {:g} y at "
                      "{:.0f}% utilisation + {} electricity and upkeep), purchase {}, rented {}{}",
                      money(e.total_cost_usd), tag, to_string(q.cost_basis),
                      q.cost_basis == CostBasis::Run ? " (default)" : "", money(e.owned_run_usd),
                      q.hardware_life_years, 100 * q.utilization, money(e.run_opex_usd),
                      money(e.capex_usd), rent, breakeven));
    else
      line(fmt::format("  cost        {}{} rental for the run{}", money(e.total_cost_usd), tag,
                       breakeven));
    line(fmt::format(
        "  energy      {} (facility){}; power {} IT average, {} facility peak", energy(e.energy_J),
        e.energy_J_per_token > 0 ? ", " + per_token(e.energy_J_per_token) + " per token"
                                 : std::string(),
        watts(e.avg_it_power_W), watts(e.peak_facility_power_W)));
    if (fac.contains("cooling")) {
      const Json& c = fac["cooling"];
      line(fmt::format("  cooling     {} racks x {} per rack, {}; GPU clock {:.0f}% of nominal",
                       c.value("racks", 0), watts(c.value("heat_per_rack_W", 0.0)),
                       c.value("liquid", false) ? "liquid-cooled" : "air-cooled",
                       100 * c.value("throttle_factor", 1.0)));
    }
    if (fac.contains("reliability")) {
      // Goodput loss by cause (docs/facility.md): checkpoints and each failure class, largest
      // first.
      const Json& f = fac["reliability"];
      std::vector<std::pair<std::string, double>> parts{
          {"checkpoints", f.value("checkpoint_loss", 0.0)}};
      for (const auto& x : f.value("failure_classes", Json::array()))
        parts.emplace_back(x.value("class", ""), x.value("goodput_loss", 0.0));
      std::stable_sort(parts.begin(), parts.end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
      std::string causes;
      for (std::size_t i = 0; i < parts.size() && i < 4; ++i)
        causes += fmt::format("{}{} {:.2f}%", i ? ", " : "", parts[i].first, 100 * parts[i].second);
      if (f.contains("goodput") && f["goodput"].is_number())
        line(fmt::format("  failures    goodput {:.1f}% ({}), MTBF {}; lost to {}",
                         100 * f["goodput"].get<double>(), f.value("rates_source", std::string()),
                         f.contains("mtbf_s") && f["mtbf_s"].is_number()
                             ? days(f["mtbf_s"].get<double>())
                             : "none",
                         causes));
    }
    line(fmt::format(
        "  bill        {} nodes ({}), {} switches, {} transceivers, {} cables; compute {}, "
        "network {}, storage {}",
        thousands(static_cast<std::uint64_t>(h.nodes)), h.node,
        thousands(bom.value("switches", 0ULL)), thousands(bom.value("transceivers", 0ULL)),
        thousands(bom.value("cables", 0ULL)), money(bom.value("compute_capex_usd", 0.0)),
        money(bom.value("network_capex_usd", 0.0)), money(bom.value("storage_capex_usd", 0.0))));
    line("");
  } else {
    line("NOTHING FITS: " + r.reason);
    line("");
  }
  auto header = [&line](const char* first) {
    line(
        fmt::format("  {:>3}  {:>6}  {:<15} {:<15} {:<4}  {:<34} {:>8} {:>10} {:>10} {:>9} {:>9} "
                    "{:>5}  {:<8}  {}",
                    first, "GPUs", "GPU", "fabric", "acq", "layout", "time", "total cost", "energy",
                    "J/token", "peak pwr", "MFU", "engine", "bottleneck"));
  };
  auto row = [&](const std::string& first, const Evaluation& e) {
    const HardwareChoice& h = I.hardware[e.hardware];
    line(fmt::format(
        "  {:>4} {:>6}  {:<15} {:<15} {:<4}  {:<34} {:>8} {:>10} {:>10} {:>9} {:>9} {:>4.0f}%  "
        "{:<8}  {}",
        first, h.gpus, h.gpu.substr(0, 15), fabric_short(h), to_string(e.acquisition),
        to_compact_string(e.layout), days(e.time_to_train_s), money(e.total_cost_usd),
        energy(e.energy_J), per_token(e.energy_J_per_token), watts(e.peak_facility_power_W),
        100 * e.mfu, e.native ? "flow" : "analytic", bottleneck_name(e.breakdown)));
  };
  if (!r.pareto.empty()) {
    if (q.finalists > 0)
      line(fmt::format(
          "PARETO FRONTIER  (time to train vs total cost vs energy, among the {} configurations "
          "timed by the flow-level engine: the screening frontier, the finalists and the best of "
          "each GPU type and fabric; * = recommended)",
          r.retimed));
    else
      line(
          "PARETO FRONTIER  (time to train vs total cost vs energy; analytic screening; * = "
          "recommended)");
    header("#");
    // At most 20 rows, spread evenly over the frontier (sorted by time); JSON has them all.
    std::size_t n = r.pareto.size(), rows = std::min<std::size_t>(n, 20);
    for (std::size_t k = 0; k < rows; ++k) {
      std::size_t i = rows == 1 ? 0 : k * (n - 1) / (rows - 1);
      const Evaluation& e = r.pareto[i];
      bool rec = r.found && e.index == r.recommended.index;
      row(std::to_string(i + 1) + (rec ? "*" : " "), e);
    }
    if (rows < n)
      line(fmt::format("  ({} of {} frontier points shown; --json or --csv for all)", rows, n));
  }
  if (!r.alternatives.empty()) {
    line("");
    line(fmt::format(
        "RUNNERS-UP ON OTHER HARDWARE  (the lowest {} of each GPU type and fabric that meets every "
        "constraint, timed like the recommendation)",
        to_string(q.objective)));
    header("");
    for (const auto& e : r.alternatives) row("", e);
    if (r.found)
      for (const auto& e : r.alternatives) {
        const HardwareChoice& h = I.hardware[e.hardware];
        line(fmt::format("  {} x {} {}: {:+.1f}% total cost, {:+.1f}% time vs the recommendation",
                         h.gpus, h.gpu, fabric_short(h),
                         100 * (e.total_cost_usd / r.recommended.total_cost_usd - 1),
                         100 * (e.time_to_train_s / r.recommended.time_to_train_s - 1)));
      }
  }
  line("");
  line("CONSTRAINTS THAT SHAPED THE ANSWER");
  for (const auto& [k, v] : constraints_list(q)) line(fmt::format("  {:<18} {}", k, v));
  return o;
}

std::string Planner::to_csv(const PlanResult& r) const {
  const Impl& I = *impl_;
  std::string o =
      "rank,recommended,engine,gpu,node,gpus,nodes,fabric,oversubscription,network,storage,"
      "acquisition,"
      "tp,pp,dp,cp,ep,vp,micro_batch,zero,recompute,time_to_train_s,iteration_time_s,mfu,"
      "memory_per_gpu_bytes,capex_usd,run_opex_usd,total_cost_usd,energy_J,energy_J_per_token,avg_"
      "it_power_W,"
      "peak_facility_power_W,bottleneck,role\n";
  std::vector<std::pair<Evaluation, const char*>> rows;
  if (r.found) rows.emplace_back(r.recommended, "recommended");
  for (const auto& e : r.pareto) rows.emplace_back(e, "pareto");
  for (const auto& e : r.alternatives) rows.emplace_back(e, "alternative");
  int k = 0;
  for (const auto& [e, role] : rows) {
    const HardwareChoice& h = I.hardware[e.hardware];
    const Layout& l = e.layout;
    o += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},"
        "{},{},{},{}\n",
        k, (r.found && k == 0) ? 1 : 0, e.native ? "native" : "analytic", h.gpu, h.node, h.gpus,
        h.nodes, h.fabric, h.oversubscription, to_string(h.network), h.storage,
        to_string(e.acquisition), l.tp, l.pp, l.dp, l.cp, l.ep, l.vp, l.micro_batch, l.zero,
        to_string(l.recompute), e.time_to_train_s, e.iteration_time_s, e.mfu,
        e.memory_per_gpu_bytes, e.capex_usd, e.run_opex_usd, e.total_cost_usd, e.energy_J,
        e.energy_J_per_token > 0 ? fmt::format("{}", e.energy_J_per_token) : std::string(),
        e.avg_it_power_W, e.peak_facility_power_W, bottleneck_name(e.breakdown), role);
    ++k;
  }
  return o;
}

}  // namespace tutti
