// Serving cases of `tutti validate` (tests/validation/published-serving.json): every case is read,
// predicted by the serve simulator and scored in the "serving" group; without the serve predictor
// they are skipped; malformed serving sections are input errors naming the key path.
#include "tutti/serve/validation.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti;
using tutti::testing::src;

namespace {
const char* kServing = "tests/validation/published-serving.json";

ValidationReport score(const std::string& only = "") {
  ValidationOptions o;
  o.serving = serve::predict_validation_case;
  o.only = only;
  return validate_cases(std::vector<std::string>{src(kServing)}, o);
}
}  // namespace

TEST_CASE("serve validation: the published serving cases are predicted and scored as one group") {
  nlohmann::json schema = load_schema(src("schemas/validation_cases.schema.json"));
  std::ifstream in(src(kServing));
  const nlohmann::json cases = nlohmann::json::parse(in);
  CHECK(format_schema_errors(validate_schema(schema, cases)) == "");
  REQUIRE(cases.size() >= 15);
  // Only the lighter cases here (the 30,000-request offline one runs in the docs' command).
  ValidationReport r = score("trtllm-online");
  CHECK(r.skipped.empty());
  CHECK(r.inconsistent.empty());
  REQUIRE(r.cases.size() == static_cast<std::size_t>(r.total_cases));
  for (const CaseResult& c : r.cases) {
    CAPTURE(c.id);
    CHECK(c.kind == "serving");
    CHECK(std::isfinite(c.error_pct));
    CHECK(c.predicted > 0);
    CHECK_FALSE(c.assumptions.empty());
  }
  REQUIRE(r.by_kind.size() == 1);
  CHECK(r.by_kind[0].group == "serving");
  CHECK(r.by_kind[0].n == r.total_cases);
  // TTFT at 8 requests/s is above TTFT at 2 requests/s on the same deployment, as measured.
  double low = 0, high = 0;
  for (const CaseResult& c : r.cases) {
    if (c.id == "trtllm-online-llama31-70b-h100-tp4-467-256-qps2-ttft") low = c.predicted;
    if (c.id == "trtllm-online-llama31-70b-h100-tp4-467-256-qps8-ttft") high = c.predicted;
  }
  REQUIRE(low > 0);
  CHECK(high > low);
}

TEST_CASE(
    "serve validation: without the serve predictor the serving cases are skipped with the reason") {
  ValidationOptions o;
  o.only = "trtllm-online-llama31-8b";
  ValidationReport r = validate_cases(std::vector<std::string>{src(kServing)}, o);
  CHECK(r.cases.empty());
  REQUIRE(!r.skipped.empty());
  CHECK(r.skipped[0].reason.find("serve simulator") != std::string::npos);
}

TEST_CASE(
    "serve validation: a serving section with a bad value is an input error naming the key path") {
  std::ifstream in(src(kServing));
  nlohmann::json cases = nlohmann::json::parse(in);
  nlohmann::json c = cases[0];
  c["load"]["mode"] = "rate";  // a rate load needs rate_per_s
  const std::string path = tutti::testing::temp_dir() + "/serving-bad.json";
  std::ofstream(path) << nlohmann::json::array({c}).dump();
  ValidationOptions o;
  o.serving = serve::predict_validation_case;
  try {
    validate_cases(std::vector<std::string>{path}, o);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("load.rate_per_s") != std::string::npos);
  }
  nlohmann::json d = cases[0];
  d["serving"]["tp"] = 0;
  std::ofstream(path) << nlohmann::json::array({d}).dump();
  CHECK_THROWS_AS(validate_cases(std::vector<std::string>{path}, o), InputError);
  auto cli = tutti::testing::run_tutti({"validate", "--cases", path});
  CHECK(cli.rc == 2);
}
