// Decode-regime calibration from serve replay documents (decode_fit.hpp).
#include "tutti/calibrate/decode_fit.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "tutti/core/error.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/topologies/catalog.hpp"

namespace tutti::calibrate {

DecodeSamples decode_samples(const std::vector<Measurements>& docs, double tile) {
  DecodeSamples s;
  for (const auto& d : docs) {
    if (!d.replay || d.replay->serve_phase != "decode") continue;
    s.dtype = parse_enum<DType>(d.replay->serve_dtype).value_or(DType::BF16);
    s.cpu = s.cpu || d.replay->device == "cpu";
    const double eb = dtype_bytes(s.dtype);
    for (const ReplayedOp& op : d.replay->ops) {
      if (op.time_s <= 0) continue;
      if (op.kind == "gemm" && op.m > 0 && tile > 0 && static_cast<double>(op.m) < tile) {
        const double m = static_cast<double>(op.m), n = static_cast<double>(op.n),
                     k = static_cast<double>(op.k);
        const double batch = static_cast<double>(std::max<std::int64_t>(op.batch, 1));
        s.gemv_bytes.push_back(op.bytes > 0 ? op.bytes : (m * k + k * n + m * n) * batch * eb);
        s.gemv_flops.push_back(2.0 * m * n * k * batch);
        s.gemv_time_s.push_back(op.time_s);
      } else if (op.kind == "membound" && op.bytes > 0) {
        s.mem_bytes.push_back(op.bytes);
        s.mem_time_s.push_back(op.time_s);
      }
    }
  }
  return s;
}

namespace {
/// t = bytes / bandwidth + fixed, fixed >= 0, constrained to reproduce the measured total time of
/// the samples (the step sums its ops, so the regime's time is what the prediction needs), and
/// among those lines the one with the least squared relative error per op.
struct LineFit {
  double bandwidth_Bps = 0, fixed_s = 0, rms_rel_error = 0, max_rel_error = 0;
  double measured_s = 0;  ///< Sum of the samples' times (= the fitted line's sum).
  int samples = 0;
};
std::optional<LineFit> fit_line(const std::vector<double>& x, const std::vector<double>& t) {
  if (x.size() < 2) return std::nullopt;
  const double n = static_cast<double>(x.size());
  double X = 0, T = 0;
  for (std::size_t i = 0; i < x.size(); ++i) X += x[i], T += t[i];
  if (!(X > 0) || !(T > 0)) return std::nullopt;
  // c = (T - a X) / n; prediction a (x_i - X/n) + T/n; a in (0, T/X] keeps c >= 0.
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double w = 1.0 / (t[i] * t[i]), d = x[i] - X / n, e = T / n - t[i];
    num -= w * d * e;
    den += w * d * d;
  }
  double a = den > 0 ? num / den : T / X;
  if (!(a > 0) || a > T / X) a = T / X;  // no fixed time can be negative; none can carry it all
  LineFit f;
  f.bandwidth_Bps = 1.0 / a;
  f.fixed_s = std::max(0.0, (T - a * X) / n);
  f.samples = static_cast<int>(x.size());
  f.measured_s = T;
  double se = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = std::fabs(a * x[i] + f.fixed_s - t[i]) / t[i];
    se += e * e;
    f.max_rel_error = std::max(f.max_rel_error, e);
  }
  f.rms_rel_error = std::sqrt(se / n);
  return f;
}
nlohmann::json fit_json(const LineFit& f, double B) {
  return {{"samples", f.samples},
          {"bandwidth_Bps", f.bandwidth_Bps},
          {"bandwidth_efficiency", f.bandwidth_Bps / B},
          {"fixed_time_s", f.fixed_s},
          {"measured_total_s", f.measured_s},
          {"rms_error_pct", f.rms_rel_error * 100},
          {"max_error_pct", f.max_rel_error * 100}};
}
}  // namespace

void fit_decode(const DecodeSamples& s, const GpuSpec* gpu, CalibrationProfile& prof,
                DeviceOverride& dev, nlohmann::json& report) {
  const std::optional<LineFit> g = fit_line(s.gemv_bytes, s.gemv_time_s);
  const std::optional<LineFit> m = fit_line(s.mem_bytes, s.mem_time_s);
  if (!g && !m)
    throw InputError(
        "calibrate: the serve replay decode steps hold fewer than 2 GEMV and 2 memory-bound ops; "
        "replay a decode step of a model with several layers");
  const double B = std::max(g ? g->bandwidth_Bps : 0.0, m ? m->bandwidth_Bps : 0.0);
  dev.hbm_bw_Bps = B;
  nlohmann::json r = {{"hbm_bandwidth_Bps", B}, {"dtype", to_string(s.dtype)}};
  if (g) {
    // The GEMM bandwidth is the fitted line's, a constant share of B.
    prof.gemm.bandwidth = {g->bandwidth_Bps / B, 0};
    prof.gemm.launch_overhead_s = std::max(0.0, g->fixed_s - prof.gemm.half_time_s);
    r["gemv"] = fit_json(*g, B);
    if (gpu) {
      // The measured GEMVs ran at their bytes' time: the compute peak is at least what keeps each
      // of them memory-bound in the model.
      const double eff = prof.gemm.flops.eff_max;
      double need = 0;
      for (std::size_t i = 0; i < s.gemv_bytes.size(); ++i) {
        const double t_mem = s.gemv_bytes[i] / (B * prof.gemm.bandwidth.at(s.gemv_bytes[i]));
        need = std::max(need, s.gemv_flops[i] / (eff * t_mem));
      }
      const double have = peak_flops(*gpu, s.dtype, prof);
      if (need > have) {
        if (s.cpu) {
          for (auto& pk : dev.peak_flops) pk = need;  // every type runs as sgemm on a CPU
        } else {
          dev.peak_flops[static_cast<int>(s.dtype)] = need;
        }
        r["peak_flops_raised_to"] = need;
      }
    }
  }
  if (m) {
    prof.membound.bandwidth = {m->bandwidth_Bps / B, 0};
    prof.membound.launch_overhead_s = m->fixed_s;
    r["kv_read_membound"] = fit_json(*m, B);
  }
  report["decode"] = r;
}

}  // namespace tutti::calibrate
