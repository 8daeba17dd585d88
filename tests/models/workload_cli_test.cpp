// Golden CLI tests for `tutti workload show`. Expected numbers are derived by hand in the comments
// (Llama 3 8B, tp=4, pp=2, dp=8, mb=1, SP, ZeRO-1, bf16 weights, fp32 gradients, flash attention).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/run.hpp"

using namespace tutti::testing;
using nlohmann::json;

TEST_CASE("cli: workload show --json on llama3-8b") {
  auto r = run_tutti({"workload", "show", "models/llama3-8b.json", "--parallel", "tp=4,pp=2",
                      "--gpus", "64", "--hbm", "80GiB", "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  // Layer: attention 4096*128*(2*32+2*8) = 41,943,040; MLP 3*4096*14336 = 176,160,768; norms 8192.
  // Per token forward: 2*(41,943,040+176,160,768) + 4*8192*32*128 per layer, x32, + 2*4096*128256.
  double fwd_per_token =
      32.0 * (2.0 * (41943040.0 + 176160768.0) + 4.0 * 8192 * 32 * 128) + 2.0 * 4096 * 128256;
  // Stage 0: 16 layers / tp + embedding / tp = 1,003,782,144 parameters per GPU.
  double p0 = 16.0 * 218112000.0 / 4 + 128256.0 * 4096 / 4;
  // Activations per layer: s*b*(4*2*h/t + 2*(2*a*d + 2*g*d + 3*f)/t) = 8192 * 34816 bytes; 2 in
  // flight.
  double act0 = 2.0 * 16 * 8192 * 34816.0;
  json expected = {
      {"params", 8030261248.0},
      {"active_params", 8030261248.0},
      {"tokens_per_iteration", 512.0 * 8192},
      {"microbatches", 64},
      {"model_flops_per_iteration", 3.0 * fwd_per_token * 512 * 8192},
      {"flops_per_token", 3.0 * fwd_per_token},
      {"layout", {{"tp", 4}, {"pp", 2}, {"dp", 8}, {"gpus", 64}, {"zero", 1}}},
      {"memory_per_gpu",
       {{"stage", 0},
        {"weights_bytes", 2.0 * p0},
        {"gradients_bytes", 4.0 * p0},
        {"optimizer_bytes", 12.0 * p0 / 8},
        {"activations_bytes", act0},
        {"temporary_bytes", 0.0},
        {"total_bytes", 2.0 * p0 + 4.0 * p0 + 12.0 * p0 / 8 + act0}}},
      {"program", {{"classes", 2}, {"world", 64}}},
  };
  json actual = r.json();
  CHECK_MESSAGE(json_diff(actual, expected, 1e-9) == "", json_diff(actual, expected, 1e-9));
  // Program summary: TP collectives over 4 ranks, DP over 8, PP sends between the 2 stages.
  bool tp = false, dp = false;
  for (const auto& c : actual["program"]["collectives"]) {
    if (c["group"] == "tp") tp = tp || c["group_size"] == 4;
    if (c["group"] == "dp") dp = dp || c["group_size"] == 8;
  }
  CHECK(tp);
  CHECK(dp);
  CHECK(actual["program"]["ops_by_kind"]["send"] == 2 * 64);
  CHECK(actual["program"]["ops"].get<double>() > 1000);
}

TEST_CASE("cli: workload show prints a readable table") {
  auto r = run_tutti({"workload", "show", "models/tiny-gpt.json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  CHECK(r.out.find("params") != std::string::npos);
  CHECK(r.out.find("activations") != std::string::npos);
  CHECK(r.out.find("reduce_scatter") != std::string::npos);
}

TEST_CASE("cli: workload show rejects unknown keys with exit 2 naming the key") {
  std::string dir = temp_dir();
  std::ifstream in(src("models/tiny-gpt.json"));
  json j = json::parse(in);
  j["model"]["laers"] = 12;
  std::string path = dir + "/bad.json";
  std::ofstream(path) << j.dump(2);
  auto r = run_tutti({"workload", "show", path, "--json"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("model.laers") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("cli: infeasible layouts exit 2 with the reason and a suggestion") {
  auto r = run_tutti({"workload", "show", "models/llama3-8b.json", "--parallel", "tp=1,pp=1",
                      "--gpus", "8", "--hbm", "80GiB"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("more than the 80.0 GiB of HBM") != std::string::npos);
  CHECK(r.err.find("would fit:") != std::string::npos);
  auto t =
      run_tutti({"workload", "show", "models/llama3-8b.json", "--parallel", "tp=3", "--gpus", "6"});
  CHECK(t.rc == 2);
  CHECK(t.err.find("tp=3 does not divide heads (32); use tp in {1, 2, 4, 8, 16, 32}") !=
        std::string::npos);
  auto g = run_tutti(
      {"workload", "show", "models/llama3-8b.json", "--parallel", "tp=8,pp=3", "--gpus", "64"});
  CHECK(g.rc == 2);
  CHECK(g.err.find("multiple of tp*pp*cp") != std::string::npos);
}

TEST_CASE("cli: workload show --gpu takes the HBM from the hardware catalog") {
  auto r = run_tutti({"workload", "show", "models/llama3-405b.json", "--gpus", "16384", "--gpu",
                      "h200-sxm-141gb", "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  json j = r.json();
  CHECK(j["gpu"] == "h200-sxm-141gb");
  CHECK(j["hbm_bytes"].get<double>() > 130e9);
  CHECK(j["layout"]["dp"] == 128);
  CHECK(j["memory_per_gpu"]["total_bytes"].get<double>() <= j["hbm_bytes"].get<double>());
  // Twice the micro-batch does not fit in an 80 GB H100; the error suggests what would.
  auto big = run_tutti({"workload", "show", "models/llama3-405b.json", "--gpus", "16384", "--gpu",
                        "h100-sxm-80gb", "--parallel", "mb=2"});
  CHECK(big.rc == 2);
  CHECK(big.err.find("would fit: recompute=") != std::string::npos);
  auto unknown = run_tutti({"workload", "show", "models/tiny-gpt.json", "--gpu", "h100"});
  CHECK(unknown.rc == 2);
  CHECK(unknown.err.find("h100-sxm-80gb") != std::string::npos);
}
