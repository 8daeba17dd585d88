// Step model: decode is bound by reading weights and KV from HBM, prefill by GEMM FLOPs; the
// collectives come from the collective model on the topology.
#include <doctest/doctest.h>

#include "serve_fixture.hpp"
#include "tutti/core/error.hpp"
#include "tutti/sim/compute_model.hpp"

using namespace tutti;
using namespace tutti::serve;
using namespace tutti::serve::testing;

namespace {
StepModel make(const std::string& m, const std::string& serving_json) {
  ServeConfig cfg = parse_serve_config(config_text(1, 1, 16, 16, serving_json), "t.json");
  static SimCluster sc = sim_cluster(cluster("dgx-h100-single"));
  return StepModel(model(m), cfg.serving, sc, default_calibration());
}
}  // namespace

TEST_CASE("serve step: a one-sequence decode reads the weights at the HBM bandwidth") {
  StepModel sm = make("llama3-70b", "{\"tp\": 8}");
  BatchShape b;
  b.decodes = 1;
  b.decode_context_tokens = 1024;
  b.logits = 1;
  StepTime t = sm.time(b);
  const GpuSpec& gpu = cluster("dgx-h100-single").gpu;
  const double floor_s = sm.memory().weights_bytes / hbm_bandwidth_Bps(gpu, default_calibration());
  CHECK(t.total_s > floor_s);
  CHECK(t.total_s < 2.5 * floor_s);  // plus launch overheads and 2 all-reduces per layer
  CHECK(t.memory_s > t.gemm_s);
  CHECK(t.comm_s > 0);
  // A batch of 64 decodes costs far less than 64 single decodes (weights read once).
  BatchShape b64 = b;
  b64.decodes = 64;
  b64.decode_context_tokens = 64 * 1024;
  b64.logits = 64;
  CHECK(sm.time(b64).total_s < 2 * t.total_s);
}

TEST_CASE("serve step: a long prefill is compute-bound and scales with tokens") {
  StepModel sm = make("llama3-70b", "{\"tp\": 8}");
  BatchShape p;
  p.prefill_tokens = 4096;
  p.prefill_attn_pairs = 4096.0 * (4097 / 2.0);
  p.prefill_context_tokens = 4096;
  p.logits = 1;
  StepTime t = sm.time(p);
  CHECK(t.gemm_s > t.memory_s);
  // 2 x 70.6B params x 4096 tokens / 8 GPUs at H100 dense BF16 989 TFLOP/s is about 73 ms; GEMM
  // efficiency < 1 makes it slower.
  CHECK(t.total_s > 0.073);
  CHECK(t.total_s < 0.2);
  BatchShape half = p;
  half.prefill_tokens = 2048;
  half.prefill_attn_pairs = 2048.0 * (2049 / 2.0);
  half.prefill_context_tokens = 2048;
  CHECK(sm.time(half).total_s < 0.6 * t.total_s);
}

TEST_CASE("serve step: memory per GPU and KV blocks") {
  StepModel sm = make("llama3-70b", "{\"tp\": 8}");
  const ReplicaMemory& m = sm.memory();
  CHECK(m.weights_bytes == doctest::Approx(params(model("llama3-70b")) * 2 / 8));
  // 80 layers x 2 (K, V) x 1 KV head x 128 x 2 B per token on each GPU.
  CHECK(m.kv_bytes_per_token == doctest::Approx(80 * 2 * 128 * 2.0));
  CHECK(m.kv_blocks == static_cast<std::int64_t>(m.kv_bytes / (16 * m.kv_bytes_per_token)));
  CHECK(m.kv_blocks > 10000);
}

TEST_CASE("serve step: errors say what fits") {
  ServeConfig cfg = parse_serve_config(config_text(1, 1, 16, 16, "{\"tp\": 1}"), "t.json");
  SimCluster sc = sim_cluster(cluster("dgx-h100-single"));
  try {
    StepModel sm(model("llama3-70b"), cfg.serving, sc, default_calibration());
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("does not fit") != std::string::npos);
    CHECK(std::string(e.what()).find("raise tp") != std::string::npos);
  }
  ServeConfig big =
      parse_serve_config(config_text(1, 1, 16, 16, "{\"tp\": 8, \"replicas\": 2}"), "t.json");
  CHECK_THROWS_WITH_AS(StepModel(model("llama3-70b"), big.serving, sc, default_calibration()),
                       doctest::Contains("needs 16 GPUs"), InputError);
  ServeConfig bad_ep =
      parse_serve_config(config_text(1, 1, 16, 16, "{\"tp\": 8, \"ep\": 8}"), "t.json");
  CHECK_THROWS_WITH_AS(StepModel(model("llama3-70b"), bad_ep.serving, sc, default_calibration()),
                       doctest::Contains("the model is dense"), InputError);
  CHECK_THROWS_WITH_AS(StepModel(model("resnet50"), cfg.serving, sc, default_calibration()),
                       doctest::Contains("model.family"), InputError);
}

TEST_CASE(
    "serve step: gemv_time_s is the weight-streaming roofline plus one fixed time per kernel") {
  const GpuSpec& gpu = cluster("dgx-h100-single").gpu;
  const CalibrationProfile& p = default_calibration();
  Op op;
  op.kind = OpKind::Gemm;
  op.dtype = DType::BF16;
  op.m = 1;
  op.n = 7168;
  op.k = 8192;
  const double bytes = (1.0 * 8192 + 8192.0 * 7168 + 7168) * 2;
  const double expect = bytes / (hbm_bandwidth_Bps(gpu, p) * p.gemm.bandwidth.at(bytes)) +
                        p.gemm.half_time_s + p.gemm.launch_overhead_s;
  CHECK(gemv_time_s(op, gpu, p) == doctest::Approx(expect));
  // The training roofline divides the fixed time by the tile factor 1/256: far slower at m = 1.
  CHECK(op_time_s(op, gpu, p) > 5 * gemv_time_s(op, gpu, p));
  // Near one tile the two regimes meet (within 20%).
  op.m = 256;
  const double t_train = op_time_s(op, gpu, p);
  op.m = 255;
  CHECK(gemv_time_s(op, gpu, p) == doctest::Approx(t_train).epsilon(0.2));
}
