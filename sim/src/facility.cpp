// The facility models chained (power -> cooling fixed point -> storage -> failures -> cost),
// their JSON and their table lines.
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "tutti/core/error.hpp"
#include "tutti/core/flags.hpp"
#include "tutti/core/units.hpp"
#include "tutti/sim/facility.hpp"

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
  if (o.monte_carlo_trials < 0 || o.monte_carlo_trials > 1000000)
    bad("monte_carlo_trials", o.monte_carlo_trials, "0..1000000");
}

namespace {
std::string fmt(const char* f, double a);
}  // namespace

FacilityOptions parse_facility_flag(std::string_view text, FacilityOptions o) {
  const std::string flag = "--facility";
  const std::string expected =
      "comma-separated KEY=VALUE with KEY in life, facility_life, maintenance, utilization, "
      "power_cap, min_clock, profile, restart, interval, trials";
  for (const FlagItem& item : split_flag_items(text, flag, expected)) {
    const std::string& key = item.key;
    const std::string& val = item.value;
    auto number = [&](double lo, double hi) { return flag_number(item, flag, lo, hi); };
    auto quantity = [&](Dim d) {
      auto v = parse_quantity(val, d);
      if (!v || !(*v >= 0)) throw InputError(flag, key, "\"" + val + "\"", dim_expectation(d));
      return *v;
    };
    if (key == "life") o.hardware_life_years = number(0.1, 50);
    else if (key == "facility_life") o.facility_life_years = number(0.1, 100);
    else if (key == "maintenance") o.maintenance_frac_per_year = number(0, 1);
    else if (key == "utilization") o.utilization = number(1e-3, 1);
    else if (key == "power_cap") o.power_cap_W = quantity(Dim::Power);
    else if (key == "min_clock") o.min_clock_factor = number(0.01, 1);
    else if (key == "profile") o.reliability_profile = val;
    else if (key == "restart") o.restart_s = quantity(Dim::Time);
    else if (key == "interval") o.checkpoint_interval_s = val == "young" ? 0.0 : quantity(Dim::Time);
    else if (key == "trials") o.monte_carlo_trials = static_cast<int>(number(0, 1000000));
    else throw InputError(flag, key, "unknown key \"" + key + "\"", expected);
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
  if (!(in.gpu.idle_W >= 0 && in.gpu.idle_W < in.gpu.tdp_W)) bad("gpu.idle_W", in.gpu.idle_W, "0 <= idle < TDP");
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

  if (r.cooling.throttle_factor < 1)
    r.notes.push_back("GPUs run at " + std::to_string(r.cooling.throttle_factor) +
                      " of nominal clock (heat or power cap); compute ops slowed accordingly");
  if (!r.cooling.fits)
    r.notes.push_back("the heat does not fit the cooling even at the minimum clock factor");
  if (in.storage_read_Bps <= 0)
    r.notes.push_back("storage read bandwidth unknown: no data-loading stall assumed");
  if (!effective_known)
    r.notes.push_back("the cluster has no storage system: checkpoint write time, goodput and the "
                      "effective time to train are unknown; energy and cost per run exclude "
                      "failure overhead (add \"storage\" to the cluster file)");
  else if (!std::isfinite(r.effective_time_to_train_s))
    r.notes.push_back("failures arrive faster than checkpoints and restarts allow: the run "
                      "does not finish in expectation");
  if (in.cloud_usd_per_gpu_hour <= 0)
    r.notes.push_back("no cloud rental price in the catalog for this GPU: no cloud comparison");
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
      tl.push_back({{"state", s.state}, {"start_s", s.start_s}, {"duration_s", s.duration_s},
                    {"gpu_W", s.gpu_W}, {"it_W", s.it_W}});
    power["timeline"] = tl;
  }
  const auto& c = r.cooling;
  json cooling = {{"facility", c.facility_name},
                  {"liquid", c.liquid},
                  {"nodes_per_rack", c.nodes_per_rack},
                  {"racks", c.racks},
                  {"heat_per_rack_W", num(c.heat_per_rack_W)},
                  {"heat_per_rack_unthrottled_W", num(c.heat_per_rack_unthrottled_W)},
                  {"rack_cooling_W", num(c.rack_cooling_W)},
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
  json cost = {{"capex_usd", num(k.capex_usd)},
               {"capex_breakdown_usd",
                {{"servers", num(k.servers_usd)},
                 {"network", num(k.network_usd)},
                 {"storage", num(k.storage_usd)},
                 {"facility", num(k.facility_usd)}}},
               {"amortized_usd_per_year", num(k.amortized_usd_per_year)},
               {"opex_usd_per_year", num(k.opex_usd_per_year)},
               {"electricity_usd_per_year", num(k.electricity_usd_per_year)},
               {"maintenance_usd_per_year", num(k.maintenance_usd_per_year)},
               {"usd_per_gpu_hour", num(k.usd_per_gpu_hour)},
               {"cost_per_run_usd", num(k.cost_per_run_usd)},
               {"energy_cost_per_run_usd", num(k.energy_cost_per_run_usd)},
               {"usd_per_million_tokens", opt(k.usd_per_million_tokens)},
               {"cloud_usd_per_gpu_hour", opt(k.cloud_usd_per_gpu_hour)},
               {"cloud_cost_per_run_usd", opt(k.cloud_cost_per_run_usd)},
               {"breakeven_utilization", k.cloud_usd_per_gpu_hour > 0 ? num(k.breakeven_utilization) : json(nullptr)}};
  const auto& f = r.reliability;
  json rates = json::array();
  for (const auto& x : f.rates)
    rates.push_back({{"class", x.id}, {"per", x.per}, {"units", x.units},
                     {"failures_per_day", num(x.failures_per_day)}, {"causes", x.causes}});
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
              {"expected_failures", num(f.expected_failures)},
              {"goodput", num(f.goodput)},
              {"effective_time_to_train_s", num(f.effective_time_to_train_s)},
              {"lost_time_s",
               {{"checkpoints", num(f.checkpoint_overhead_s)},
                {"rework", num(f.rework_s)},
                {"restarts", num(f.restart_total_s)}}}};
  if (f.monte_carlo.trials > 0)
    rel["monte_carlo"] = {{"trials", f.monte_carlo.trials},
                          {"seed", f.monte_carlo.seed},
                          {"p50_s", num(f.monte_carlo.p50_s)},
                          {"p90_s", num(f.monte_carlo.p90_s)},
                          {"mean_s", num(f.monte_carlo.mean_s)},
                          {"mean_failures", num(f.monte_carlo.mean_failures)}};
  const auto& s = r.storage;
  json storage = {{"required_read_Bps", num(s.required_read_Bps)},
                  {"available_read_Bps", s.available_read_Bps > 0 ? num(s.available_read_Bps) : json(nullptr)},
                  {"stall_fraction", num(s.stall_fraction)},
                  {"iteration_time_s", num(s.iteration_s)},
                  {"checkpoint_burst_Bps", num(s.checkpoint_burst_Bps)},
                  {"checkpoint_burst_s", num(s.checkpoint_burst_s)},
                  {"checkpoint_bytes_per_node", num(s.checkpoint_bytes_per_node)}};
  return json{{"power", power},
              {"energy_per_run_J", num(r.energy_per_run_J)},
              {"energy_per_run_it_J", num(r.energy_per_run_it_J)},
              {"cooling", cooling},
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
                {"reliability_profile", r.options.reliability_profile}}}};
}

