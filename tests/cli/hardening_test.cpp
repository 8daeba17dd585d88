// Issue 25: each reproducer of the hardening issue, one line each, as a regression test. Every bad
// input ends with exit 2 and an error naming the key (or a correct answer); none with exit 70.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/run.hpp"

using tutti::testing::run_tutti;
using tutti::testing::temp_dir;

namespace {
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
std::string write(const std::string& name, const std::string& text) {
  std::string path = temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}
std::string read(const std::string& path) {
  std::ifstream in(tutti::testing::src(path), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
const char* kW = "models/tiny-gpt.json";
const char* kC = "topologies/dgx-h100-single.json";
}  // namespace

TEST_CASE("hardening: JSON nested 100,000 deep is exit 2 for every file input, not a crash") {
  std::string deep = write("deep.json", std::string(100000, '['));
  for (auto args : {std::vector<std::string>{"simulate", "--workload", deep, "--cluster", kC},
                    std::vector<std::string>{"simulate", "--workload", kW, "--cluster", deep},
                    std::vector<std::string>{"plan", deep},
                    std::vector<std::string>{"report", "plan", deep, "--format", "md"}}) {
    auto r = run_tutti(args);
    CHECK_MESSAGE(r.rc == 2, args[0], " ", r.err);
    CHECK_MESSAGE(has(r.err, "nesting deeper than 128 levels"), r.err);
  }
}

TEST_CASE("hardening: duplicate keys are refused with both locations") {
  std::string text = read(kW);
  auto pos = text.find("\"global_batch\"");
  REQUIRE(pos != std::string::npos);
  text.insert(pos, "\"global_batch\": 8,\n    ");
  std::string path = write("dup.json", text);
  auto r = run_tutti({"simulate", "--workload", path, "--cluster", kC});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, path + ": training.global_batch: got key \"global_batch\" twice: at line "), r.err);
}

TEST_CASE("hardening: 1e999 in a file or in --set is exit 2 naming the key") {
  std::string text = read(kW);
  auto pos = text.find("\"global_batch\":");
  text.insert(pos, "\"micro_batch\": 1e999, ");
  auto r = run_tutti({"simulate", "--workload", write("big.json", text), "--cluster", kC});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "training.micro_batch: got 1e999 at line"), r.err);
  r = run_tutti({"simulate", "--workload", kW, "--cluster", kC, "--set", "training.global_batch=1e999"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "--set: training.global_batch: got 1e999"), r.err);
}

TEST_CASE("hardening: global_batch 2^40 and 2^24, layers 32000: exit 2 with the reason, never nonsense") {
  auto r = run_tutti({"simulate", "--workload", kW, "--cluster", kC, "--set", "training.global_batch=1099511627776"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "training.global_batch: got 1099511627776, expected an integer in [1, 1073741824]"), r.err);
  r = run_tutti({"simulate", "--workload", kW, "--cluster", kC, "--set", "training.global_batch=16777216"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "micro-batch x layer passes a Program holds; use micro_batch*dp >= "), r.err);
  r = run_tutti({"simulate", "--workload", kW, "--cluster", kC, "--set", "model.layers=32000", "--json"});
  CHECK_MESSAGE((r.rc == 0 || r.rc == 2), r.err);
  if (r.rc == 0) {
    double mfu = r.json()["mfu"].get<double>();
    CHECK(mfu > 0);
    CHECK(mfu < 1);
  }
}

TEST_CASE("hardening: tokens_to_train 1e308B, --deadline 1e308d, --budget $1e308M are exit 2") {
  auto r = run_tutti({"simulate", "--workload", kW, "--cluster", kC, "--set", "training.tokens_to_train=1e308B"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "training.tokens_to_train"), r.err);
  r = run_tutti({"simulate", "--workload", kW, "--cluster", kC, "--set", "training.tokens_to_train=1e17T"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "training.tokens_to_train: got \"1e17T\""), r.err);
  r = run_tutti({"plan", "tests/plan/small_request.json", "--deadline", "1e308d"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "constraints.deadline"), r.err);
  r = run_tutti({"plan", "tests/plan/small_request.json", "--budget", "$1e308M"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "constraints.capex_budget"), r.err);
  r = run_tutti({"plan", "tests/plan/small_request.json", "--deadline", "1e9y"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "constraints.deadline"), r.err);
}

