// Failures and checkpoints: per-component rates from published interruption counts, Young/Daly
// checkpoint intervals, expected goodput and a seeded Monte-Carlo estimate
// (docs/facility.md "Failures and checkpoints").
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/topologies/catalog.hpp"

namespace tutti {

std::vector<ReliabilityProfile> parse_reliability(const Doc& doc) {
  Obj root = doc.root();
  root.allow("kind");
  root.allow("notes");
  std::vector<ReliabilityProfile> out;
  Arr profiles = root.req("profiles").arr();
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    Obj p = profiles.at(i).obj();
    ReliabilityProfile r;
    r.id = p.req("id").string();
    r.name = p.req("name").string();
    r.source = p.req("source").string();
    p.allow("estimates");
    p.allow("estimate_notes");
    Obj ob = p.req("observed").obj();
    r.observed_s = ob.req("duration").quantity(Dim::Time, 1.0);
    r.gpus = static_cast<double>(ob.req("gpus").integer(0, 1 << 30));
    r.nodes = static_cast<double>(ob.req("nodes").integer(0, 1 << 30));
    r.nics = static_cast<double>(ob.req("nics").integer(0, 1 << 30));
    r.links = static_cast<double>(ob.req("links").integer(0, 1 << 30));
    r.switches = static_cast<double>(ob.req("switches").integer(0, 1 << 30));
    ob.done();
    r.restart_s = p.req("restart_time").quantity(Dim::Time);
    Arr classes = p.req("classes").arr();
    for (std::size_t k = 0; k < classes.size(); ++k) {
      Value cv = classes.at(k);
      Obj c = cv.obj();
      FailureClass fc;
      fc.id = c.req("id").string();
      fc.per = c.req("per").choice({"gpu", "node", "nic", "link", "switch"});
      fc.failures = c.req("failures").number(0.0, 1e9);
      fc.causes = c.req("causes").string();
      c.allow("source");
      double units = fc.per == "gpu"    ? r.gpus
                     : fc.per == "node" ? r.nodes
                     : fc.per == "nic"  ? r.nics
                     : fc.per == "link" ? r.links
                                        : r.switches;
      double window_s = r.observed_s;
      // A class from another study than the profile's carries its own observation window.
      if (auto own = c.opt("observed")) {
        Obj o = own->obj();
        window_s = o.req("duration").quantity(Dim::Time, 1.0);
        units = static_cast<double>(o.req("units").integer(1, 1 << 30));
        o.done();
      }
      c.done();
      if (!(units > 0))
        cv.fail("a class whose unit '" + fc.per + "' has a positive count in 'observed'");
      fc.rate_per_unit_s = fc.failures / (units * window_s);
      r.classes.push_back(std::move(fc));
    }
    if (r.classes.empty()) p.req("classes").fail("at least one failure class");
    p.done();
    out.push_back(std::move(r));
  }
  root.done();
  return out;
}

const std::vector<ReliabilityProfile>& builtin_reliability_profiles() {
  // topologies/catalog/reliability.json, embedded in the binary with the hardware catalog.
  static const std::vector<ReliabilityProfile> profiles =
      parse_reliability(Catalog::builtin().file("reliability"));
  return profiles;
}

const ReliabilityProfile& reliability_profile(const std::string& id) {
  const auto& all = builtin_reliability_profiles();
  std::string known;
  for (const auto& p : all) {
    if (p.id == id) return p;
    known += (known.empty() ? "" : ", ") + p.id;
  }
  throw InputError("", "reliability profile", "\"" + id + "\"", "one of " + known);
}

double young_interval_s(double c, double m) {
  return std::sqrt(2.0 * c * m);
}

double daly_interval_s(double c, double m) {
  if (c >= 0.5 * m) return m;
  return std::sqrt(2.0 * c * m) - c;
}

double expected_wall_time_s(double work, double tau, double c, double rst, double m) {
  const double inf = std::numeric_limits<double>::infinity();
  if (work <= 0) return 0;
  if (!(m > 0) || std::isinf(m)) return c > 0 && tau > 0 ? work * (1 + c / tau) : work;
  double ckpt = (c > 0) ? (tau > 0 ? c / tau : inf) : 0.0;
  double denom = 1.0 - (rst + 0.5 * (tau + c)) / m;
  if (denom <= 0 || std::isinf(ckpt)) return inf;
  return work * (1.0 + ckpt) / denom;
}

