// Calibration profile: strict parsing, round trip, schema agreement.
#include "tutti/sim/calibration.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti;

namespace {
nlohmann::json default_file() {
  std::ifstream in(tutti::testing::src("sim/calibration/default.json"));
  return nlohmann::json::parse(in);
}
}  // namespace

TEST_CASE("the default profile loads, cites sources and has sane values") {
  const CalibrationProfile& p = default_calibration();
  CHECK(p.name == "default");
  CHECK(!p.source.empty());
  CHECK(!p.nccl.source.empty());
  CHECK(p.gemm.flops.eff_max > 0.5);
  CHECK(p.gemm.flops.eff_max < 0.9);
  CHECK(p.tier(Tier::NVLink).bandwidth_efficiency < 1.0);
  CHECK(p.nccl.algorithms[static_cast<int>(NcclAlgo::Ring)].supports(NcclProto::LL128));
  CHECK_FALSE(p.nccl.algorithms[static_cast<int>(NcclAlgo::Nvls)].supports(NcclProto::LL));
  CHECK(p.nccl.algorithms[0].base_latency_s[2] == doctest::Approx(8.4e-6));
}

TEST_CASE("to_json round-trips through the parser") {
  nlohmann::json j;
  to_json(j, default_calibration());
  CalibrationProfile q = parse_calibration(j.dump(), "roundtrip.json");
  nlohmann::json k;
  to_json(k, q);
  CHECK(j == k);
  CHECK(q.gemm.flops.half == doctest::Approx(default_calibration().gemm.flops.half));
  CHECK(q.nccl.algorithms[1].step_latency_s[2][1] ==
        doctest::Approx(default_calibration().nccl.algorithms[1].step_latency_s[2][1]));
  CHECK(q.nccl.nvls_bandwidth_efficiency ==
        doctest::Approx(default_calibration().nccl.nvls_bandwidth_efficiency));
  CHECK(q.nccl.nvls_max_bandwidth_Bps ==
        doctest::Approx(default_calibration().nccl.nvls_max_bandwidth_Bps));
  CHECK(q.nccl.protocols[0].max_bandwidth_Bps == doctest::Approx(87.7e9));
}

TEST_CASE("strict input: unknown key, missing key, bad unit, out of range") {
  auto expect_error = [](nlohmann::json j, const std::string& needle) {
    try {
      parse_calibration(j.dump(), "bad.json");
      FAIL("no error for " << needle);
    } catch (const InputError& e) {
      std::string w = e.what();
      CHECK_MESSAGE(w.find("bad.json") != std::string::npos, w);
      CHECK_MESSAGE(w.find(needle) != std::string::npos, w);
    }
  };
  nlohmann::json j = default_file();
  j["compute"]["gemm"]["bogus"] = 1;
  expect_error(j, "bogus");
  j = default_file();
  j["nccl"].erase("p2p_latency");
  expect_error(j, "p2p_latency");
  j = default_file();
  j["network"]["tiers"]["access"]["latency"] = "5 parsecs";
  expect_error(j, "network.tiers.access.latency");
  j = default_file();
  j["compute"]["gemm"]["flops_efficiency_max"] = 1.5;
  expect_error(j, "compute.gemm.flops_efficiency_max");
  j = default_file();
  j["nccl"]["nvls_bandwidth_efficiency"] = 1.5;
  expect_error(j, "nccl.nvls_bandwidth_efficiency");
  j = default_file();
  j["nccl"]["protocols"]["ll"]["max_bandwidth"] = "87.7us";
  expect_error(j, "nccl.protocols.ll.max_bandwidth");
  j = default_file();
  j["nccl"].erase("nvls_max_bandwidth");
  expect_error(j, "nvls_max_bandwidth");
}

TEST_CASE("schema agrees with the parser on the shipped file and on broken ones") {
  nlohmann::json schema = load_schema(tutti::testing::src("schemas/calibration.schema.json"));
  nlohmann::json j = default_file();
  CHECK(format_schema_errors(validate_schema(schema, j)) == "");
  nlohmann::json out;
  to_json(out, default_calibration());
  out["source"] = "x";
  out["nccl"]["source"] = "y";
  CHECK(format_schema_errors(validate_schema(schema, out)) == "");
  for (const char* key : {"compute", "network", "nccl", "name"}) {
    nlohmann::json b = default_file();
    b.erase(key);
    CHECK_FALSE(validate_schema(schema, b).empty());
    CHECK_THROWS_AS(parse_calibration(b.dump(), "b.json"), InputError);
  }
  nlohmann::json b = default_file();
  b["nccl"]["algorithms"]["ring"]["extra"] = 1;
  CHECK_FALSE(validate_schema(schema, b).empty());
  CHECK_THROWS_AS(parse_calibration(b.dump(), "b.json"), InputError);
}

TEST_CASE("load_calibration reads a file, a missing file is an input error") {
  CalibrationProfile p = load_calibration(tutti::testing::src("sim/calibration/default.json"));
  CHECK(p.file.find("default.json") != std::string::npos);
  CHECK_THROWS_AS(load_calibration("/nonexistent/profile.json"), InputError);
}
