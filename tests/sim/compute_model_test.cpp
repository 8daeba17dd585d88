// Compute model against hand computations.
#include "tutti/sim/compute_model.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "engine_fixture.hpp"
#include "tutti/core/error.hpp"

using namespace tutti;

namespace {
/// A BF16 GEMM of shape m x n x k (FLOPs and bytes left for op_time_s to derive).
Op bf16_gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  Op op;
  op.kind = OpKind::Gemm;
  op.dtype = DType::BF16;
  op.m = m;
  op.n = n;
  op.k = k;
  return op;
}
}  // namespace

TEST_CASE("large bf16 GEMM: compute-bound roofline with the default efficiency curve") {
  GpuSpec gpu = testing::test_gpu();
  gpu.peak_flops[static_cast<int>(DType::BF16)] = 989.4e12;
  gpu.hbm_bw_Bps = 3.35e12;
  const CalibrationProfile& p = default_calibration();
  Op op = bf16_gemm(8192, 8192, 8192);
  double F = 2.0 * 8192 * 8192 * 8192;
  // The default curve is time-based: half = half_time * peak * eff_max; 8192 is a whole number of
  // tiles, so only the k term of the shape factor remains.
  const double E = p.gemm.flops.eff_max, half = p.gemm.half_time_s * 989.4e12 * E;
  double eff = E * F / (F + half) * 8192.0 / (8192.0 + p.gemm.half_k);
  CHECK(p.gemm.half_time_s > 0);
  CHECK(std::fmod(8192.0, p.gemm.tile) == 0);
  double expect = F / (989.4e12 * eff) + p.gemm.launch_overhead_s;
  CHECK(op_time_s(op, gpu, p) == doctest::Approx(expect).epsilon(1e-12));
  // Achieved rate of a big GEMM: below the best rate measured on H100 SXM over a whole shape search
  // (794.5 TFLOP/s, sim/calibration/microbench/gemm-mamf.json) and not far from it.
  double rate = F / op_time_s(op, gpu, p);
  CHECK(rate > 700e12);
  CHECK(rate < 794.5e12);
}

TEST_CASE("GEMM shape terms: tile quantization, short k, and a size curve in time, not FLOPs") {
  GpuSpec gpu = testing::test_gpu();
  gpu.peak_flops[static_cast<int>(DType::BF16)] = 1000e12;
  gpu.hbm_bw_Bps = 1e15;  // keep every case compute-bound
  CalibrationProfile p = testing::ideal_profile();
  Op op = bf16_gemm(65536, 256, 65536);
  p.gemm.tile = 256;
  const double whole = op_time_s(op, gpu, p);
  CHECK(whole == doctest::Approx(2.0 * 65536 * 256 * 65536 / 1000e12).epsilon(1e-12));
  // One column more needs a second tile column: 257 useful of 512 computed.
  op.n = 257;
  CHECK(op_time_s(op, gpu, p) ==
        doctest::Approx(2.0 * 65536 * 512 * 65536 / 1000e12).epsilon(1e-12));
  // k/(k + half_k): a k as short as half_k takes twice as long per FLOP.
  op.n = 256;
  op.k = 192;
  p.gemm.half_k = 192;
  CHECK(op_time_s(op, gpu, p) ==
        doctest::Approx(2 * 2.0 * 65536 * 256 * 192 / 1000e12).epsilon(1e-12));
  // half_time: a fixed time per GEMM whatever the device's speed (half = half_time * peak * max).
  p.gemm.tile = 0;
  p.gemm.half_k = 0;
  p.gemm.half_time_s = 5e-6;
  op.m = op.n = op.k = 1024;
  const double F = 2.0 * 1024 * 1024 * 1024;
  CHECK(op_time_s(op, gpu, p) == doctest::Approx(F / 1000e12 + 5e-6).epsilon(1e-12));
  gpu.peak_flops[static_cast<int>(DType::BF16)] = 3000e12;
  CHECK(op_time_s(op, gpu, p) == doctest::Approx(F / 3000e12 + 5e-6).epsilon(1e-12));
}

TEST_CASE("FlashAttention-1 ops run at flash_attention_1_speed of the attention rate") {
  GpuSpec gpu = testing::test_gpu();
  gpu.hbm_bw_Bps = 1e15;
  const CalibrationProfile& p = default_calibration();
  CHECK(p.flash_attention_1_speed > 0.3);
  CHECK(p.flash_attention_1_speed < 0.8);
  Op op;
  op.kind = OpKind::Attention;
  op.dtype = DType::BF16;
  op.batch = 32;
  op.m = op.n = 8192;
  op.k = 128;
  op.flops = 4.0 * 32 * 8192 * 8192 * 128 * 0.5;
  const double fa2 = op_time_s(op, gpu, p) - p.attention.launch_overhead_s;
  op.flash_v1 = true;
  const double fa1 = op_time_s(op, gpu, p) - p.attention.launch_overhead_s;
  CHECK(fa1 == doctest::Approx(fa2 / p.flash_attention_1_speed).epsilon(1e-9));
}

