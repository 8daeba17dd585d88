// The facility models chained (power -> cooling fixed point -> storage -> failures -> cost),
// their JSON and their table lines.
#include "tutti/facility/facility.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "tutti/core/error.hpp"
#include "tutti/core/flags.hpp"
#include "tutti/core/format.hpp"
#include "tutti/core/units.hpp"

namespace tutti {

void check_options(const FacilityOptions& o) {
  auto bad = [](const char* key, double v, const char* expected) {
    throw InputError("", std::string("facility.") + key, std::to_string(v), expected);
  };
  if (!(o.hardware_life_years > 0 && o.hardware_life_years <= 50))
    bad("hardware_life_years", o.hardware_life_years, "0 < years <= 50");
  if (!(o.facility_life_years > 0 && o.facility_life_years <= 100))
    bad("facility_life_years", o.facility_life_years, "0 < years <= 100");
  if (!(o.maintenance_frac_per_year >= 0 && o.maintenance_frac_per_year <= 1))
    bad("maintenance_frac_per_year", o.maintenance_frac_per_year, "0..1");
  if (!(o.utilization > 0 && o.utilization <= 1)) bad("utilization", o.utilization, "0 < u <= 1");
  if (!(o.power_cap_W >= 0)) bad("power_cap_W", o.power_cap_W, ">= 0 W (0 = TDP)");
  if (!(o.min_clock_factor > 0 && o.min_clock_factor <= 1))
    bad("min_clock_factor", o.min_clock_factor, "0 < f <= 1");
  if (!(o.checkpoint_interval_s >= 0))
    bad("checkpoint_interval_s", o.checkpoint_interval_s, ">= 0 (0 = Young's optimum)");
  if (o.max_retimings < 2 || o.max_retimings > 10000)
    bad("max_retimings", o.max_retimings, "2..10000");
  if (o.monte_carlo_trials < 0 || o.monte_carlo_trials > 1000000)
    bad("monte_carlo_trials", o.monte_carlo_trials, "0..1000000");
}

FacilityOptions parse_facility_flag(std::string_view text, FacilityOptions o) {
  const std::string flag = "--facility";
  const std::string expected =
      "comma-separated KEY=VALUE with KEY in life, facility_life, maintenance, utilization, "
      "power_cap, min_clock, profile, restart, interval, trials, grid, carbon, retimings, "
      "node_mtbf, gpu_mtbf, "
      "detect, reload, checkpoint";
  for (const FlagItem& item : split_flag_items(text, flag, expected)) {
    const std::string& key = item.key;
    const std::string& val = item.value;
    auto number = [&](double lo, double hi) { return flag_number(item, flag, lo, hi); };
    auto quantity = [&](Dim d) {
      auto v = parse_quantity(val, d);
      if (!v || !(*v >= 0)) throw InputError(flag, key, "\"" + val + "\"", dim_expectation(d));
      return *v;
    };
    if (key == "life")
      o.hardware_life_years = number(0.1, 50);
    else if (key == "facility_life")
      o.facility_life_years = number(0.1, 100);
    else if (key == "maintenance")
      o.maintenance_frac_per_year = number(0, 1);
    else if (key == "utilization")
      o.utilization = number(1e-3, 1);
    else if (key == "power_cap")
      o.power_cap_W = quantity(Dim::Power);
    else if (key == "min_clock")
      o.min_clock_factor = number(0.01, 1);
    else if (key == "profile")
      o.reliability_profile = val;
    else if (key == "restart")
      o.restart_s = quantity(Dim::Time);
    else if (key == "interval")
      o.checkpoint_interval_s = val == "young" ? 0.0 : quantity(Dim::Time);
    else if (key == "trials")
      o.monte_carlo_trials = static_cast<int>(number(0, 1000000));
    else if (key == "grid")
      o.grid_region = grid_region(val).id;
    else if (key == "retimings")
      o.max_retimings = static_cast<int>(number(2, 10000));
    else if (key == "node_mtbf")
      o.node_mtbf_s = quantity(Dim::Time);
    else if (key == "gpu_mtbf")
      o.gpu_mtbf_s = quantity(Dim::Time);
    else if (key == "detect")
      o.detect_s = quantity(Dim::Time);
    else if (key == "reload") {
      if (val != "storage" && val != "peer")
        throw InputError(flag, key, "\"" + val + "\"", "storage or peer");
      o.reload = val;
    } else if (key == "checkpoint") {
      if (val != "sync" && val != "async" && val != "memory")
        throw InputError(flag, key, "\"" + val + "\"", "sync, async or memory");
      o.checkpoint_mode = val;
    } else if (key == "carbon")
      o.carbon_kg_per_kWh = number(0, 2);
    else
      throw InputError(flag, key, "unknown key \"" + key + "\"", expected);
  }
  return o;
}

namespace {

void check_inputs(const FacilityInputs& in) {
  auto bad = [](const char* key, double v, const char* expected) {
    throw InputError("", std::string("facility inputs: ") + key, std::to_string(v), expected);
  };
  if (in.gpus <= 0) bad("gpus", in.gpus, ">= 1");
  if (in.nodes <= 0) bad("nodes", in.nodes, ">= 1");
  if (in.gpus_per_node <= 0) bad("gpus_per_node", in.gpus_per_node, ">= 1");
  if (!(in.pue >= 1 && in.pue <= 5)) bad("pue", in.pue, "1..5");
  if (!(in.gpu.tdp_W > 0)) bad("gpu.tdp_W", in.gpu.tdp_W, "> 0");
  if (!(in.gpu.idle_W >= 0 && in.gpu.idle_W < in.gpu.tdp_W))
    bad("gpu.idle_W", in.gpu.idle_W, "0 <= idle < TDP");
  if (!(in.rack_cooling_W > 0)) bad("rack_cooling_W", in.rack_cooling_W, "> 0");
  if (!(in.iterations >= 0)) bad("iterations", in.iterations, ">= 0");
}

}  // namespace

FacilityResult evaluate_facility(const FacilityInputs& in_given, const FacilityOptions& o,
                                 const Retimer& retime) {
  check_options(o);
  check_inputs(in_given);
  FacilityInputs in = in_given;
  if (o.power_cap_W > 0) in.gpu.power_cap_W = o.power_cap_W;
  FacilityResult r;
  r.options = o;
  Retimer rt = retime ? retime : Retimer([&in](double s) { return rescale_times(in.times, s); });
  r.cooling = solve_cooling(in, o, rt);
  const IterationTimes& t = r.cooling.times;
  r.power = compute_power(in, t, r.cooling.throttle_factor);
  r.storage = compute_storage(in, t);
  r.time_to_train_s = in.iterations * r.storage.iteration_s;
  r.reliability = compute_reliability(in, o, r.time_to_train_s);
  r.effective_time_to_train_s = r.reliability.effective_time_to_train_s;
  const bool effective_known = !std::isnan(r.effective_time_to_train_s);

  // Energy: iterations at the timeline's energy; data stalls, checkpoint writes and restarts at
  // the idle draw; lost work redone at the training draw.
  const double fixed_W = in.nodes * in.node_overhead_W + in.network_power_W + in.storage_power_W;
  const double idle_it_W = in.gpus * std::min(in.gpu.idle_W, in.gpu.cap_W()) + fixed_W;
  const double stall_s = r.storage.iteration_s - t.iteration_s;
  double it_J = in.iterations * (r.power.energy_per_iteration_J + stall_s * idle_it_W);
  if (!effective_known) {
    // Failure overhead unknown (no storage to size checkpoints): the run's failure-free energy.
  } else if (std::isfinite(r.effective_time_to_train_s)) {
    it_J += (r.reliability.checkpoint_overhead_s + r.reliability.restart_total_s) * idle_it_W +
            r.reliability.rework_s * r.power.avg_it_W;
  } else {
    it_J = std::numeric_limits<double>::infinity();
  }
  r.energy_per_run_it_J = it_J;
  r.energy_per_run_J = it_J * in.pue;
  r.cost = compute_cost(in, o, r.power,
                        effective_known ? r.effective_time_to_train_s : r.time_to_train_s,
                        r.energy_per_run_J);
  r.energy = account_energy(
      in, o, effective_known ? r.effective_time_to_train_s : r.time_to_train_s, it_J);

  if (r.cooling.throttle_factor < 1)
    r.notes.push_back("GPUs run at " + std::to_string(r.cooling.throttle_factor) +
                      " of nominal clock (heat or power cap); compute ops slowed accordingly");
  if (!r.cooling.fits)
    r.notes.push_back("the heat does not fit the cooling even at the minimum clock factor");
  if (in.reference_nodes_per_rack > 0 && r.cooling.nodes_per_rack < in.reference_nodes_per_rack)
    r.notes.push_back("the facility preset's rack power (" +
                      std::to_string(static_cast<int>(in.rack_power_W / 1000)) +
                      " kW) feeds only " + std::to_string(r.cooling.nodes_per_rack) +
                      " of the node's reference " + std::to_string(in.reference_nodes_per_rack) +
                      " nodes per rack: the cluster is spread over " +
                      std::to_string(r.cooling.racks) +
                      " racks (set facility.nodes_per_rack to pack them; the heat per rack then "
                      "decides throttling)");
  if (in.storage_read_Bps <= 0)
    r.notes.push_back("storage read bandwidth unknown: no data-loading stall assumed");
  if (!effective_known)
    r.notes.push_back(
        "the cluster has no storage system: checkpoint write time, goodput and the "
        "effective time to train are unknown; energy and cost per run exclude "
        "failure overhead (add \"storage\" to the cluster file)");
  else if (!std::isfinite(r.effective_time_to_train_s))
    r.notes.push_back(
        "failures arrive faster than checkpoints and restarts allow: the run "
        "does not finish in expectation");
  if (in.cloud_usd_per_gpu_hour <= 0)
    r.notes.push_back(
        "no rental price for this GPU in the catalog or the prices file: no rent-vs-buy "
        "comparison (add gpus.<id>.cloud to --prices)");
  if (!in.prices_file.empty())
    r.notes.push_back("prices from " + in.prices_file + " where given ([user]), else the catalog");
  return r;
}

nlohmann::json facility_to_json(const FacilityResult& r, bool with_timeline) {
  using nlohmann::json;
  auto num = [](double v) -> json { return std::isfinite(v) ? json(v) : json(nullptr); };
  const auto& p = r.power;
  json power = {{"avg_it_W", num(p.avg_it_W)},
                {"peak_it_W", num(p.peak_it_W)},
                {"min_it_W", num(p.min_it_W)},
                {"nameplate_it_W", num(p.nameplate_it_W)},
                {"facility_W", num(p.facility_W)},
                {"peak_facility_W", num(p.peak_facility_W)},
                {"swing_W", num(p.swing_W)},
                {"swing_period_s", num(p.swing_period_s)},
                {"gpu_avg_W", num(p.gpu_avg_W)},
                {"gpu_peak_W", num(p.gpu_peak_W)},
                {"gpu_min_W", num(p.gpu_min_W)},
                {"node_avg_W", num(p.node_avg_W)},
                {"network_W", num(p.network_W)},
                {"storage_W", num(p.storage_W)},
                {"clock_factor", num(p.clock_factor)},
                {"energy_per_iteration_J", num(p.energy_per_iteration_J)},
                {"energy_per_iteration_facility_J", num(p.energy_per_iteration_facility_J)}};
  if (with_timeline) {
    json tl = json::array();
    for (const auto& s : p.timeline)
      tl.push_back({{"state", s.state},
                    {"start_s", s.start_s},
                    {"duration_s", s.duration_s},
                    {"gpu_W", s.gpu_W},
                    {"it_W", s.it_W}});
    power["timeline"] = tl;
  }
  const auto& c = r.cooling;
  json cooling = {
      {"facility", c.facility_name},
      {"liquid", c.liquid},
      {"nodes_per_rack", c.nodes_per_rack},
      {"racks", c.racks},
      {"heat_per_rack_W", num(c.heat_per_rack_W)},
      {"heat_per_rack_unthrottled_W", num(c.heat_per_rack_unthrottled_W)},
      {"rack_cooling_W", num(c.rack_cooling_W)},
      {"rack_power_W", num(c.rack_power_W)},
      {"total_heat_W", num(c.total_heat_W)},
      {"total_cooling_W", c.total_cooling_W > 0 ? num(c.total_cooling_W) : json(nullptr)},
      {"throttle_factor", num(c.throttle_factor)},
      {"power_cap_factor", num(c.power_cap_factor)},
      {"compute_slowdown", num(c.compute_slowdown)},
      {"fits", c.fits},
      {"fixed_point_iterations", c.fixed_point_iterations},
      {"iteration_time_s", num(c.times.iteration_s)},
      {"time_to_train_unthrottled_s", num(c.time_to_train_unthrottled_s)},
      {"time_to_train_s", num(c.time_to_train_s)}};
  const auto& k = r.cost;
  auto opt = [&](double v) -> json { return v > 0 ? num(v) : json(nullptr); };
  // A figure with no price is null, never $0; "origins" says where each came from.
  auto priced = [&](double v, PriceOrigin o) -> json {
    return o == PriceOrigin::None ? json(nullptr) : num(v);
  };
  json cost = {
      {"capex_usd", priced(k.capex_usd, k.capex_origin)},
      {"purchase_usd", priced(k.capex_usd, k.capex_origin)},
      {"capex_breakdown_usd",
       {{"servers", priced(k.servers_usd, k.servers_origin)},
        {"network", priced(k.network_usd, k.network_origin)},
        {"storage", num(k.storage_usd)},
        {"facility", priced(k.facility_usd, k.facility_origin)}}},
      {"origins",
       {{"servers", to_string(k.servers_origin)},
        {"network", to_string(k.network_origin)},
        {"storage", to_string(k.storage_origin)},
        {"facility", to_string(k.facility_origin)},
        {"capex", to_string(k.capex_origin)},
        {"electricity", to_string(k.electricity_origin)},
        {"rack_space", to_string(k.rack_origin)},
        {"owned", to_string(k.owned_origin)},
        {"cloud", to_string(k.cloud_origin)}}},
      {"rack_space_usd_per_year",
       k.rack_origin == PriceOrigin::None ? json(nullptr) : num(k.rack_space_usd_per_year)},
      {"owned_run_usd", priced(k.cost_per_run_usd, k.owned_origin)},
      {"rental_run_usd", priced(k.cloud_cost_per_run_usd, k.cloud_origin)},
      {"amortized_usd_per_year", num(k.amortized_usd_per_year)},
      {"opex_usd_per_year", num(k.opex_usd_per_year)},
      {"electricity_usd_per_year", num(k.electricity_usd_per_year)},
      {"maintenance_usd_per_year", num(k.maintenance_usd_per_year)},
      {"usd_per_gpu_hour", num(k.usd_per_gpu_hour)},
      {"cost_per_run_usd", priced(k.cost_per_run_usd, k.owned_origin)},
      {"energy_cost_per_run_usd", num(k.energy_cost_per_run_usd)},
      {"usd_per_million_tokens", opt(k.usd_per_million_tokens)},
      {"cloud_usd_per_gpu_hour", opt(k.cloud_usd_per_gpu_hour)},
      {"cloud_cost_per_run_usd", opt(k.cloud_cost_per_run_usd)},
      {"breakeven_utilization",
       k.cloud_usd_per_gpu_hour > 0 ? num(k.breakeven_utilization) : json(nullptr)}};
  const auto& f = r.reliability;
  json rates = json::array();
  for (const auto& x : f.rates)
    rates.push_back({{"class", x.id},
                     {"per", x.per},
                     {"units", x.units},
                     {"failures_per_day", num(x.failures_per_day)},
                     {"goodput_loss", num(x.goodput_loss)},
                     {"causes", x.causes}});
  json rel = {{"profile", f.profile},
              {"failure_classes", rates},
              {"failures_per_day", num(f.failures_per_day)},
              {"mtbf_s", num(f.mtbf_s)},
              {"checkpoint_bytes", num(f.checkpoint_bytes)},
              {"checkpoint_write_s", num(f.checkpoint_write_s)},
              {"checkpoint_interval_s", num(f.checkpoint_interval_s)},
              {"young_interval_s", num(f.young_interval_s)},
              {"daly_interval_s", num(f.daly_interval_s)},
              {"restart_s", num(f.restart_s)},
              {"detect_s", num(f.detect_s)},
              {"reload_s", num(f.reload_s)},
              {"rates_source", f.rates_source},
              {"checkpoint_mode", f.checkpoint_mode},
              {"checkpoint_critical_s", num(f.checkpoint_critical_s)},
              {"expected_failures", num(f.expected_failures)},
              {"goodput", num(f.goodput)},
              {"checkpoint_loss", num(f.checkpoint_loss)},
              {"effective_time_to_train_s", num(f.effective_time_to_train_s)},
              {"lost_time_s",
               {{"checkpoints", num(f.checkpoint_overhead_s)},
                {"rework", num(f.rework_s)},
                {"restarts", num(f.restart_total_s)}}}};
  if (f.monte_carlo.trials > 0)
    rel["monte_carlo"] = {
        {"trials", f.monte_carlo.trials},      {"seed", f.monte_carlo.seed},
        {"p50_s", num(f.monte_carlo.p50_s)},   {"p90_s", num(f.monte_carlo.p90_s)},
        {"mean_s", num(f.monte_carlo.mean_s)}, {"mean_failures", num(f.monte_carlo.mean_failures)}};
  const auto& s = r.storage;
  json storage = {
      {"required_read_Bps", num(s.required_read_Bps)},
      {"available_read_Bps", s.available_read_Bps > 0 ? num(s.available_read_Bps) : json(nullptr)},
      {"stall_fraction", num(s.stall_fraction)},
      {"iteration_time_s", num(s.iteration_s)},
      {"checkpoint_burst_Bps", num(s.checkpoint_burst_Bps)},
      {"checkpoint_burst_s", num(s.checkpoint_burst_s)},
      {"checkpoint_bytes_per_node", num(s.checkpoint_bytes_per_node)}};
  return json{
      {"power", power},
      {"energy_per_run_J", num(r.energy_per_run_J)},
      {"energy_per_run_it_J", num(r.energy_per_run_it_J)},
      {"cooling", cooling},
      {"energy",
       {{"physical_facility_J", num(r.energy.physical_facility_J)},
        {"physical_it_J", num(r.energy.physical_it_J)},
        {"model_card_J", num(r.energy.model_card_J)},
        {"model_card_convention", "job GPU-hours x GPU power limit x PUE"},
        {"gpu_hours", num(r.energy.gpu_hours)},
        {"physical_J_per_token", opt(r.energy.physical_J_per_token)},
        {"model_card_J_per_token", opt(r.energy.model_card_J_per_token)},
        {"grid", r.energy.grid},
        {"grid_name", r.energy.grid_name},
        {"grid_source", r.energy.grid_source},
        {"kg_co2_per_kWh", num(r.energy.kg_co2_per_J * 3.6e6)},
        {"physical_co2_kg", num(r.energy.physical_co2_kg)},
        {"model_card_co2_kg", num(r.energy.model_card_co2_kg)}}},
      {"cost", cost},
      {"reliability", rel},
      {"storage", storage},
      {"time_to_train_s", num(r.time_to_train_s)},
      {"effective_time_to_train_s", num(r.effective_time_to_train_s)},
      {"notes", r.notes},
      {"assumptions",
       {{"hardware_life_years", r.options.hardware_life_years},
        {"facility_life_years", r.options.facility_life_years},
        {"maintenance_frac_per_year", r.options.maintenance_frac_per_year},
        {"utilization", r.options.utilization},
        {"power_cap_W", r.options.power_cap_W > 0 ? num(r.options.power_cap_W) : json(nullptr)},
        {"min_clock_factor", r.options.min_clock_factor},
        {"reliability_profile", r.options.reliability_profile},
        {"grid", r.energy.grid}}}};
}

namespace {

// The facility table's wording: 3 significant digits ("%.3g"), "never" for an infinite value.
// The ladders are core/format.hpp's.
std::string watts(double v) {
  if (!std::isfinite(v)) return "never";
  return ladders::si_prefixed(v, "W", general(3), " ", 'G');
}
std::string joules(double v) {
  if (!std::isfinite(v)) return "never";
  // Watt-hours from 1 MWh up, joules with SI prefixes below.
  static constexpr Rung kEnergy[] = {
      {3.6e12, 1, 3.6e12, general(3), "GWh"}, {3.6e9, 1, 3.6e9, general(3), "MWh"},
      {1e9, 1, 1e9, general(3), "GJ"},        {1e6, 1, 1e6, general(3), "MJ"},
      {1e3, 1, 1e3, general(3), "kJ"},        {kBelowAll, 1, 1, general(3), "J"}};
  return format_si(v, {.rungs = kEnergy});
}
std::string bytes(double v) {
  if (!std::isfinite(v)) return "never";
  return ladders::si_prefixed(v, "B", general(3), " ", 'P');
}
std::string rate(double v) {
  return bytes(v) + "/s";
}
std::string usd(double v) {
  if (!std::isfinite(v)) return "n/a";
  static constexpr Rung kUsd[] = {
      {1e6, 1, 1e6, general(3), "M"}, {1e3, 1, 1e3, general(3), "k"}, {0, 1, 1, general(3), ""}};
  return format_si(v, {.rungs = kUsd, .prefix = "$", .sep = ""});
}
std::string duration(double s) {
  if (std::isnan(s)) return "unknown";
  if (!std::isfinite(s)) return "never";
  static constexpr Rung kTime[] = {{2 * 86400, 1, 86400, general(3), "d"},
                                   {2 * 3600, 1, 3600, general(3), "h"},
                                   {120, 1, 60, general(3), "min"},
                                   {kBelowAll, 1, 1, general(3), "s"}};
  return format_si(s, {.rungs = kTime, .magnitude = false});
}
std::string origin_tag(PriceOrigin o) {
  return std::string("[") + to_string(o) + "]";
}
std::string pct(double v) {
  return std::isnan(v) ? "unknown" : format_number(100 * v, fixed(1)) + "%";
}

}  // namespace

std::string goodput_loss_text(const ReliabilityResult& f) {
  // Largest first; ties keep the profile's order (stable), so the text is deterministic.
  std::vector<std::pair<std::string, double>> parts{{"checkpoints", f.checkpoint_loss}};
  for (const auto& x : f.rates) parts.emplace_back(x.id, x.goodput_loss);
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [id, loss] : parts) {
    if (!out.empty()) out += ", ";
    out += id + " " + format_number(100 * loss, fixed(2)) + "%";
  }
  return out;
}

