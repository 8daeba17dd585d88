// Issue 17: calibration defaults are never silent, block-scaled dtypes, NVL72 jobs that do not
// fill whole racks.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;
using tutti::testing::run_tutti;
using tutti::testing::src;

namespace {

bool has_key(const std::vector<CalibrationDefault>& d, const std::string& key) {
  return std::any_of(d.begin(), d.end(), [&](const CalibrationDefault& x) { return x.key == key; });
}

Op gemm(DType dt, std::int64_t m, std::int64_t n, std::int64_t k) {
  Op op;
  op.kind = OpKind::Gemm;
  op.dtype = dt;
  op.m = m;
  op.n = n;
  op.k = k;
  return op;
}

/// models/tiny-gpt.json with training.dtype replaced, written to a temporary file.
std::string tiny_gpt_with_dtype(const std::string& dtype) {
  std::ifstream in(src("models/tiny-gpt.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "\"dtype\": \"bf16\"";
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), "\"dtype\": \"" + dtype + "\"");
  std::string path = tutti::testing::temp_dir() + "/tiny-gpt-" + dtype + ".json";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("calibration_defaults: one function says which values are defaults for a device") {
  const CalibrationProfile& p = default_calibration();
  const Catalog& cat = Catalog::builtin();
  // H100 SXM: its GEMM (BF16 family fit, FP8 override), attention and NVLink/NVLS fits are its own.
  auto h100 = calibration_defaults(p, cat.gpu("h100-sxm-80gb"));
  CHECK_FALSE(has_key(h100, "compute.devices.h100-sxm-80gb.gemm_efficiency.bf16"));
  CHECK_FALSE(has_key(h100, "compute.devices.h100-sxm-80gb.gemm_efficiency.fp8"));
  CHECK_FALSE(has_key(h100, "compute.attention.flops_efficiency_max"));
  CHECK_FALSE(has_key(h100, "network.tiers.nvlink.bandwidth_efficiency"));
  CHECK_FALSE(has_key(h100, "nccl.nvls_bandwidth_efficiency"));
  CHECK(has_key(h100, "compute.membound.bandwidth_efficiency_max"));  // an estimate everywhere
  // B200: GEMM BF16/FP8 fitted to its MAMF rows; attention, NVLink 5, NVLS and the block-scaled
  // GEMMs are defaults, and each says where the generic value comes from.
  auto b200 = calibration_defaults(p, cat.gpu("b200"));
  CHECK_FALSE(has_key(b200, "compute.devices.b200.gemm_efficiency.bf16"));
  CHECK_FALSE(has_key(b200, "compute.devices.b200.gemm_efficiency.fp8"));
  CHECK(has_key(b200, "compute.devices.b200.gemm_efficiency.nvfp4"));
  CHECK(has_key(b200, "compute.attention.flops_efficiency_max"));
  CHECK(has_key(b200, "network.tiers.nvlink.bandwidth_efficiency"));
  CHECK(has_key(b200, "nccl.nvls_bandwidth_efficiency"));
  for (const auto& d : b200) CHECK_MESSAGE(!d.basis.empty(), d.key);
  // GB300: no microbenchmark at all, so BF16 GEMM is a default too.
  CHECK(has_key(calibration_defaults(p, cat.gpu("gb300")),
                "compute.devices.gb300.gemm_efficiency.bf16"));
  // A GPU without a scale-up link has no NVLink entry; AMD has no NVLS entry.
  CHECK_FALSE(has_key(calibration_defaults(p, cat.gpu("l40s")),
                      "network.tiers.nvlink.bandwidth_efficiency"));
  CHECK_FALSE(
      has_key(calibration_defaults(p, cat.gpu("mi300x")), "nccl.nvls_bandwidth_efficiency"));
  // NVLS follows the servers' NVSwitch support (nodes.json "nvls"), not the vendor: an A100 or a
  // V100 has NVLink but no NVLS, so no NVLS default is listed for it; an H200 has one.
  CHECK_FALSE(has_key(calibration_defaults(p, cat.gpu("a100-sxm4-80gb")),
                      "nccl.nvls_bandwidth_efficiency"));
  CHECK_FALSE(has_key(calibration_defaults(p, cat.gpu("v100-sxm2-16gb")),
                      "nccl.nvls_bandwidth_efficiency"));
  CHECK(has_key(calibration_defaults(p, cat.gpu("h200-sxm-141gb")),
                "nccl.nvls_bandwidth_efficiency"));
  // Every catalog GPU either has cited values or says which are defaults (never silent): the line
  // names the device whenever the list is not empty.
  for (const auto& id : cat.ids("gpu")) {
    auto d = calibration_defaults(p, cat.gpu(id));
    const std::string line = calibration_defaults_line(id, d);
    CHECK(line.empty() == d.empty());
    if (!d.empty()) CHECK(line.rfind(id + ": calibration defaults used", 0) == 0);
  }
  // An override in a user profile removes the default: a measured attention efficiency for b200.
  CalibrationProfile q = p;
  bool found = false;
  for (auto& d : q.devices)
    if (d.gpu == "b200") d.attention_efficiency = 0.4, found = true;
  REQUIRE(found);
  CHECK_FALSE(
      has_key(calibration_defaults(q, cat.gpu("b200")), "compute.attention.flops_efficiency_max"));
}

TEST_CASE("measured_on names catalog GPUs, else the profile is refused") {
  std::ifstream in(src("sim/calibration/default.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "\"measured_on\": [\"h100-sxm-80gb\"]";
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), "\"measured_on\": [\"h100-typo\"]");
  try {
    parse_calibration(text, "bad.json");
    FAIL("accepted an unknown GPU id");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("measured_on") != std::string::npos);
    CHECK(std::string(e.what()).find("catalog GPU ids") != std::string::npos);
  }
}

TEST_CASE(
    "block-scaled dtypes: NVFP4 GEMMs beat FP8 on B200, scale bytes counted, Hopper refuses") {
  const CalibrationProfile& p = default_calibration();
  const GpuSpec& b200 = Catalog::builtin().gpu("b200");
  const GpuSpec& h100 = Catalog::builtin().gpu("h100-sxm-80gb");
  CHECK(dtype_bytes(DType::NVFP4) == doctest::Approx(0.5 + 1.0 / 16));
  CHECK(dtype_bytes(DType::MXFP8) == doctest::Approx(1.0 + 1.0 / 32));
  CHECK(dtype_bytes(DType::MXFP4) == doctest::Approx(0.5 + 1.0 / 32));
  CHECK(dtype_block_elements(DType::FP8) == 0);
  CHECK(is_gemm_only_dtype(DType::NVFP4));
  CHECK_FALSE(is_gemm_only_dtype(DType::BF16));
  const double t8 = op_time_s(gemm(DType::FP8, 8192, 8192, 8192), b200, p);
  const double t4 = op_time_s(gemm(DType::NVFP4, 8192, 8192, 8192), b200, p);
  const double tmx8 = op_time_s(gemm(DType::MXFP8, 8192, 8192, 8192), b200, p);
  MESSAGE("B200 8192^3: fp8 ", t8 * 1e3, " ms, mxfp8 ", tmx8 * 1e3, " ms, nvfp4 ", t4 * 1e3, " ms");
  CHECK(t4 < 0.75 * t8);  // twice the peak, minus the fixed per-kernel time
  CHECK(tmx8 >=
        t8);  // MXFP8 runs at the FP8 rate (the device's fp8 efficiency) and moves its scales
  // A memory-bound shape: the block scales add bytes (NVFP4 moves 0.5625 bytes per element).
  Op skinny = gemm(DType::NVFP4, 256, 16384, 16384);
  skinny.flops = 1;  // keep the bytes term alone
  Op skinny4 = skinny;
  skinny4.dtype = DType::MXFP4;
  CHECK(op_time_s(skinny, b200, p) > op_time_s(skinny4, b200, p));
  // Hopper has no FP4 tensor cores: the check names the GPU and where nvfp4 runs.
  CHECK(peak_flops(h100, DType::NVFP4, p) == 0);
  try {
    check_dtype_supported("w.json", DType::NVFP4, {&h100, &b200}, p);
    FAIL("accepted nvfp4 on an H100");
  } catch (const InputError& e) {
    std::string m = e.what();
    CHECK(m.find("w.json") != std::string::npos);
    CHECK(m.find("training.dtype") != std::string::npos);
    CHECK(m.find("h100-sxm-80gb lack") != std::string::npos);
    CHECK(m.find("b200") != std::string::npos);
  }
  CHECK_NOTHROW(check_dtype_supported("w.json", DType::NVFP4, {&b200}, p));
  // MI355X: the OCP formats (MXFP4/MXFP6), not NVIDIA's NVFP4.
  const GpuSpec& mi355 = Catalog::builtin().gpu("mi355x");
  CHECK(peak_flops(mi355, DType::MXFP4, p) > 0);
  CHECK(peak_flops(mi355, DType::MXFP6, p) > 0);
  CHECK(peak_flops(mi355, DType::NVFP4, p) == 0);
}

TEST_CASE("cli: an NVFP4 workload simulates on B200 (faster than FP8) and exits 2 on H100") {
  const std::string fp4 = tiny_gpt_with_dtype("nvfp4"), fp8 = tiny_gpt_with_dtype("fp8");
  auto b4 = run_tutti({"--json", "simulate", "-w", fp4, "-c", "topologies/b200-cluster.json", "-p",
                       "tp=2,pp=2,dp=2", "--engine", "analytic"});
  REQUIRE_MESSAGE(b4.rc == 0, b4.err);
  auto b8 = run_tutti({"--json", "simulate", "-w", fp8, "-c", "topologies/b200-cluster.json", "-p",
                       "tp=2,pp=2,dp=2", "--engine", "analytic"});
  REQUIRE_MESSAGE(b8.rc == 0, b8.err);
  CHECK(b4.json()["breakdown"]["compute_s"].get<double>() <
        b8.json()["breakdown"]["compute_s"].get<double>());
  auto h = run_tutti(
      {"simulate", "-w", fp4, "-c", "topologies/dgx-h100-single.json", "-p", "tp=2,pp=2,dp=2"});
  CHECK(h.rc == 2);
  CHECK(h.err.find("training.dtype") != std::string::npos);
  CHECK(h.err.find("h100-sxm-80gb") != std::string::npos);
  CHECK(h.err.find("nvfp4") != std::string::npos);
}

TEST_CASE("cli: simulate, catalog show and validate print the defaults of the device") {
  auto s =
      run_tutti({"--json", "simulate", "-w", "models/tiny-gpt.json", "-c",
                 "topologies/b200-cluster.json", "-p", "tp=2,pp=2,dp=2", "--engine", "analytic"});
  REQUIRE_MESSAGE(s.rc == 0, s.err);
  auto j = s.json();
  REQUIRE(j.contains("calibration_defaults"));
  REQUIRE(j["calibration_defaults"].contains("b200"));
  bool attention = false;
  for (const auto& d : j["calibration_defaults"]["b200"])
    attention = attention || d["key"] == "compute.attention.flops_efficiency_max";
  CHECK(attention);
  CHECK(s.err.find("b200: calibration defaults used") != std::string::npos);
  CHECK(s.err.find("fused attention efficiency") != std::string::npos);

  auto c = run_tutti({"catalog", "show", "b200"});
  REQUIRE_MESSAGE(c.rc == 0, c.err);
  CHECK(c.out.find("calibration defaults") != std::string::npos);
  CHECK(c.out.find("compute.attention.flops_efficiency_max") != std::string::npos);
  auto cj = run_tutti({"--json", "catalog", "show", "gb300"});
  REQUIRE_MESSAGE(cj.rc == 0, cj.err);
  CHECK(cj.json()["calibration_defaults"].size() >= 3);

  auto v = run_tutti({"--json", "validate", "--cases", "tests/validation/published-public.json",
                      "--engine", "analytic"});
  REQUIRE_MESSAGE(v.rc == 0, v.err);
  auto vj = v.json();
  REQUIRE(vj.contains("calibration_defaults"));
  REQUIRE(vj["calibration_defaults"].contains("h100-sxm-80gb"));
  CHECK_FALSE(vj["calibration_defaults"]["h100-sxm-80gb"].empty());  // the HBM estimate at least
}

TEST_CASE("fit_layout: DeepSeek-V3's ep 64 on 576 GB200 GPUs halves ep instead of failing") {
  Cluster c = load_cluster(src("topologies/gb200-nvl72-576.json"));
  Workload w = load_workload(src("models/deepseek-v3.json"));
  std::string note;
  Layout l = fit_layout(w, "", c.gpus(), &note);
  // pp 16: dp <= 36 and no dp <= 36 is a multiple of 64; ep 32 fits dp 32 (512 GPUs).
  CHECK(l.ep == 32);
  CHECK(l.dp == 32);
  CHECK(l.gpus() == 512);
  CHECK(note.find("ep 64") != std::string::npos);
  CHECK(note.find("ep 32 fitted") != std::string::npos);
  // ep named on the flag is kept: then nothing fits and the error says why.
  CHECK_THROWS_AS(fit_layout(w, "ep=64", c.gpus()), InputError);
  // The file's ep is kept when it fits: no note.
  std::string none;
  Layout big = fit_layout(w, "", 2048, &none);
  CHECK(big.ep == 64);
  CHECK(none.empty());
}

TEST_CASE(
    "cli: Llama 3 70B and DeepSeek-V3 on GB200 and GB300 NVL72 jobs that do not fill whole racks") {
  struct Run {
    const char* workload;
    const char* cluster;
    const char* engine;
  };
  for (const Run& r :
       {Run{"models/llama3-70b.json", "topologies/gb200-nvl72-576.json", "native"},
        Run{"models/llama3-70b.json", "topologies/gb300-nvl72-superpod.json", "analytic"},
        Run{"models/deepseek-v3.json", "topologies/gb200-nvl72-576.json", "analytic"},
        Run{"models/deepseek-v3.json", "topologies/gb300-nvl72-superpod.json", "analytic"}}) {
    CAPTURE(r.workload);
    CAPTURE(r.cluster);
    auto s =
        run_tutti({"--json", "simulate", "-w", r.workload, "-c", r.cluster, "--engine", r.engine});
    REQUIRE_MESSAGE(s.rc == 0, s.err);
    auto j = s.json();
    CHECK(j["gpus"].get<int>() < j["cluster_gpus"].get<int>());  // part of the cluster
    CHECK(j["gpus"].get<int>() % 72 != 0);                       // not whole racks
    CHECK(j.contains("placement"));
    CHECK(j["iteration_time_s"].get<double>() > 0);
    CHECK(j["mfu"].get<double>() > 0.01);
    CHECK(j["mfu"].get<double>() < 0.8);
  }
}

TEST_CASE("cli: plan on GB200 NVL72 and its report name the calibration defaults") {
  auto p = run_tutti({"--set", "search.gpus=[\"gb200\"]", "--json", "plan", "--example"});
  REQUIRE_MESSAGE(p.rc == 0, p.err);
  auto j = p.json();
  REQUIRE(j.contains("calibration_defaults"));
  REQUIRE(j["calibration_defaults"].contains("gb200"));
  CHECK_FALSE(j["calibration_defaults"]["gb200"].empty());
  CHECK(p.err.find("tutti plan: gb200: calibration defaults used") != std::string::npos);
  const std::string path = tutti::testing::temp_dir() + "/plan-gb200.json";
  std::ofstream(path) << p.out;
  auto r = run_tutti({"report", "plan", path, "--format", "md"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  CHECK(r.out.find("Calibration defaults on gb200:") != std::string::npos);
  // report compare: the callout comes from each architecture's simulate document.
  auto c = run_tutti({"--set", "nodes=1", "report", "compare", "--workload", "models/tiny-gpt.json",
                      "--cluster", "topologies/b200-cluster.json", "--parallel", "tp=2,pp=2,dp=2",
                      "--engine", "analytic", "--oversubscription", "0", "--format", "md"});
  REQUIRE_MESSAGE(c.rc == 0, c.err);
  CHECK(c.out.find("Calibration defaults on b200:") != std::string::npos);
}