TEST_CASE("hardening: unknown fabric, storage, facility or GPU in a plan request names the file and key") {
  const std::string req = "tests/plan/small_request.json";
  struct Case {
    const char* set;
    const char* key;
  };
  for (Case c : {Case{"search.fabrics=[\"warp_drive\"]", "search.fabrics.0"},
                 Case{"search.storage=[\"floppy\"]", "search.storage.0"},
                 Case{"search.facility=moon_base", "search.facility"},
                 Case{"search.gpus=[\"h100-sxm-80gb\",\"abacus\"]", "search.gpus.1"}}) {
    auto r = run_tutti({"plan", req, "--set", c.set});
    CHECK_MESSAGE(r.rc == 2, c.set, " ", r.err);
    CHECK_MESSAGE(has(r.err, req + ": " + c.key + ": got"), c.set, " ", r.err);
  }
}

TEST_CASE("hardening: a layout that does not fit the cluster blames the cluster, not --gpus") {
  auto r = run_tutti({"simulate", "--workload", kW, "--cluster", kC, "--parallel", "tp=3"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(!has(r.err, "--gpus"), r.err);
  CHECK_MESSAGE(has(r.err, kC), r.err);
}

TEST_CASE("hardening: --parallel tp=2,tp=4 is refused") {
  auto r = run_tutti({"simulate", "--workload", kW, "--cluster", kC, "--parallel", "tp=2,tp=4"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "--parallel: tp: got \"tp\" twice (tp=2, tp=4)"), r.err);
}

TEST_CASE("hardening: a NUL in a key does not truncate the message") {
  std::string text = read(kW);
  auto pos = text.find("\"global_batch\"");
  text.insert(pos, "\"glo\\u0000bal\": 1, ");
  auto r = run_tutti({"simulate", "--workload", write("nul.json", text), "--cluster", kC});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "glo\\u0000bal"), r.err);
  CHECK_MESSAGE(has(r.err, "expected one of:"), r.err);  // the message goes on past the NUL
}

TEST_CASE("hardening: a denormal calibration gemm.tile is exit 2 naming the key") {
  std::string text = read("sim/calibration/default.json");
  nlohmann::json j = nlohmann::json::parse(text);
  j["compute"]["gemm"]["tile"] = 1e-310;
  auto r = run_tutti({"simulate", "--workload", kW, "--cluster", kC, "--calibration",
                      write("cal.json", j.dump(1))});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "compute.gemm.tile"), r.err);
}

TEST_CASE("hardening: report inputs with wrong types are exit 2 naming the file") {
  nlohmann::json plan = nlohmann::json::parse(read("tests/reports/fixtures/plan.json"));
  plan["pareto"] = "not an array";
  std::string p1 = write("plan-bad.json", plan.dump());
  auto r = run_tutti({"report", "plan", p1, "--format", "md"});
  CHECK_MESSAGE(r.rc == 2, r.err);
  CHECK_MESSAGE(has(r.err, p1), r.err);
  std::string p2 = write("render-bad.json", R"({"kind": 7, "data": {}})");
  r = run_tutti({"report", "render", p2, "--format", "md"});
  CHECK_MESSAGE(r.rc == 2, r.err);
  CHECK_MESSAGE(has(r.err, p2), r.err);
  std::string p3 = write("render-bad2.json", R"({"kind": "plan", "data": {"pareto": [1, 2]}, "inputs": [3]})");
  r = run_tutti({"report", "render", p3, "--format", "md"});
  CHECK_MESSAGE(r.rc == 2, r.err);
  CHECK_MESSAGE(has(r.err, p3), r.err);
}
