// Issue 25: each reproducer of the hardening issue, one line each, as a regression test. Every bad
// input ends with exit 2 and an error naming the key (or a correct answer); none with exit 70.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/run.hpp"

using tutti::testing::run_tutti;
using tutti::testing::temp_dir;

namespace {
bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
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
// tiny-gpt with one key replaced (`--set` of simulate applies to the cluster, the main input).
std::string workload_with(const std::string& section, const std::string& key,
                          const std::string& json_value) {
  nlohmann::json j = nlohmann::json::parse(read("models/tiny-gpt.json"));
  j[section][key] = nlohmann::json::parse(json_value);
  static int n = 0;
  return write("w" + std::to_string(n++) + ".json", j.dump(1));
}
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
  CHECK_MESSAGE(
      has(r.err, path + ": training.global_batch: got key \"global_batch\" twice: at line "),
      r.err);
}

TEST_CASE("hardening: 1e999 in a file or in --set is exit 2 naming the key") {
  std::string text = read(kW);
  auto pos = text.find("\"global_batch\":");
  text.insert(pos, "\"micro_batch\": 1e999, ");
  auto r = run_tutti({"simulate", "--workload", write("big.json", text), "--cluster", kC});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "training.micro_batch: got 1e999 at line"), r.err);
  r = run_tutti({"simulate", "--workload", kW, "--cluster", kC, "--set", "nodes=1e999"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "--set: nodes: got 1e999"), r.err);
}

TEST_CASE(
    "hardening: global_batch 2^40 and 2^24, layers 32000: exit 2 with the reason, never nonsense") {
  auto r = run_tutti({"simulate", "--workload",
                      workload_with("training", "global_batch", "1099511627776"), "--cluster", kC});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(
      has(r.err,
          "training.global_batch: got 1099511627776, expected an integer in [1, 1073741824]"),
      r.err);
  r = run_tutti({"simulate", "--workload", workload_with("training", "global_batch", "16777216"),
                 "--cluster", kC});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(
      has(r.err, "micro-batch x layer passes a Program holds; use micro_batch*dp >= 1537"), r.err);
  r = run_tutti({"simulate", "--workload", workload_with("model", "layers", "32000"), "--cluster",
                 kC, "--json"});
  CHECK(r.rc == 2);  // out of memory on one node, with a layout that would fit
  CHECK_MESSAGE(has(r.err, "more than the 79.6 GiB of HBM; would fit: "), r.err);
}

TEST_CASE("hardening: tokens_to_train 1e308B, --deadline 1e308d, --budget $1e308M are exit 2") {
  auto r = run_tutti({"simulate", "--workload",
                      workload_with("training", "tokens_to_train", "\"1e308B\""), "--cluster", kC});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "training.tokens_to_train: got \"1e308B\""), r.err);
  r = run_tutti({"simulate", "--workload",
                 workload_with("training", "tokens_to_train", "\"1e17T\""), "--cluster", kC});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err,
                    "training.tokens_to_train: got \"1e17T\", expected a count such as 2048, "
                    "\"2T\" or \"1.5B\" in [1"),
                r.err);
  r = run_tutti({"plan", "tests/plan/small_request.json", "--deadline", "1e308d"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "constraints.deadline"), r.err);
  r = run_tutti({"plan", "tests/plan/small_request.json", "--budget", "$1e308M"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "constraints.capex_budget"), r.err);
  r = run_tutti({"plan", "tests/plan/small_request.json", "--deadline", "1e9y"});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(has(r.err, "constraints.deadline: got \"1e9y\""), r.err);
}

TEST_CASE(
    "hardening: unknown fabric, storage, facility or GPU in a plan request names the file and "
    "key") {
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
  CHECK_MESSAGE(!has(r.err, kC), r.err);  // the flag's error, not the cluster's
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
  nlohmann::json cmp = nlohmann::json::parse(read("tests/reports/fixtures/compare-two.json"));
  cmp["architectures"] = nlohmann::json::array({1});
  std::string p1 = write("compare-bad.json", cmp.dump());
  auto r = run_tutti({"report", "render", p1, "--format", "md"});
  CHECK_MESSAGE(r.rc == 2, r.err);
  CHECK_MESSAGE(has(r.err, p1 + ": (document): got "), r.err);
  std::string p2 = write("render-bad.json", R"({"kind": 7, "data": {}})");
  r = run_tutti({"report", "render", p2, "--format", "md"});
  CHECK_MESSAGE(r.rc == 2, r.err);
  CHECK_MESSAGE(has(r.err, p2), r.err);
  std::string p3 =
      write("render-bad2.json", R"({"kind": "plan", "data": {"pareto": [1, 2]}, "inputs": [3]})");
  r = run_tutti({"report", "render", p3, "--format", "md"});
  CHECK_MESSAGE(r.rc == 2, r.err);
  CHECK_MESSAGE(has(r.err, p3), r.err);
}

