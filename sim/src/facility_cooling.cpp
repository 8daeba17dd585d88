// Cooling and thermal throttling: the clock at which the heat fits, as a fixed point between
// power and speed (docs/facility.md "Cooling and throttling").
#include <algorithm>
#include <cmath>

#include "tutti/core/error.hpp"
#include "tutti/sim/facility.hpp"

namespace tutti {

int nodes_per_rack(const FacilityInputs& in) {
  if (in.nodes_per_rack > 0) return std::min(in.nodes_per_rack, std::max(in.nodes, 1));
  if (in.racks > 0) return std::max(1, (in.nodes + in.racks - 1) / in.racks);
  double node_W = in.node_max_power_W > 0
                      ? in.node_max_power_W
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
  Retimer retime = retime_in ? retime_in
                             : Retimer([&in](double s) { return rescale_times(in.times, s); });
  CoolingResult r;
  r.facility_name = in.facility_name;
  r.liquid = in.liquid;
  r.nodes_per_rack = nodes_per_rack(in);
  r.racks = in.racks > 0 ? in.racks : (in.nodes + r.nodes_per_rack - 1) / r.nodes_per_rack;
  r.rack_cooling_W = in.rack_cooling_W;
  r.total_cooling_W = in.total_cooling_W;

  const double f_cap = power_cap_clock_factor(in.gpu);
  const double f_min = o.min_clock_factor;
  if (f_cap < f_min)
    throw InputError("facility: the GPU power cap of " + std::to_string(in.gpu.cap_W()) +
                     " W leaves the clock below the minimum clock factor " +
                     std::to_string(f_min) + "; raise the cap");
  r.power_cap_factor = f_cap;
  r.heat_per_rack_unthrottled_W = heat_at(in, r.nodes_per_rack, in.times, 1.0).per_rack_W;

  // Fixed point: time the iteration at slowdown s (engine or rescale), then, with the times
  // rescaled locally around that point, find the largest clock factor whose heat fits; repeat
  // with the new slowdown until it stops moving.
  // in.times is the iteration at full clock: no re-simulation when nothing throttles.
  auto time_at = [&](double slowdown) { return slowdown == 1.0 ? in.times : retime(slowdown); };
  double s = 1.0 / f_cap;
  IterationTimes t = time_at(s);
  bool ok = true;
  int it = 0;
  for (it = 1; it <= 50; ++it) {
    auto local = [&](double f) { return rescale_times(t, (1.0 / f) / s); };
    auto fits_at = [&](double f) { return fits(in, heat_at(in, r.nodes_per_rack, local(f), f)); };
    double f_new;
    if (fits_at(f_cap)) {
      f_new = f_cap;
      ok = true;
    } else if (!fits_at(f_min)) {
      f_new = f_min;
      ok = false;
    } else {
      double lo = f_min, hi = f_cap;  // fits at lo, not at hi
      for (int k = 0; k < 100 && hi - lo > 1e-12; ++k) {
        double mid = 0.5 * (lo + hi);
        (fits_at(mid) ? lo : hi) = mid;
      }
      f_new = lo;
      ok = true;
    }
    double s_new = 1.0 / f_new;
    bool converged = std::abs(s_new - s) <= 1e-6 * s;
    if (!converged) {
      s = s_new;
      t = time_at(s);
    }
    if (converged) break;
  }
  check_internal(it <= 50, "solve_cooling: the power/speed fixed point did not converge");
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
