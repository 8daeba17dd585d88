// `tutti serve simulate` end to end: exit codes, JSON against its schema, CSV, errors with key
// paths.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "../support/run.hpp"
#include "tutti/core/schema.hpp"

using tutti::testing::run_tutti;

namespace {
const std::vector<std::string> kBase = {"serve",    "simulate",
                                        "-w",       "models/llama3-70b.json",
                                        "-c",       "topologies/dgx-h100-single.json",
                                        "--config", "sim/serve/examples/chat-llama3-70b.json"};
std::vector<std::string> with(std::vector<std::string> a, std::initializer_list<std::string> more) {
  a.insert(a.end(), more);
  return a;
}
}  // namespace

TEST_CASE("serve cli: --json validates against schemas/serve_result.schema.json") {
  std::vector<std::string> args = {"--json"};
  args.insert(args.end(), kBase.begin(), kBase.end());
  args.push_back("--requests");
  auto res = run_tutti(args);
  REQUIRE_MESSAGE(res.rc == 0, res.err);
  nlohmann::json j = res.json();
  auto errors = tutti::validate_schema(
      tutti::load_schema(tutti::testing::src("schemas/serve_result.schema.json")), j);
  CHECK_MESSAGE(errors.empty(), tutti::format_schema_errors(errors));
  CHECK(j["requests"] == 400);
  CHECK(j["request_records"].size() == 400);
  CHECK(j["ttft_s"]["p99"].get<double>() >= j["ttft_s"]["p50"].get<double>());
  // Deterministic: the same command gives the same bytes; another seed does not.
  CHECK(run_tutti(args).out == res.out);
  std::vector<std::string> seeded = {"--seed", "2"};
  seeded.insert(seeded.end(), args.begin(), args.end());
  CHECK(run_tutti(seeded).out != res.out);
}

TEST_CASE("serve cli: text, CSV and --set") {
  std::string csv = tutti::testing::temp_dir() + "/req.csv";
  auto res = run_tutti(with(kBase, {"--csv", csv}));
  REQUIRE_MESSAGE(res.rc == 0, res.err);
  CHECK(res.out.find("TTFT") != std::string::npos);
  CHECK(res.out.find("per million output tokens") != std::string::npos);
  std::ifstream in(csv);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  CHECK(text.rfind("id,arrival_s,prompt_tokens", 0) == 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 401);
  // --set applies to the serving config.
  std::vector<std::string> s = {"--set", "traffic.requests=20"};
  s.insert(s.end(), kBase.begin(), kBase.end());
  auto small = run_tutti(s);
  REQUIRE(small.rc == 0);
  CHECK(small.out.find("requests   20 over") != std::string::npos);
}

TEST_CASE("serve cli: bad input exits 2 naming the key path") {
  std::vector<std::string> s = {"--set", "serving.max_batch=0"};
  s.insert(s.end(), kBase.begin(), kBase.end());
  auto r = run_tutti(s);
  CHECK(r.rc == 2);
  CHECK(r.err.find("serving.max_batch") != std::string::npos);
  std::vector<std::string> t = {"--set", "serving.tp=1"};
  t.insert(t.end(), kBase.begin(), kBase.end());
  auto big = run_tutti(t);
  CHECK(big.rc == 2);
  CHECK(big.err.find("does not fit") != std::string::npos);
  auto missing = run_tutti({"serve", "simulate", "-w", "models/llama3-70b.json", "-c",
                            "topologies/dgx-h100-single.json", "--config", "nope.json"});
  CHECK(missing.rc == 2);
  CHECK(missing.err.find("nope.json") != std::string::npos);
}

TEST_CASE("serve cli: the README's serving example is the command's real output") {
  std::ifstream in(tutti::testing::src("README.md"));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  auto res = run_tutti(kBase);
  REQUIRE(res.rc == 0);
  CHECK_MESSAGE(
      readme.find(res.out) != std::string::npos,
      "README.md's Serving example differs from `tutti serve simulate` output; regenerate it");
}