namespace {
// Every number in `j` is finite. (nlohmann would write NaN as null; tutti's writer refuses
// non-finite numbers before that, so the nulls left are deliberate: "no power cap".)
std::string non_finite_path(const nlohmann::json& j, const std::string& path = "") {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) return path;
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it)
      if (auto p = non_finite_path(*it, path + "." + it.key()); !p.empty()) return p;
  if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i)
      if (auto p = non_finite_path(j[i], path + "." + std::to_string(i)); !p.empty()) return p;
  return "";
}
}  // namespace

TEST_CASE("hardening: golden outputs, fixtures and every golden run hold only finite numbers") {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const char* dir : {"tests/sim/golden", "tests/reports/fixtures"})
    for (const auto& e : fs::directory_iterator(tutti::testing::src(dir)))
      if (e.path().extension() == ".json")
        files.push_back(std::string(dir) + "/" + e.path().filename().string());
  CHECK(files.size() >= 3);
  for (const auto& f : files) {
    nlohmann::json j = nlohmann::json::parse(read(f));
    CHECK_MESSAGE(non_finite_path(j) == "", f);
  }
  // The golden runs (tests/sim/simulate_test.cpp, tests/cli/simgrid_cli_test.cpp,
  // tests/plan/plan_cli_test.cpp, tests/validation/validation_test.cpp) as the CLI writes them.
  const std::vector<std::vector<std::string>> runs = {
      {"simulate", "--workload", kW, "--cluster", kC, "--json", "--engine", "native"},
      {"simulate", "--workload", kW, "--cluster", kC, "--json", "--engine", "analytic"},
      {"simulate", "--workload", kW, "--cluster", "topologies/h100-64gpu-fattree.json", "--json",
       "--engine", "simgrid", "--parallel", "tp=2,pp=2,mb=2"},
      {"plan", "tests/plan/small_request.json", "--json"},
      {"validate", "--cases", "tests/validation/published-public.json", "--engine", "analytic",
       "--format", "json"}};
  for (const auto& args : runs) {
    auto r = run_tutti(args);
    INFO(args[0], " ", args[1], " ", r.err);
    CHECK((r.rc == 0 || r.rc == 1));  // plan and validate answer "no" with exit 1, still in JSON
    if (r.rc == 0 || r.rc == 1) CHECK(non_finite_path(r.json()) == "");
  }
}

TEST_CASE(
    "hardening: a sample of fuzzer-made inputs (tests/fuzz/sample) simulates to finite numbers or "
    "exit 2") {
  // Inputs the libFuzzer targets found (bench/fuzz.md): workload and cluster files that parse,
  // each simulated on the analytic engine against the shipped counterpart.
  namespace fs = std::filesystem;
  int ok = 0, refused = 0;
  for (const char* kind : {"workload", "cluster"}) {
    const fs::path dir = tutti::testing::src(std::string("tests/fuzz/sample/") + kind);
    std::vector<fs::path> inputs;
    for (const auto& e : fs::directory_iterator(dir)) inputs.push_back(e.path());
    std::sort(inputs.begin(), inputs.end());
    CHECK(inputs.size() >= 5);
    for (const auto& in : inputs) {
      const std::string f = in.string();
      const bool w = std::string(kind) == "workload";
      auto r = run_tutti({"simulate", "--workload", w ? f : std::string(kW), "--cluster",
                          w ? std::string(kC) : f, "--json", "--engine", "analytic"});
      INFO(f, ": ", r.err);
      CHECK((r.rc == 0 || r.rc == 2));
      if (r.rc == 0) {
        ++ok;
        CHECK(non_finite_path(r.json()) == "");
      } else {
        ++refused;
      }
    }
  }
  MESSAGE("fuzz sample: ", ok, " simulated, ", refused, " refused");
  CHECK(ok > 0);
}

TEST_CASE(
    "hardening: a sample of extreme values in every numeric workload key: exit 0 with finite "
    "numbers, or exit 2, never 70 or a crash") {
  const std::pair<const char*, const char*> keys[] = {
      {"model", "layers"},          {"model", "hidden"},         {"model", "heads"},
      {"model", "ffn_hidden"},      {"model", "vocab"},          {"training", "seq_len"},
      {"training", "global_batch"}, {"training", "micro_batch"}, {"parallel", "tp"},
      {"parallel", "pp"},           {"parallel", "dp"},          {"parallel", "zero"}};
  const char* values[] = {"0",      "-1",    "1",          "3",
                          "1e-310", "0.5",   "2147483647", "9223372036854775807",
                          "1e308",  "\"x\"", "[]"};
  int ok = 0, refused = 0;
  for (auto [section, key] : keys)
    for (const char* v : values) {
      auto r = run_tutti({"simulate", "--workload", workload_with(section, key, v), "--cluster", kC,
                          "--json", "--engine", "analytic"});
      const std::string what = std::string(section) + "." + key + "=" + v + ": " + r.err;
      INFO(what);
      CHECK((r.rc == 0 || r.rc == 2));
      if (r.rc == 0) {
        ++ok;
        CHECK(non_finite_path(r.json()) == "");
        double mfu = r.json()["mfu"].get<double>();
        CHECK(mfu > 0);
        CHECK(mfu < 1);
      } else {
        ++refused;
      }
    }
  CHECK(ok > 0);
  CHECK(refused > 0);
}
