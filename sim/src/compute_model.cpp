#include "tutti/sim/compute_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tutti/core/error.hpp"
#include "tutti/topologies/catalog.hpp"

namespace tutti {

double peak_flops(const GpuSpec& gpu, DType dtype, const CalibrationProfile& profile) {
  if (const DeviceOverride* o = profile.device(gpu.id)) {
    double v = o->peak_flops[static_cast<int>(dtype)];
    if (v > 0) return v;
  }
  return gpu.peak(dtype);
}

double hbm_bandwidth_Bps(const GpuSpec& gpu, const CalibrationProfile& profile) {
  if (const DeviceOverride* o = profile.device(gpu.id))
    if (o->hbm_bw_Bps > 0) return o->hbm_bw_Bps;
  return gpu.hbm_bw_Bps;
}

void check_dtype_supported(const std::string& file, DType dtype,
                           const std::vector<const GpuSpec*>& gpus,
                           const CalibrationProfile& profile) {
  std::string lacking;
  for (const GpuSpec* g : gpus)
    if (!(peak_flops(*g, dtype, profile) > 0)) lacking += (lacking.empty() ? "" : ", ") + g->id;
  if (lacking.empty()) return;
  std::string having;
  const Catalog& cat = Catalog::builtin();
  for (const auto& id : cat.ids("gpu"))
    if (peak_flops(cat.gpu(id), dtype, profile) > 0) having += (having.empty() ? "" : ", ") + id;
  throw InputError(
      file.empty() ? "workload" : file, "training.dtype",
      std::string("\"") + to_string(dtype) + "\"",
      fmt::format("a dtype that {} {} tensor cores for ({} lack {}; {} runs on: {})", lacking,
                  lacking.find(',') == std::string::npos ? "has" : "have", lacking,
                  to_string(dtype), to_string(dtype), having.empty() ? "no catalog GPU" : having));
}

double op_time_s(const Op& op, const GpuSpec& gpu, const CalibrationProfile& profile) {
  const KernelModel* km = nullptr;
  switch (op.kind) {
    case OpKind::Gemm:
      km = &profile.gemm;
      break;
    case OpKind::Attention:
      km = &profile.attention;
      break;
    case OpKind::MemBound:
      km = &profile.membound;
      break;
    default:
      return 0.0;
  }
  const double eb = dtype_bytes(op.dtype);
  const double batch = static_cast<double>(std::max<std::int64_t>(op.batch, 1));
  const double m = static_cast<double>(op.m), n = static_cast<double>(op.n),
               k = static_cast<double>(op.k);
  double flops = op.flops, bytes = op.bytes;
  double shape = 1.0;
  if (op.kind == OpKind::Gemm) {
    if (flops <= 0) flops = 2.0 * m * n * k * batch;
    if (bytes <= 0) bytes = (m * k + k * n + m * n) * batch * eb;
    double d = std::min({m, n, k});
    if (km->half_dim > 0 && d > 0) shape = d / (d + km->half_dim);
    // Tile quantization: the useful share of the whole tiles that cover an edge.
    auto tiled = [&](double x) { return x / (std::ceil(x / km->tile) * km->tile); };
    if (km->tile > 0 && m > 0 && n > 0) shape *= tiled(m) * tiled(n);
    if (km->half_k > 0 && k > 0) shape *= k / (k + km->half_k);
    if (op.grouped != GroupedDim::None) {
      // Timed on the padded (busiest-expert) shape; op.flops keeps the useful FLOPs.
      flops = 2.0 * m * n * k * batch;
      const double tokens = op.grouped == GroupedDim::M ? m : k;
      const double h = profile.grouped_gemm_half_tokens;
      if (h > 0 && tokens > 0) shape *= tokens / (tokens + h);
    }
  } else if (op.kind == OpKind::Attention) {
    if (bytes <= 0) bytes = batch * (2.0 * m * k + 2.0 * n * k) * eb;
  }
  double t = 0.0;
  if (flops > 0) {
    double peak = peak_flops(gpu, op.dtype, profile);
    if (peak <= 0)
      throw InputError("GPU " + gpu.id + " has no " + to_string(op.dtype) +
                       " peak FLOP/s in the catalog or the calibration profile; choose another "
                       "dtype or GPU");
    double eff_max = km->flops.eff_max;
    if (const DeviceOverride* o = profile.device(gpu.id)) {
      if (op.kind == OpKind::Gemm && o->gemm_efficiency[static_cast<int>(op.dtype)] > 0)
        eff_max = o->gemm_efficiency[static_cast<int>(op.dtype)];
      // A block-scaled format without its own value takes the device's fp8 one (the same
      // tensor-core pipeline; an estimate that calibration_defaults reports).
      else if (op.kind == OpKind::Gemm && dtype_block_elements(op.dtype) > 0 &&
               o->gemm_efficiency[static_cast<int>(DType::FP8)] > 0)
        eff_max = o->gemm_efficiency[static_cast<int>(DType::FP8)];
      if (op.kind == OpKind::Attention && o->attention_efficiency > 0)
        eff_max = o->attention_efficiency;
    }
    if (op.kind == OpKind::Attention && op.flash_v1) eff_max *= profile.flash_attention_1_speed;
    EfficiencyCurve curve{eff_max,
                          km->half_time_s > 0 ? km->half_time_s * peak * eff_max : km->flops.half};
    double eff = curve.at(flops) * shape;
    t = flops / (peak * eff);
  }
  if (bytes > 0) {
    double bw = hbm_bandwidth_Bps(gpu, profile);
    check_internal(bw > 0, "compute model: GPU without HBM bandwidth");
    t = std::max(t, bytes / (bw * km->bandwidth.at(bytes)));
  }
  if (op.tp_overlap) t *= profile.tp_overlap_gemm_slowdown;
  return t + km->launch_overhead_s;
}

double gemv_time_s(const Op& op, const GpuSpec& gpu, const CalibrationProfile& profile) {
  check_internal(op.kind == OpKind::Gemm, "gemv_time_s: not a GEMM");
  const KernelModel& km = profile.gemm;
  const double eb = dtype_bytes(op.dtype);
  const double batch = static_cast<double>(std::max<std::int64_t>(op.batch, 1));
  const double m = static_cast<double>(op.m), n = static_cast<double>(op.n),
               k = static_cast<double>(op.k);
  const double flops = 2.0 * m * n * k * batch;
  const double bytes = op.bytes > 0 ? op.bytes : (m * k + k * n + m * n) * batch * eb;
  const double peak = peak_flops(gpu, op.dtype, profile);
  if (peak <= 0)
    throw InputError("GPU " + gpu.id + " has no " + to_string(op.dtype) +
                     " peak FLOP/s in the catalog or the calibration profile; choose another "
                     "dtype or GPU");
  double eff_max = km.flops.eff_max;
  if (const DeviceOverride* o = profile.device(gpu.id))
    if (o->gemm_efficiency[static_cast<int>(op.dtype)] > 0)
      eff_max = o->gemm_efficiency[static_cast<int>(op.dtype)];
  const double bw = hbm_bandwidth_Bps(gpu, profile);
  check_internal(bw > 0, "compute model: GPU without HBM bandwidth");
  const double t = std::max(flops / (peak * eff_max), bytes / (bw * km.bandwidth.at(bytes)));
  return t + km.half_time_s + km.launch_overhead_s;
}

}  // namespace tutti
