#include "tutti/calibrate/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tutti/core/error.hpp"

namespace tutti::calibrate {

namespace {

/// Weighted least squares of t_i ~ a * g_i + c with weights 1/t_i^2 (relative error), a > 0,
/// c >= 0. Returns the sum of squared relative residuals.
double linear_rel_fit(const std::vector<double>& g, const std::vector<double>& t, double& a,
                      double& c, bool time_weighted = false) {
  double sw = 0, sg = 0, sgg = 0, st = 0, sgt = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    double w = time_weighted ? 1.0 / t[i] : 1.0 / (t[i] * t[i]);
    sw += w;
    sg += w * g[i];
    sgg += w * g[i] * g[i];
    st += w * t[i];
    sgt += w * g[i] * t[i];
  }
  double det = sw * sgg - sg * sg;
  if (std::fabs(det) > 1e-300 * sw * sgg) {
    a = (sw * sgt - sg * st) / det;
    c = (sgg * st - sg * sgt) / det;
  } else {
    a = 0;
    c = -1;
  }
  if (c < 0 || a <= 0) {  // constrained: c = 0
    c = 0;
    a = sgg > 0 ? sgt / sgg : 0;
  }
  double e = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    double r = (a * g[i] + c - t[i]) / t[i];
    e += r * r;
  }
  return e;
}

std::vector<double> log_grid(double lo, double hi, int per_decade) {
  std::vector<double> v{0.0};
  for (double x = std::log10(lo); x <= std::log10(hi) + 1e-9; x += 1.0 / per_decade)
    v.push_back(std::pow(10.0, x));
  return v;
}

template <typename Pred>
void errors(const std::vector<double>& t, Pred pred, double& rms, double& maxe) {
  double s = 0;
  maxe = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    double r = std::fabs(pred(i) - t[i]) / t[i];
    s += r * r;
    maxe = std::max(maxe, r);
  }
  rms = t.empty() ? 0 : std::sqrt(s / static_cast<double>(t.size()));
}

}  // namespace

double GemmFit::predict_s(double m, double n, double k) const {
  double f = 2 * m * n * k, d = std::min({m, n, k});
  double eff = eff_max * (half_flops > 0 ? f / (f + half_flops) : 1.0) *
               (half_dim > 0 ? d / (d + half_dim) : 1.0);
  return f / (peak_flops_per_s * eff) + launch_overhead_s;
}

GemmFit fit_gemm(const std::vector<GemmSample>& s, double peak) {
  std::vector<GemmSample> v;
  for (const auto& x : s)
    if (x.time_s > 0 && x.m > 0 && x.n > 0 && x.k > 0) v.push_back(x);
  if (v.size() < 3)
    throw InputError("calibrate: a GEMM fit needs at least 3 GEMM measurements, got " +
                     std::to_string(v.size()) + " (run `tutti exec bench --gemm`)");
  if (peak <= 0)
    for (const auto& x : v) peak = std::max(peak, 2 * x.m * x.n * x.k / x.time_s);
  std::vector<double> t;
  for (const auto& x : v) t.push_back(x.time_s);
  GemmFit best;
  double best_err = std::numeric_limits<double>::infinity();
  std::vector<double> g(v.size());
  for (double hf : log_grid(1e3, 1e13, 8))
    for (double hd : log_grid(0.5, 4096, 8)) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        double f = 2 * v[i].m * v[i].n * v[i].k, d = std::min({v[i].m, v[i].n, v[i].k});
        g[i] = f / peak * (hf > 0 ? (f + hf) / f : 1.0) * (hd > 0 ? (d + hd) / d : 1.0);
      }
      double a = 0, c = 0;
      double e = linear_rel_fit(g, t, a, c);
      if (e < best_err && a > 0) {
        best_err = e;
        best.eff_max = 1.0 / a;
        best.half_flops = hf;
        best.half_dim = hd;
        best.launch_overhead_s = c;
      }
    }
  best.peak_flops_per_s = peak;
  best.samples = static_cast<int>(v.size());
  errors(
      t, [&](std::size_t i) { return best.predict_s(v[i].m, v[i].n, v[i].k); }, best.rms_rel_error,
      best.max_rel_error);
  return best;
}

double MemFit::predict_s(double bytes) const {
  double eff = eff_max * (half_bytes > 0 ? bytes / (bytes + half_bytes) : 1.0);
  return bytes / (peak_Bps * eff) + launch_overhead_s;
}

MemFit fit_membound(const std::vector<MemSample>& s, double peak) {
  std::vector<MemSample> v;
  for (const auto& x : s)
    if (x.time_s > 0 && x.bytes > 0) v.push_back(x);
  if (v.size() < 2)
    throw InputError("calibrate: a memory-bound fit needs at least 2 copy measurements, got " +
                     std::to_string(v.size()) + " (run `tutti exec bench --gemm --membound ...`)");
  if (peak <= 0)
    for (const auto& x : v) peak = std::max(peak, x.bytes / x.time_s);
  std::vector<double> t, g(v.size());
  for (const auto& x : v) t.push_back(x.time_s);
  MemFit best;
  double best_err = std::numeric_limits<double>::infinity();
  for (double hb : log_grid(1e2, 1e10, 8)) {
    for (std::size_t i = 0; i < v.size(); ++i)
      g[i] = v[i].bytes / peak * (hb > 0 ? (v[i].bytes + hb) / v[i].bytes : 1.0);
    double a = 0, c = 0;
    double e = linear_rel_fit(g, t, a, c, true);
    if (e < best_err && a > 0) {
      best_err = e;
      best.eff_max = 1.0 / a;
      best.half_bytes = hb;
      best.launch_overhead_s = c;
    }
  }
  best.peak_Bps = peak;
  best.samples = static_cast<int>(v.size());
  errors(
      t, [&](std::size_t i) { return best.predict_s(v[i].bytes); }, best.rms_rel_error,
      best.max_rel_error);
  return best;
}

double AlphaBetaFit::predict_s(double size_bytes, double bus_factor) const {
  return latency_s + size_bytes * bus_factor / busbw_Bps;
}

AlphaBetaFit fit_alpha_beta(const std::vector<CollSample>& s, double bus_factor) {
  std::vector<double> g, t;
  for (const auto& x : s)
    if (x.time_s > 0 && x.size_bytes > 0) {
      g.push_back(x.size_bytes * bus_factor);
      t.push_back(x.time_s);
    }
  if (t.size() < 2)
    throw InputError("calibrate: a collective fit needs at least 2 sizes, got " +
                     std::to_string(t.size()));
  AlphaBetaFit f;
  double a = 0, c = 0;
  linear_rel_fit(g, t, a, c);
  if (a <= 0)
    throw InputError("calibrate: collective times do not grow with size; cannot fit a bandwidth");
  f.latency_s = c;
  f.busbw_Bps = 1.0 / a;
  f.samples = static_cast<int>(t.size());
  errors(
      t, [&](std::size_t i) { return f.latency_s + g[i] * a; }, f.rms_rel_error, f.max_rel_error);
  return f;
}

}  // namespace tutti::calibrate
