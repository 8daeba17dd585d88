// simulate(): golden CLI output, errors, and every shipped workload and cluster file.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;
using tutti::testing::run_tutti;
using tutti::testing::src;

namespace {
nlohmann::json without_wall(nlohmann::json j) {
  j.erase("wall_s");
  return j;
}
std::vector<std::string> shipped(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(src(dir)))
    if (e.path().extension() == ".json") files.push_back(dir + "/" + e.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}
}  // namespace

TEST_CASE("simulate --json is byte-identical across runs, wall time goes to stderr only") {
  for (const char* engine : {"native", "analytic"}) {
    std::vector<std::string> args = {"simulate",
                                     "--workload",
                                     "models/tiny-gpt.json",
                                     "--cluster",
                                     "topologies/dgx-h100-single.json",
                                     "--json",
                                     "--engine",
                                     engine};
    auto a = run_tutti(args), b = run_tutti(args);
    REQUIRE_MESSAGE(a.rc == 0, a.err);
    REQUIRE(b.rc == 0);
    CHECK(a.out == b.out);
    CHECK(a.out.find("wall") == std::string::npos);
    CHECK(a.err.find("s wall") != std::string::npos);
  }
}

TEST_CASE("golden: tutti simulate --json on tiny-gpt, one DGX H100") {
  auto r = run_tutti({"simulate", "--workload", "models/tiny-gpt.json", "--cluster",
                      "topologies/dgx-h100-single.json", "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  nlohmann::json j = r.json();
  for (const char* k :
       {"iteration_time_s", "tokens_per_s_per_gpu", "samples_per_s", "tflops_per_gpu", "mfu",
        "breakdown", "bottleneck_links", "time_to_train_s"})
    CHECK_MESSAGE(j.contains(k), k);
  std::ifstream in(src("tests/sim/golden/simulate-tiny-gpt.json"));
  nlohmann::json expected = nlohmann::json::parse(in);
  CHECK(tutti::testing::json_diff(without_wall(j), without_wall(expected), 1e-6) == "");
  // The output contract: schemas/simulation_result.schema.json (what report compare reads back).
  const auto errors = validate_schema(load_schema(src("schemas/simulation_result.schema.json")), j);
  CHECK_MESSAGE(errors.empty(), format_schema_errors(errors));
  CHECK(j["schema_version"] == 1);
  // Breakdown adds up; the same command twice gives the same JSON.
  const auto& b = j["breakdown"];
  double sum =
      b["compute_s"].get<double>() + b["bubble_s"].get<double>() + b["other_s"].get<double>();
  for (auto& [k, v] : b["exposed_comm_s"].items()) sum += v.get<double>();
  CHECK(sum == doctest::Approx(j["iteration_time_s"].get<double>()).epsilon(1e-9));
  auto r2 = run_tutti({"simulate", "--workload", "models/tiny-gpt.json", "--cluster",
                       "topologies/dgx-h100-single.json", "--json"});
  CHECK(without_wall(r2.json()) == without_wall(j));
  // The analytic engine agrees within 2% (one node, nothing congested).
  auto a = run_tutti({"simulate", "--workload", "models/tiny-gpt.json", "--cluster",
                      "topologies/dgx-h100-single.json", "--json", "--engine", "analytic"});
  REQUIRE(a.rc == 0);
  CHECK(a.json()["iteration_time_s"].get<double>() ==
        doctest::Approx(j["iteration_time_s"].get<double>()).epsilon(0.02));
  // Readable table.
  auto t = run_tutti({"simulate", "--workload", "models/tiny-gpt.json", "--cluster",
                      "topologies/dgx-h100-single.json"});
  CHECK(t.rc == 0);
  CHECK(t.out.find("MFU") != std::string::npos);
  CHECK(t.out.find("pipeline bubble") != std::string::npos);
}

TEST_CASE(
    "simulate --json matches schemas/simulation_result.schema.json on every engine, MoE and "
    "routing") {
  const nlohmann::json schema = load_schema(src("schemas/simulation_result.schema.json"));
  const std::vector<std::vector<std::string>> runs = {
      {"simulate", "-w", "models/tiny-gpt.json", "-c", "topologies/dgx-h100-single.json", "--json",
       "--engine", "analytic"},
      {"simulate", "-w", "models/tiny-gpt.json", "-c", "topologies/dgx-h100-single.json", "--json",
       "--engine", "simgrid"},
      {"simulate", "-w", "models/qwen3-30b-a3b.json", "-c", "topologies/dgx-h100-superpod-1su.json",
       "--json", "--parallel", "tp=1,pp=1,ep=8,zero=3", "--gpus", "32"},
      {"--set", "fabric.routing=adaptive", "simulate", "-w", "models/tiny-gpt.json", "-c",
       "topologies/dgx-h100-superpod-1su.json", "--json", "--gpus", "32"}};
  for (const auto& args : runs) {
    auto r = run_tutti(args);
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    const nlohmann::json j = r.json();
    if (args[0] == "--set") CHECK(j["routing"] == "adaptive");
    if (args[2].find("qwen3") != std::string::npos) CHECK(j["breakdown"].contains("moe_busy_s"));
    const auto errors = validate_schema(schema, j);
    const nlohmann::json cmd = args;
    CHECK_MESSAGE(errors.empty(), cmd.dump(), ": ", format_schema_errors(errors));
  }
}

TEST_CASE("simulate errors: infeasible layout, unknown engine, too many GPUs, trace") {
  auto r = run_tutti({"simulate", "-w", "models/llama3-70b.json", "-c",
                      "topologies/dgx-h100-single.json", "--parallel", "tp=8,pp=1,dp=1"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("GiB") != std::string::npos);
  auto e = run_tutti({"simulate", "-w", "models/tiny-gpt.json", "-c",
                      "topologies/dgx-h100-single.json", "--engine", "warp"});
  CHECK(e.rc == 2);
  auto big = run_tutti({"simulate", "-w", "models/tiny-gpt.json", "-c",
                        "topologies/dgx-h100-single.json", "--parallel", "dp=4,tp=4,pp=2"});
  CHECK(big.rc == 2);
  std::string trace = tutti::testing::temp_dir() + "/t.json";
  auto tr = run_tutti({"simulate", "-w", "models/tiny-gpt.json", "-c",
                       "topologies/dgx-h100-single.json", "--trace", trace, "--json"});
  REQUIRE(tr.rc == 0);
  std::ifstream in(trace);
  nlohmann::json tj = nlohmann::json::parse(in);
  CHECK(tj["traceEvents"].size() > 100);
}

TEST_CASE("every shipped workload simulates with a feasible layout") {
  Cluster c = load_cluster(src("topologies/h100-16k-rail-3tier.json"));
  const std::vector<std::string> fallbacks = {"",     "tp=2",      "tp=4",
                                              "tp=8", "tp=8,pp=2", "tp=8,recompute=full"};
  for (const std::string& f : shipped("models")) {
    CAPTURE(f);
    Workload w0 = load_workload(src(f));
    bool ok = false;
    for (const std::string& flag : fallbacks) {
      Layout l0 = resolve_layout(w0, flag, w0.layout_has_dp ? 0 : 64);
      // Keep the Program small: two micro-batches per pipeline.
      long long gbs = 2LL * l0.dp * l0.micro_batch;
      Workload w = load_workload(src(f), {"training.global_batch=" + std::to_string(gbs)});
      Layout l = resolve_layout(w, flag, w.layout_has_dp ? 0 : 64);
      try {
        check_layout(w, l, c.gpu.hbm_bytes);
      } catch (const InputError&) {
        continue;
      }
      SimOptions o;
      SimResult r = simulate(w, c, l, o);
      CHECK(r.iteration_time_s > 0);
      CHECK(r.mfu > 0.01);
      CHECK(r.mfu < 0.9);
      ok = true;
      break;
    }
    CHECK_MESSAGE(ok, "no feasible layout found for " << f);
  }
}

TEST_CASE("every shipped cluster loads and simulates a small job") {
  for (const std::string& f : shipped("topologies")) {
    CAPTURE(f);
    Cluster c = load_cluster(src(f));
    int dp = std::min(8, c.gpus());
    std::vector<std::string> sets;
    if (c.gpu.peak(DType::BF16) <= 0) sets.push_back("training.dtype=fp32");
    Workload w = load_workload(src("models/tiny-gpt.json"), sets);
    Layout l = resolve_layout(w, "tp=1,pp=1,dp=" + std::to_string(dp));
    for (const char* engine : {"native", "analytic"}) {
      SimOptions o;
      o.engine = engine;
      SimResult r = simulate(w, c, l, o);
      CHECK(r.iteration_time_s > 0);
      CHECK(r.tflops_per_gpu > 0);
    }
  }
}

TEST_CASE("tp_overlap: faster than serial TP communication, never faster than compute alone") {
  auto sim = [](const char* parallel, const char* engine) {
    auto r = run_tutti({"simulate", "--workload", "models/tiny-gpt.json", "--cluster",
                        "topologies/dgx-h100-single.json", "--parallel", parallel, "--engine",
                        engine, "--json"});
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    return r.json();
  };
  nlohmann::json serial = sim("tp=4,pp=1,dp=2", "native");
  nlohmann::json overlap = sim("tp=4,pp=1,dp=2,tp_overlap=1", "native");
  double ts = serial["iteration_time_s"].get<double>();
  double to = overlap["iteration_time_s"].get<double>();
  double compute = serial["breakdown"]["compute_s"].get<double>();
  MESSAGE("serial ", ts, " s, overlap ", to, " s, compute alone ", compute, " s");
  CHECK(to < ts);
  CHECK(to >= compute);
  CHECK(to >= overlap["breakdown"]["compute_s"].get<double>());
  // The exposed TP communication shrinks.
  CHECK(overlap["breakdown"]["exposed_comm_s"]["tp"].get<double>() <
        serial["breakdown"]["exposed_comm_s"]["tp"].get<double>());
  // The analytic engine schedules the same overlap: faster than its serial answer, no faster
  // than its compute, and within 5% of the native engine.
  nlohmann::json a_serial = sim("tp=4,pp=1,dp=2", "analytic");
  nlohmann::json a_overlap = sim("tp=4,pp=1,dp=2,tp_overlap=1", "analytic");
  double as = a_serial["iteration_time_s"].get<double>();
  double ao = a_overlap["iteration_time_s"].get<double>();
  MESSAGE("analytic: serial ", as, " s, overlap ", ao, " s");
  CHECK(ao < as);
  CHECK(ao >= a_overlap["breakdown"]["compute_s"].get<double>());
  CHECK(a_overlap["breakdown"]["exposed_comm_s"]["tp"].get<double>() <
        a_serial["breakdown"]["exposed_comm_s"]["tp"].get<double>());
  CHECK(ao == doctest::Approx(to).epsilon(0.05));
}

TEST_CASE("a job on part of an NVL72 cluster: fit_layout, placement, idle GPUs in the power") {
  Cluster c = load_cluster(src("topologies/gb200-nvl72-576.json"));
  REQUIRE(c.gpus() == 576);
  REQUIRE(c.domain_gpus() == 72);
  Workload w = load_workload(src("models/llama3-70b.json"));
  // tp 8 x pp 4 on 576 GPUs would be dp 18, which does not divide the 512-sequence batch.
  CHECK_THROWS_AS(check_layout(w, resolve_layout(w, "", c.gpus()), 0), InputError);
  Layout l = fit_layout(w, "", c.gpus());
  CHECK(l.dp == 16);
  CHECK(l.gpus() == 512);
  CHECK(describe_placement(c, 512) ==
        "512 of 576 GPUs: 7 full NVLink domains of 72 + 8 GPUs of the next NVLink domain; 64 GPUs "
        "idle");
  // A named dp is kept as asked.
  CHECK(fit_layout(w, "dp=2", c.gpus()).gpus() == 64);
  CHECK_THROWS_AS(fit_layout(w, "", 16), InputError);  // fewer GPUs than tp*pp
}