MonteCarloResult monte_carlo_time_to_train(double work, double tau, double c, double rst, double m,
                                           int trials, std::uint64_t seed) {
  MonteCarloResult r;
  r.trials = trials;
  r.seed = seed;
  if (trials <= 0) return r;
  const double inf = std::numeric_limits<double>::infinity();
  if (!std::isfinite(expected_wall_time_s(work, tau, c, rst, m))) {
    r.p50_s = r.p90_s = r.mean_s = inf;
    return r;
  }
  // Free checkpoints (c == 0) mean continuous checkpointing: tiny segments lose ~nothing.
  if (tau <= 0) tau = work * 1e-6;
  std::mt19937_64 rng(seed);
  // Exponential draws by inversion from 53 random bits: identical on every platform, unlike
  // std::exponential_distribution.
  auto draw = [&] {
    double u = static_cast<double>((rng() >> 11) + 1) * 0x1.0p-53;  // (0, 1]
    return -std::log(u) * m;
  };
  const double seg_cost = tau + c;
  std::vector<double> walls(static_cast<std::size_t>(trials));
  double sum = 0, fails_sum = 0;
  const double max_failures = 1e7;
  for (int k = 0; k < trials; ++k) {
    double t = 0, done = 0, fails = 0;
    double next = std::isfinite(m) ? draw() : inf;
    while (done < work) {
      double left = work - done;
      // Whole segments that finish before the next failure.
      double whole = std::floor(left / tau);
      double fit = std::isfinite(next) ? std::floor((next - t) / seg_cost) : whole;
      double n = std::min(whole, std::max(0.0, fit));
      t += n * seg_cost;
      done += n * tau;
      if (done >= work) break;
      double seg = std::min(tau, work - done);
      if (t + seg + c <= next) {  // The last, partial segment.
        t += seg + c;
        done += seg;
        break;
      }
      // A failure: the running segment is lost; restart (failures may strike restarts too).
      double tf = next;
      fails += 1;
      t = tf + rst;
      next = tf + draw();
      while (next < t && fails < max_failures) {
        fails += 1;
        t = next + rst;
        next = next + draw();
      }
      if (fails >= max_failures) {
        t = inf;
        break;
      }
    }
    walls[static_cast<std::size_t>(k)] = t;
    sum += t;
    fails_sum += fails;
  }
  std::sort(walls.begin(), walls.end());
  auto rank = [&](double q) {
    auto i = static_cast<std::size_t>(std::ceil(q * trials)) - 1;
    return walls[std::min(i, walls.size() - 1)];
  };
  r.p50_s = rank(0.5);
  r.p90_s = rank(0.9);
  r.mean_s = sum / trials;
  r.mean_failures = fails_sum / trials;
  return r;
}

