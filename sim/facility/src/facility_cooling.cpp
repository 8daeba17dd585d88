// Cooling and thermal throttling: the clock at which the heat fits, as a fixed point between
// power and speed (docs/facility.md "Cooling and throttling").
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "tutti/core/error.hpp"
#include "tutti/facility/facility.hpp"

namespace tutti {

int nodes_per_rack(const FacilityInputs& in) {
  if (in.nodes_per_rack > 0) return std::min(in.nodes_per_rack, std::max(in.nodes, 1));
  if (in.racks > 0) return std::max(1, (in.nodes + in.racks - 1) / in.racks);
  double node_W = in.node_max_power_W > 0 ? in.node_max_power_W
                                          : in.gpus_per_node * in.gpu.tdp_W + in.node_overhead_W;
  int n = node_W > 0 ? static_cast<int>(std::floor(in.rack_power_W / node_W)) : 1;
  return std::clamp(n, 1, std::max(in.nodes, 1));
}

namespace {

struct Heat {
  double per_rack_W, total_W;
};

Heat heat_at(const FacilityInputs& in, int npr, const IterationTimes& t, double f) {
  PowerResult p = compute_power(in, t, f);
  return {npr * p.node_avg_W, p.avg_it_W};
}

bool fits(const FacilityInputs& in, const Heat& h) {
  const double tol = 1e-9;
  if (h.per_rack_W > in.rack_cooling_W * (1 + tol)) return false;
  if (in.total_cooling_W > 0 && h.total_W > in.total_cooling_W * (1 + tol)) return false;
  return true;
}

}  // namespace

CoolingResult solve_cooling(const FacilityInputs& in, const FacilityOptions& o,
                            const Retimer& retime_in) {
  Retimer retime =
      retime_in ? retime_in : Retimer([&in](double s) { return rescale_times(in.times, s); });
  CoolingResult r;
  r.facility_name = in.facility_name;
  r.liquid = in.liquid;
  r.nodes_per_rack = nodes_per_rack(in);
  r.racks = in.racks > 0 ? in.racks : (in.nodes + r.nodes_per_rack - 1) / r.nodes_per_rack;
  r.rack_cooling_W = in.rack_cooling_W;
  r.rack_power_W = in.rack_power_W;
  r.total_cooling_W = in.total_cooling_W;

  const double f_cap = power_cap_clock_factor(in.gpu);
  const double f_min = o.min_clock_factor;
  if (f_cap < f_min)
    throw InputError("facility: the GPU power cap of " + std::to_string(in.gpu.cap_W()) +
                     " W leaves the clock below the minimum clock factor " + std::to_string(f_min) +
                     "; raise the cap");
  r.power_cap_factor = f_cap;
  r.heat_per_rack_unthrottled_W = heat_at(in, r.nodes_per_rack, in.times, 1.0).per_rack_W;

  // Fixed point s = g(s): time the iteration at slowdown s (engine or rescale), then, with the
  // times rescaled locally around that point, find the largest clock factor f whose heat fits;
  // g(s) = 1 / f. g maps [1/f_cap, 1/f_min] into itself, so h(s) = g(s) - s is >= 0 at the low
  // end and <= 0 at the high end and a root lies between. A plain iteration s <- g(s) can cycle
  // when the engine's re-timing is not smooth (it did: 50 re-simulations, then an internal
  // error), so the step is safeguarded: the bracket [a, b] around the root shrinks every step,
  // taking the secant (or the plain step) when it lands inside and the midpoint otherwise.
  // in.times is the iteration at full clock: no re-simulation when nothing throttles.
  auto time_at = [&](double slowdown) { return slowdown == 1.0 ? in.times : retime(slowdown); };
  auto throttled_clock = [&](const IterationTimes& at, double s_at, bool& fit) {
    auto local = [&](double f) { return rescale_times(at, (1.0 / f) / s_at); };
    auto fits_at = [&](double f) { return fits(in, heat_at(in, r.nodes_per_rack, local(f), f)); };
    fit = true;
    if (fits_at(f_cap)) return f_cap;
    if (!fits_at(f_min)) {
      fit = false;
      return f_min;
    }
    double lo = f_min, hi = f_cap;  // fits at lo, not at hi
    for (int k = 0; k < 100 && hi - lo > 1e-12; ++k) {
      double mid = 0.5 * (lo + hi);
      (fits_at(mid) ? lo : hi) = mid;
    }
    return lo;
  };
  const double s_lo = 1.0 / f_cap, s_hi = 1.0 / f_min, tol = 1e-6;
  double s = s_lo;
  IterationTimes t = time_at(s);
  bool ok = true;
  double g = 1.0 / throttled_clock(t, s, ok);
  double a = s, ha = g - s, b = s_hi, hb = 0;
  bool hb_known = false;
  double width = 2 * (b - a);  // bracket width before the last step
  int it = 1;
  const int max_it = o.max_retimings;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::abs(g - s) > tol * s && b - a > tol * s) {
    if (++it > max_it)
      throw NoAnswerError(
          fmt::format("facility: the cooling/throttling fixed point did not settle in {} "
                      "re-timings (clock factor "
                      "between {:.6f} and {:.6f}); the engine's iteration time is not monotone in "
                      "the clock here: "
                      "use the default linear re-timing, allow more re-timings (--facility "
                      "retimings=N) or a power cap "
                      "that keeps the heat inside the cooling",
                      max_it, 1.0 / b, 1.0 / a));
    double next = hb_known && ha != hb ? a - ha * (b - a) / (hb - ha) : g;
    // Bisect when the candidate falls outside or the last step did not halve the bracket
    // (regula falsi can creep along one end): the bracket at least halves every two steps.
    if (!(next > a && next < b) || b - a > 0.5 * width) next = 0.5 * (a + b);
    width = b - a;
    s = next;
    t = time_at(s);
    g = 1.0 / throttled_clock(t, s, ok);
    const double h = g - s;
    if (h > 0)
      a = s, ha = h;
    else
      b = s, hb = h, hb_known = true;
    if (o.progress && std::chrono::steady_clock::now() - t0 > std::chrono::seconds(1)) {
      // Steps left: the bracket at least halves every two steps until it is tol wide.
      const double left = 2 * std::ceil(std::log2(std::max(1.0, (b - a) / (tol * s))));
      o.progress(static_cast<std::uint64_t>(it),
                 static_cast<std::uint64_t>(std::min<double>(max_it, it + std::max(1.0, left))));
    }
  }
  if (std::abs(g - s) > tol * s) {  // bracket closed: settle at its fitting (slower) end
    s = b;
    t = time_at(s);
    throttled_clock(t, s, ok);
  }
  r.fixed_point_iterations = it;
  r.fits = ok;
  r.throttle_factor = 1.0 / s;
  r.compute_slowdown = s;
  r.times = t;
  Heat h = heat_at(in, r.nodes_per_rack, t, r.throttle_factor);
  r.heat_per_rack_W = h.per_rack_W;
  r.total_heat_W = h.total_W;
  r.time_to_train_unthrottled_s = in.iterations * in.times.iteration_s;
  r.time_to_train_s = in.iterations * t.iteration_s;
  return r;
}

}  // namespace tutti
