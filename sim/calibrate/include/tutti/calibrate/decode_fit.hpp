#pragma once
// `tutti calibrate` on `tutti serve replay` documents: the decode-regime terms of the profile.
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "tutti/calibrate/measurements.hpp"
#include "tutti/sim/calibration.hpp"

namespace tutti {
struct Cluster;
}

namespace tutti::calibrate {

/// Decode-step samples of serve replay documents (phase decode): GEMMs below one output tile of
/// `tile` rows (the GEMV regime; bytes counted as sim's gemv_time_s counts them, in the serving
/// dtype) and memory-bound ops (decode attention's KV-cache read, norms; their recorded bytes).
struct DecodeSamples {
  std::vector<double> gemv_bytes, gemv_flops, gemv_time_s;
  std::vector<double> mem_bytes, mem_time_s;
  DType dtype = DType::BF16;
  bool cpu = false;  ///< Replayed on CPU ranks (every dtype runs as one sgemm).
  bool empty() const { return gemv_time_s.empty() && mem_time_s.empty(); }
};
DecodeSamples decode_samples(const std::vector<Measurements>& docs, double tile);

/// Fits the decode-regime terms into `prof` and `dev` (the device override of the measured GPU),
/// each a line t = bytes / bandwidth + fixed (fixed >= 0) that reproduces the samples' measured
/// total time (a step is the sum of its ops) with the least squared relative error per op: the
/// GEMV line (compute.gemm bandwidth efficiency, constant over sizes; the fixed time goes to the
/// GEMM launch overhead beyond gemm.half_time, as gemv_time_s adds both), the memory-bound line of
/// the KV read (compute.membound bandwidth efficiency and launch overhead), B the
/// larger of the two fitted bandwidths (the device's HBM bandwidth), and, when `gpu` is given, the
/// device's peak FLOP/s for the dtype raised to the least that keeps every measured GEMV
/// memory-bound in the model (a measured lower bound). Needs >= 2 samples of a kind to fit it.
/// Writes what it fitted and its errors to `report`. Throws InputError when nothing can be fitted.
void fit_decode(const DecodeSamples& s, const GpuSpec* gpu, CalibrationProfile& prof,
                DeviceOverride& dev, nlohmann::json& report);

}  // namespace tutti::calibrate