ReliabilityResult compute_reliability(const FacilityInputs& in, const FacilityOptions& o,
                                      double work_s) {
  const ReliabilityProfile& p = reliability_profile(o.reliability_profile);
  ReliabilityResult r;
  r.profile = p.id;
  r.rates_source = "profile " + p.id;
  r.checkpoint_mode = o.checkpoint_mode;
  double lambda = 0;  // failures per second, whole cluster
  const bool site_rates = o.node_mtbf_s > 0 || o.gpu_mtbf_s > 0;
  if (site_rates) {
    // The site's own measured rates replace the profile's classes.
    r.rates_source = "site MTBF";
    auto add = [&](const char* id, const char* per, double units, double mtbf_s) {
      if (!(mtbf_s > 0)) return;
      FailureRate fr;
      fr.id = id;
      fr.per = per;
      fr.causes = "given with --facility";
      fr.units = units;
      fr.failures_per_day = units / mtbf_s * 86400.0;
      lambda += units / mtbf_s;
      r.rates.push_back(std::move(fr));
    };
    add("node", "node", in.nodes, o.node_mtbf_s);
    add("gpu", "gpu", in.gpus, o.gpu_mtbf_s);
  }
  for (const auto& c : site_rates ? std::vector<FailureClass>{} : p.classes) {
    FailureRate fr;
    fr.id = c.id;
    fr.per = c.per;
    fr.causes = c.causes;
    if (c.per == "gpu")
      fr.units = in.gpus;
    else if (c.per == "node")
      fr.units = in.nodes;
    else if (c.per == "nic")
      fr.units = in.nics > 0 ? in.nics : in.gpus;
    else if (c.per == "link")
      fr.units = in.network_links > 0 ? in.network_links : in.gpus * (p.links / p.gpus);
    else
      fr.units = in.blocking_switches;
    double rate = c.rate_per_unit_s * fr.units;
    fr.failures_per_day = rate * 86400.0;
    lambda += rate;
    r.rates.push_back(std::move(fr));
  }
  const double inf = std::numeric_limits<double>::infinity();
  r.failures_per_day = lambda * 86400.0;
  r.mtbf_s = lambda > 0 ? 1.0 / lambda : inf;
  r.checkpoint_bytes = in.checkpoint_bytes;
  if (in.checkpoint_bytes > 0 && !(in.storage_write_Bps > 0)) {
    // No storage system: the write time, and everything that depends on it, is unknown.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    r.checkpoint_write_s = r.young_interval_s = r.daly_interval_s = nan;
    r.checkpoint_interval_s = o.checkpoint_interval_s > 0 ? o.checkpoint_interval_s : nan;
    r.restart_s = o.restart_s >= 0 ? o.restart_s : p.restart_s;
    r.work_s = work_s;
    r.goodput = r.effective_time_to_train_s = nan;
    r.expected_failures = work_s / r.mtbf_s;
    return r;
  }
  if (in.checkpoint_bytes > 0) r.checkpoint_write_s = in.checkpoint_bytes / in.storage_write_Bps;
  // What training waits for per checkpoint (C in the formulas), by how the checkpoint is taken.
  const double per_node_bytes = in.nodes > 0 ? in.checkpoint_bytes / in.nodes : in.checkpoint_bytes;
  const double per_gpu_bytes = in.gpus > 0 ? in.checkpoint_bytes / in.gpus : in.checkpoint_bytes;
  double critical = r.checkpoint_write_s;
  if (o.checkpoint_mode == "async")
    critical = in.gpu_host_Bps > 0 ? per_gpu_bytes / in.gpu_host_Bps : r.checkpoint_write_s;
  else if (o.checkpoint_mode == "memory")
    critical =
        in.node_scaleout_Bps > 0 ? per_node_bytes / in.node_scaleout_Bps : r.checkpoint_write_s;
  r.checkpoint_critical_s = critical;
  r.young_interval_s = young_interval_s(critical, r.mtbf_s);
  r.daly_interval_s = daly_interval_s(critical, r.mtbf_s);
  r.checkpoint_interval_s =
      o.checkpoint_interval_s > 0 ? o.checkpoint_interval_s : r.young_interval_s;
  // An asynchronous write must finish before the next one starts.
  if (o.checkpoint_mode == "async")
    r.checkpoint_interval_s = std::max(r.checkpoint_interval_s, r.checkpoint_write_s);
  // Recovery = detection + restart + reload (the parts given; the rest is in the restart time).
  r.restart_s = o.restart_s >= 0 ? o.restart_s : p.restart_s;
  if (o.detect_s >= 0) r.detect_s = o.detect_s;
  if (o.reload == "storage" && in.storage_read_Bps > 0)
    r.reload_s = in.checkpoint_bytes / in.storage_read_Bps;
  else if (o.reload == "peer" && in.node_scaleout_Bps > 0)
    r.reload_s = per_node_bytes / in.node_scaleout_Bps;
  r.restart_s += r.detect_s + r.reload_s;
  r.work_s = work_s;
  double w = expected_wall_time_s(work_s, r.checkpoint_interval_s, critical, r.restart_s, r.mtbf_s);
  r.effective_time_to_train_s = w;
  // Goodput does not depend on the amount of work in this model: take it for one second.
  const double w1 =
      expected_wall_time_s(1.0, r.checkpoint_interval_s, critical, r.restart_s, r.mtbf_s);
  r.goodput = std::isfinite(w1) && w1 > 0 ? 1.0 / w1 : 0.0;
  if (std::isfinite(w)) {
    double tau = r.checkpoint_interval_s;
    r.expected_failures = std::isfinite(r.mtbf_s) ? w / r.mtbf_s : 0.0;
    r.checkpoint_overhead_s = tau > 0 ? work_s * critical / tau : 0.0;
    r.restart_total_s = r.expected_failures * r.restart_s;
    r.rework_s = w - work_s - r.checkpoint_overhead_s - r.restart_total_s;
    // Goodput loss by cause: checkpoints apart, each class takes its share of the restarts and
    // rework in proportion to its rate (failures arrive as independent Poisson processes).
    if (w > 0) {
      r.checkpoint_loss = r.checkpoint_overhead_s / w;
      const double failure_loss = (r.restart_total_s + r.rework_s) / w;
      for (auto& fr : r.rates)
        fr.goodput_loss =
            lambda > 0 ? failure_loss * (fr.failures_per_day / 86400.0) / lambda : 0.0;
    }
  }
  r.monte_carlo = monte_carlo_time_to_train(work_s, r.checkpoint_interval_s, critical, r.restart_s,
                                            r.mtbf_s, o.monte_carlo_trials, o.seed);
  return r;
}

}  // namespace tutti
