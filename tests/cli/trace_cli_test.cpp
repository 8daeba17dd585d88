// `tutti simulate --trace` with its filters on a 1,024-GPU job (issue 24: "a filtered trace of a
// 1,024-GPU iteration is under 20 MB and loads cleanly"), and the flags' errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "../support/run.hpp"
#include "../support/trace_check.hpp"

using tutti::testing::run_tutti;

namespace {

const std::vector<std::string> kJob = {"simulate", "-w", "models/llama3-70b.json", "-c",
                                       "topologies/dgx-h100-superpod-4su.json"};

std::vector<std::string> job(std::vector<std::string> extra) {
  std::vector<std::string> a = kJob;
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace

TEST_CASE(
    "simulate --trace: a filtered trace of a 1,024-GPU iteration is under 20 MB and strict-valid") {
  const std::string dir = tutti::testing::temp_dir();
  // Every timeline of the job: refused before simulating, with the size and the filters to use.
  const auto all = run_tutti(job({"--trace", dir + "/all.json"}));
  CHECK(all.rc == 2);
  CHECK(all.err.find("--trace-ranks") != std::string::npos);
  CHECK(all.err.find("trace: about") != std::string::npos);  // the estimate, printed first
  CHECK_FALSE(std::filesystem::exists(dir + "/all.json"));
  // The first stage's tensor-parallel group and the last rank (last stage), every op.
  const std::string path = dir + "/f.json";
  const auto r = run_tutti(job({"--trace", path, "--trace-ranks", "0-7,1023", "--json"}));
  REQUIRE(r.rc == 0);
  CHECK(r.json()["gpus"] == 1024);
  CHECK(r.err.find("trace: about") != std::string::npos);
  const auto bytes = std::filesystem::file_size(path);
  CHECK(bytes < 20'000'000);
  CHECK(bytes > 100'000);
  std::ifstream in(path);
  const nlohmann::json t = nlohmann::json::parse(in);
  CHECK(tutti::testing::check_chrome_trace(t) == "");
  std::set<long long> pids;
  std::set<std::string> cats;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X") {
      pids.insert(e["pid"].get<long long>());
      cats.insert(e["cat"].get<std::string>());
    }
  CHECK(pids.size() == 9);
  CHECK(pids.count(0));
  CHECK(pids.count(1023));
  CHECK(cats.count("gemm"));
  CHECK(cats.count("collective"));
  CHECK(cats.count("send"));
  // The same trace twice: byte-identical.
  const auto again =
      run_tutti(job({"--trace", dir + "/g.json", "--trace-ranks", "0-7,1023", "--json"}));
  REQUIRE(again.rc == 0);
  std::ifstream a(path), b(dir + "/g.json");
  const std::string sa((std::istreambuf_iterator<char>(a)), {}),
      sb((std::istreambuf_iterator<char>(b)), {});
  CHECK(sa == sb);
}

TEST_CASE("simulate --trace filters: bad values exit 2 naming the flag") {
  const std::string out = tutti::testing::temp_dir() + "/bad.json";
  struct Case {
    std::vector<std::string> args;
    std::string flag;
  };
  const std::vector<Case> cases = {
      {{"--trace", out, "--trace-ranks", "0-1024"}, "--trace-ranks"},  // 1,024 GPUs: ranks 0-1023
      {{"--trace", out, "--trace-ranks", "7-3"}, "--trace-ranks"},
      {{"--trace", out, "--trace-ranks", "x"}, "--trace-ranks"},
      {{"--trace", out, "--trace-ops", "gemm,warp"}, "--trace-ops"},
      {{"--trace", out, "--trace-iterations=-1"}, "--trace-iterations"},
      {{"--trace-ranks", "0"}, "--trace-ranks"},  // a filter without --trace
      {{"--trace", out, "--engine", "analytic"}, "--trace"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.flag);
    CAPTURE(c.args.back());
    const auto r = run_tutti(job(c.args));
    CHECK(r.rc == 2);
    CHECK(r.err.find(c.flag) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}
