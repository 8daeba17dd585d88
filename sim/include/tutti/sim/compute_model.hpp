#pragma once
// Compute model: the time of one compute op on one GPU, a roofline with size-dependent
// efficiency curves (all parameters in the CalibrationProfile):
//   t = max(flops / (peak(dtype) * eff_flops(flops) * shape(d)),  bytes / (hbm_bw * eff_bw(bytes)))
//       + launch_overhead
// where eff_*(x) = max * x / (x + half), shape(d) = d / (d + half_dim) with d = min(m, n, k) for
// GEMMs (skinny GEMMs are inefficient), 1 otherwise. Grouped GEMMs (Op::grouped, MoE experts)
// are timed on 2*m*n*k*batch (the busiest expert's rows, all groups padded to it) and their shape
// factor is multiplied by tokens / (tokens + grouped_gemm_half_tokens). Each op kind (gemm,
// attention, membound) has its own curves. Peak FLOP/s and HBM bandwidth come from the catalog
// GpuSpec unless the profile overrides them for that device (a calibrated CPU host, a measured
// GPU).
#include "tutti/models/program.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/topologies/hardware.hpp"

namespace tutti {

/// Seconds op `op` takes on `gpu`. Zero for communication ops (Collective, Send, Recv).
/// Gemm FLOPs default to 2*m*n*k*batch and bytes to the three matrices when the op leaves them
/// at 0; Attention bytes default to Q, K, V and O. Throws InputError when the GPU has no peak
/// for the op's dtype (e.g. fp8 on an A100).
double op_time_s(const Op& op, const GpuSpec& gpu, const CalibrationProfile& profile);

/// Seconds of a skinny GEMM in the decode (GEMV) regime, m below one output tile (serving:
/// a few tokens per iteration against whole weight matrices). Kernels for these shapes (GEMV,
/// split-K) stream the weights, so the roofline is taken on the useful FLOPs at the GEMM's peak
/// efficiency and on the bytes at the GEMM's HBM efficiency, and the GEMM curve's fixed time per
/// kernel (gemm.half_time) is added once, with the launch overhead:
///   t = max(2 m n k batch / (peak * eff_max), bytes / (hbm_bw * eff_bw(bytes))) + half_time +
///   launch
/// (op_time_s would divide half_time by the tile-quantization factor m / tile, which is right for
/// training shapes and some hundred times too slow at m = 1). Bytes default as in op_time_s;
/// Op::grouped GEMMs are timed on m rows per group. Throws like op_time_s. Used by sim/serve.
double gemv_time_s(const Op& op, const GpuSpec& gpu, const CalibrationProfile& profile);

/// Dense peak FLOP/s of `gpu` for `dtype` after profile overrides (0 = unsupported).
double peak_flops(const GpuSpec& gpu, DType dtype, const CalibrationProfile& profile);
/// HBM bandwidth in bytes/s after profile overrides.
double hbm_bandwidth_Bps(const GpuSpec& gpu, const CalibrationProfile& profile);

/// Refuses a workload whose training dtype (workload file `file`, key training.dtype) some of
/// `gpus` have no tensor-core peak for (NVFP4 on an H100): InputError naming the GPUs that lack
/// the format and the catalog GPUs that have it. No-op when every GPU has a peak.
void check_dtype_supported(const std::string& file, DType dtype,
                           const std::vector<const GpuSpec*>& gpus,
                           const CalibrationProfile& profile);

}  // namespace tutti
