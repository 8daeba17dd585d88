#pragma once
// Least-squares fits of the simulator's compute and communication parameters to measurements.
// The fits are model-shaped but engine-neutral: fit_measurements (measurement_fit.hpp) writes them
// into the engine's calibration profile. (They lived in exec/ until issue 23.)
//
// GEMM model (the engine's roofline for compute-bound ops):
//   t = flops / (peak * eff_max * f/(f + half_flops) * d/(d + half_dim)) + launch_overhead,
//   f = 2mnk, d = min(m, n, k).
// Memory-bound model: t = bytes / (peak_bw * eff_max * b/(b + half_bytes)) + launch_overhead.
// Collectives (alpha-beta per op and rank count): t = latency + size * bus_factor / busbw.
// All fits minimise the sum of squared *relative* errors (each point counts the same whatever
// its size): the shape parameters on a log grid, the linear ones in closed form per grid point.
#include <string>
#include <vector>

namespace tutti::calibrate {

struct GemmSample {
  double m = 0, n = 0, k = 0, time_s = 0;
};

struct GemmFit {
  double peak_flops_per_s = 0;  ///< The reference peak the efficiencies are relative to.
  double eff_max = 1, half_flops = 0, half_dim = 0, launch_overhead_s = 0;
  double rms_rel_error = 0;  ///< Of the fitted times against the samples.
  double max_rel_error = 0;
  int samples = 0;
  double predict_s(double m, double n, double k) const;
};

/// Fits the GEMM model. `peak_flops_per_s` <= 0: the best measured rate is the peak (then
/// eff_max comes out near 1). Throws InputError with fewer than 3 samples.
GemmFit fit_gemm(const std::vector<GemmSample>& s, double peak_flops_per_s);

struct MemSample {
  double bytes = 0, time_s = 0;
};

struct MemFit {
  double peak_Bps = 0;
  double eff_max = 1, half_bytes = 0, launch_overhead_s = 0;
  double rms_rel_error = 0, max_rel_error = 0;
  int samples = 0;
  double predict_s(double bytes) const;
};

/// Fits the memory-bound model (`peak_Bps` <= 0: the best measured bandwidth). >= 2 samples.
/// Relative errors weighted by time (w = t): the large copies that carry an iteration's
/// memory-bound time count more than cache-resident small ones.
MemFit fit_membound(const std::vector<MemSample>& s, double peak_Bps);

struct CollSample {
  double size_bytes = 0, time_s = 0;
};

struct AlphaBetaFit {
  double latency_s = 0;  ///< alpha
  double busbw_Bps = 0;  ///< 1 / beta, in nccl-tests' bus bandwidth terms
  double rms_rel_error = 0, max_rel_error = 0;
  int samples = 0;
  double predict_s(double size_bytes, double bus_factor) const;
};

/// Fits t = alpha + size * bus_factor / busbw (alpha >= 0, busbw > 0). >= 2 samples.
AlphaBetaFit fit_alpha_beta(const std::vector<CollSample>& s, double bus_factor);

}  // namespace tutti::calibrate