TEST_CASE("skinny GEMM is memory-bound and slower per FLOP") {
  GpuSpec gpu = testing::test_gpu();
  CalibrationProfile p = testing::ideal_profile();
  Op op = bf16_gemm(1, 16384, 16384);
  double bytes = (1.0 * 16384 + 16384.0 * 16384 + 16384.0) * 2;
  double flops_t = 2.0 * 16384 * 16384 / 1000e12;
  double mem_t = bytes / 3e12;
  CHECK(mem_t > flops_t);
  CHECK(op_time_s(op, gpu, p) == doctest::Approx(mem_t).epsilon(1e-12));
}

TEST_CASE("membound op: bytes over bandwidth with its efficiency curve, plus launch overhead") {
  GpuSpec gpu = testing::test_gpu();
  const CalibrationProfile& p = default_calibration();
  Op op;
  op.kind = OpKind::MemBound;
  op.bytes = 1e9;
  double eff = p.membound.bandwidth.eff_max * 1e9 / (1e9 + p.membound.bandwidth.half);
  CHECK(op_time_s(op, gpu, p) ==
        doctest::Approx(1e9 / (3e12 * eff) + p.membound.launch_overhead_s));
  op.kind = OpKind::Collective;
  CHECK(op_time_s(op, gpu, p) == 0.0);
}

TEST_CASE("device overrides replace catalog peaks, a missing dtype peak is an input error") {
  GpuSpec gpu = testing::test_gpu();
  CalibrationProfile p = testing::ideal_profile();
  Op op = bf16_gemm(4096, 4096, 4096);
  double base = op_time_s(op, gpu, p);
  DeviceOverride o;
  o.gpu = "test-gpu";
  o.peak_flops[static_cast<int>(DType::BF16)] = 500e12;
  p.devices.push_back(o);
  CHECK(op_time_s(op, gpu, p) == doctest::Approx(2 * base));
  gpu.peak_flops[static_cast<int>(DType::FP8)] = 0;
  op.dtype = DType::FP8;
  CHECK_THROWS_AS(op_time_s(op, gpu, p), InputError);
}

TEST_CASE("device GEMM and attention efficiencies replace the family's maximum for that device") {
  GpuSpec gpu = testing::test_gpu();
  CalibrationProfile p = testing::ideal_profile();
  p.gemm.flops.eff_max = 0.8;
  p.attention.flops.eff_max = 0.5;
  Op g = bf16_gemm(8192, 8192, 8192);
  Op a;
  a.kind = OpKind::Attention;
  a.dtype = DType::BF16;
  a.flops = 1e13;
  double g0 = op_time_s(g, gpu, p), a0 = op_time_s(a, gpu, p);
  DeviceOverride o;
  o.gpu = gpu.id;
  o.gemm_efficiency[static_cast<int>(DType::BF16)] = 0.4;
  o.attention_efficiency = 0.25;
  p.devices.push_back(o);
  CHECK(op_time_s(g, gpu, p) == doctest::Approx(2 * g0));
  CHECK(op_time_s(a, gpu, p) == doctest::Approx(2 * a0));
  g.dtype = DType::FP16;  // no value for this dtype: the family's maximum stays
  double g16 = g0 * gpu.peak(DType::BF16) / gpu.peak(DType::FP16);
  CHECK(op_time_s(g, gpu, p) == doctest::Approx(g16));
  // The shipped profile: FP8 GEMMs on H100 near the best measured rate over a shape search
  // (1402.6 TFLOP/s, sim/calibration/microbench/gemm-mamf.json); the ceiling is the efficiency
  // maximum, so it sits above the best achieved rate, within the curve's size terms.
  const CalibrationProfile& d = default_calibration();
  const DeviceOverride* h = d.device("h100-sxm-80gb");
  REQUIRE(h != nullptr);
  CHECK(h->gemm_efficiency[static_cast<int>(DType::FP8)] * 1979 > 1402.6 * 0.95);
  CHECK(h->gemm_efficiency[static_cast<int>(DType::FP8)] * 1979 < 1402.6 * 1.06);
  CHECK_FALSE(h->source.empty());
}