namespace {

std::string fmt(const char* f, double a) {
  char b[64];
  std::snprintf(b, sizeof b, f, a);
  return b;
}
std::string scaled(double v, const char* unit, const char* const* prefixes, int n, double base) {
  if (!std::isfinite(v)) return "never";
  int i = 0;
  double x = v;
  while (i + 1 < n && std::abs(x) >= base) {
    x /= base;
    ++i;
  }
  return fmt("%.3g", x) + " " + prefixes[i] + unit;
}
std::string watts(double v) {
  static const char* const p[] = {"", "k", "M", "G"};
  return scaled(v, "W", p, 4, 1000);
}
std::string joules(double v) {
  if (!std::isfinite(v)) return "never";
  if (v >= 3.6e12) return fmt("%.3g GWh", v / 3.6e12);
  if (v >= 3.6e9) return fmt("%.3g MWh", v / 3.6e9);
  static const char* const p[] = {"", "k", "M", "G"};
  return scaled(v, "J", p, 4, 1000);
}
std::string bytes(double v) {
  static const char* const p[] = {"", "k", "M", "G", "T", "P"};
  return scaled(v, "B", p, 6, 1000);
}
std::string rate(double v) { return bytes(v) + "/s"; }
std::string usd(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (std::abs(v) >= 1e6) return fmt("$%.3gM", v / 1e6);
  if (std::abs(v) >= 1e3) return fmt("$%.3gk", v / 1e3);
  return fmt("$%.3g", v);
}
std::string duration(double s) {
  if (std::isnan(s)) return "unknown";
  if (!std::isfinite(s)) return "never";
  if (s >= 2 * 86400) return fmt("%.3g d", s / 86400);
  if (s >= 2 * 3600) return fmt("%.3g h", s / 3600);
  if (s >= 120) return fmt("%.3g min", s / 60);
  return fmt("%.3g s", s);
}
std::string pct(double v) { return std::isnan(v) ? "unknown" : fmt("%.1f%%", 100 * v); }

}  // namespace

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
  std::string cool = "cooling (" + (c.facility_name.empty() ? "" : c.facility_name + ", ") +
                     std::string(c.liquid ? "liquid" : "air") + "): " +
                     std::to_string(c.nodes_per_rack) + " nodes/rack x " +
                     std::to_string(c.racks) + " racks, heat " + watts(c.heat_per_rack_W) +
                     "/rack vs " + watts(c.rack_cooling_W) + " cooling";
  if (c.throttle_factor < 1)
    cool += "; GPUs throttle to " + fmt("%.3f", c.throttle_factor) + " clock (unthrottled " +
            watts(c.heat_per_rack_unthrottled_W) + "/rack), time to train " +
            duration(c.time_to_train_unthrottled_s) + " -> " + duration(c.time_to_train_s);
  else
    cool += "; no throttling";
  if (!c.fits) cool += "; DOES NOT FIT even at the minimum clock";
  out.push_back(cool);
  std::string cost = "cost: capex " + usd(k.capex_usd) + " (servers " + usd(k.servers_usd) +
                     ", network " + usd(k.network_usd) + ", storage " + usd(k.storage_usd) +
                     ", facility " + usd(k.facility_usd) + "), opex " + usd(k.opex_usd_per_year) +
                     "/yr; owned " + fmt("$%.2f", k.usd_per_gpu_hour) + "/GPU-h";
  if (k.cloud_usd_per_gpu_hour > 0)
    cost += " vs cloud " + fmt("$%.2f", k.cloud_usd_per_gpu_hour) + " (break-even at " +
            (std::isfinite(k.breakeven_utilization) ? pct(k.breakeven_utilization) : "never") +
            " utilisation)";
  out.push_back(cost);
  std::string run = "run: " + usd(k.cost_per_run_usd) + " owned";
  if (k.cloud_cost_per_run_usd > 0) run += ", " + usd(k.cloud_cost_per_run_usd) + " rented";
  if (k.usd_per_million_tokens > 0) run += ", " + fmt("$%.3g", k.usd_per_million_tokens) + " per million tokens";
  out.push_back(run);
  std::string rel = "failures (" + f.profile + "): MTBF " + duration(f.mtbf_s) + "; checkpoint " +
                    bytes(f.checkpoint_bytes) + " written in " + duration(f.checkpoint_write_s) +
                    " every " + duration(f.checkpoint_interval_s) + ", restart " +
                    duration(f.restart_s) + "; goodput " + pct(f.goodput) +
                    "; time to train " + duration(r.time_to_train_s) + " -> " +
                    duration(f.effective_time_to_train_s);
  if (f.monte_carlo.trials > 0)
    rel += " (Monte-Carlo p50 " + duration(f.monte_carlo.p50_s) + ", p90 " +
           duration(f.monte_carlo.p90_s) + ")";
  out.push_back(rel);
  std::string st = "storage: input " + rate(s.required_read_Bps) + " needed vs " +
                   (s.available_read_Bps > 0 ? rate(s.available_read_Bps) : std::string("unknown")) +
                   " available";
  st += s.stall_fraction > 0 ? ", stall " + pct(s.stall_fraction) : ", no stall";
  if (s.checkpoint_burst_s > 0)
    st += "; checkpoint burst " + rate(s.checkpoint_burst_Bps) + " for " + duration(s.checkpoint_burst_s);
  out.push_back(st);
  return out;
}

}  // namespace tutti