std::vector<std::string> facility_table_lines(const FacilityResult& r) {
  std::vector<std::string> out;
  const auto& p = r.power;
  const auto& c = r.cooling;
  const auto& k = r.cost;
  const auto& f = r.reliability;
  const auto& s = r.storage;
  out.push_back("power: IT avg " + watts(p.avg_it_W) + ", peak " + watts(p.peak_it_W) +
                ", facility " + watts(p.facility_W) + " (nameplate IT " + watts(p.nameplate_it_W) +
                "); GPU avg " + watts(p.gpu_avg_W) + "; step swing " + watts(p.swing_W) +
                " every " + duration(p.swing_period_s));
  out.push_back("energy: " + joules(p.energy_per_iteration_J) + " IT per iteration, " +
                joules(r.energy_per_run_J) + " per run (facility, " +
                (std::isnan(r.effective_time_to_train_s) ? "failure-free" : "with failures") + ")");
  {
    const auto& e = r.energy;
    std::string line = "energy both ways: physical " + joules(e.physical_facility_J) +
                       " (timeline x PUE) vs model card " + joules(e.model_card_J) + " (" +
                       format_number(e.gpu_hours, general(4)) + " GPU-h x " +
                       watts(e.gpu_hours > 0 ? e.model_card_J / (e.gpu_hours * 3600) : 0) +
                       " incl. PUE)";
    if (e.physical_J_per_token > 0)
      line += "; per token " + joules(e.physical_J_per_token) + " vs " +
              joules(e.model_card_J_per_token);
    out.push_back(line);
    out.push_back("CO2: " + format_number(e.physical_co2_kg / 1000, general(4)) + " t physical, " +
                  format_number(e.model_card_co2_kg / 1000, general(4)) + " t model card at " +
                  format_number(e.kg_co2_per_J * 3.6e6, general(3)) + " kg/kWh (grid " + e.grid +
                  ": " + e.grid_name +
                  (e.grid == "user" ? "" : "; --facility grid=ID or carbon=KG_PER_KWH to change") +
                  ")");
  }
  std::string cool =
      "cooling (" + (c.facility_name.empty() ? "" : c.facility_name + ", ") +
      std::string(c.liquid ? "liquid" : "air") + "): " + std::to_string(c.nodes_per_rack) +
      " nodes/rack x " + std::to_string(c.racks) + " racks (rack power " + watts(c.rack_power_W) +
      "), heat " + watts(c.heat_per_rack_W) + "/rack vs " + watts(c.rack_cooling_W) + " cooling";
  if (c.throttle_factor < 1)
    cool += "; GPUs throttle to " + format_number(c.throttle_factor, fixed(3)) +
            " clock (unthrottled " + watts(c.heat_per_rack_unthrottled_W) +
            "/rack), time to train " + duration(c.time_to_train_unthrottled_s) + " -> " +
            duration(c.time_to_train_s);
  else
    cool += "; no throttling";
  if (!c.fits) cool += "; DOES NOT FIT even at the minimum clock";
  out.push_back(cool);
  // Every money figure says where it came from; one with no price says so (never $0).
  auto priced = [](const std::string& text, PriceOrigin o) {
    return o == PriceOrigin::None ? std::string("no price") : text + " " + origin_tag(o);
  };
  std::string cost =
      "cost: capex " + priced(usd(k.capex_usd), k.capex_origin) + " (servers " +
      priced(usd(k.servers_usd), k.servers_origin) + ", network " +
      (k.network_usd > 0 ? priced(usd(k.network_usd), k.network_origin) : std::string("none")) +
      ", storage " +
      (k.storage_usd > 0 ? priced(usd(k.storage_usd), k.storage_origin) : std::string("none")) +
      ", facility " + priced(usd(k.facility_usd), k.facility_origin) + "), opex " +
      usd(k.opex_usd_per_year) + "/yr (electricity " + origin_tag(k.electricity_origin) +
      (k.rack_origin != PriceOrigin::None
           ? ", rack space " + usd(k.rack_space_usd_per_year) + "/yr " + origin_tag(k.rack_origin)
           : std::string()) +
      "); owned " +
      priced("$" + format_number(k.usd_per_gpu_hour, fixed(2)) + "/GPU-h", k.owned_origin);
  cost +=
      k.cloud_usd_per_gpu_hour > 0
          ? " vs rented " +
                priced("$" + format_number(k.cloud_usd_per_gpu_hour, fixed(2)) + "/GPU-h",
                       k.cloud_origin) +
                " (break-even at " +
                (std::isfinite(k.breakeven_utilization) ? pct(k.breakeven_utilization) : "never") +
                " utilisation)"
          : std::string(" vs rented: no price");
  out.push_back(cost);
  std::string run = "run: owned " + priced(usd(k.cost_per_run_usd), k.owned_origin) +
                    " (capex over " + format_number(r.options.hardware_life_years, general(6)) +
                    " y at " + pct(r.options.utilization) +
                    " utilisation + the run's opex), purchase " +
                    priced(usd(k.capex_usd), k.capex_origin) + ", rented " +
                    priced(usd(k.cloud_cost_per_run_usd), k.cloud_origin);
  if (k.usd_per_million_tokens > 0 && k.owned_origin != PriceOrigin::None)
    run +=
        "; $" + format_number(k.usd_per_million_tokens, general(3)) + " per million tokens owned";
  out.push_back(run);
  std::string rel =
      "failures (" + f.rates_source + "): MTBF " + duration(f.mtbf_s) + "; checkpoint (" +
      f.checkpoint_mode + ") " + bytes(f.checkpoint_bytes) + " written in " +
      duration(f.checkpoint_write_s) +
      (f.checkpoint_mode != "sync"
           ? ", " + duration(f.checkpoint_critical_s) + " on the critical path"
           : std::string()) +
      " every " + duration(f.checkpoint_interval_s) + ", recovery " + duration(f.restart_s) +
      (f.detect_s > 0 || f.reload_s > 0
           ? " (detect " + duration(f.detect_s) + " + reload " + duration(f.reload_s) + " included)"
           : std::string()) +
      "; goodput " + pct(f.goodput) + "; time to train " + duration(r.time_to_train_s) + " -> " +
      duration(f.effective_time_to_train_s);
  if (f.monte_carlo.trials > 0)
    rel += " (Monte-Carlo p50 " + duration(f.monte_carlo.p50_s) + ", p90 " +
           duration(f.monte_carlo.p90_s) + ")";
  out.push_back(rel);
  if (std::isfinite(f.effective_time_to_train_s) && f.goodput < 1)
    out.push_back("goodput loss by cause: " + goodput_loss_text(f));
  std::string st =
      "storage: input " + rate(s.required_read_Bps) + " needed vs " +
      (s.available_read_Bps > 0 ? rate(s.available_read_Bps) : std::string("unknown")) +
      " available";
  st += s.stall_fraction > 0 ? ", stall " + pct(s.stall_fraction) : ", no stall";
  if (s.checkpoint_burst_s > 0)
    st += "; checkpoint burst " + rate(s.checkpoint_burst_Bps) + " for " +
          duration(s.checkpoint_burst_s);
  out.push_back(st);
  return out;
}

}  // namespace tutti
