// The measurements reader and schemas/measurements.schema.json agree: a valid document passes
// both, and each mutant (unknown key, missing key, wrong type) is rejected by both.
#include "tutti/exec/measurements.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"

using nlohmann::json;

namespace {

json valid_doc() {
  return json::parse(R"({
    "kind": "tutti.measurements", "version": 1, "tool": "tutti exec bench",
    "environment": {"ranks": 2, "hosts": [{"name": "h", "ranks": 2}]},
    "collectives": [{"op": "all_reduce", "backend": "mpi", "dtype": "fp32", "ranks": 2, "hosts": 1,
                     "tier": "intra_node", "warmup": 1, "iters": 5, "bus_factor": 1.0,
                     "points": [{"size_bytes": 1024, "count": 256, "time_s": 1e-5, "time_max_s": 1.1e-5,
                                 "algbw_GBps": 0.1, "busbw_GBps": 0.1, "wrong": 0}]}],
    "compute": {"device": "cpu", "library": "OpenBLAS", "model": "x", "ranks": 2, "warmup": 1, "iters": 3,
                "gemm": [{"m": 64, "n": 64, "k": 64, "type": "fp32", "flops": 524288, "time_s": 1e-5,
                          "time_median_s": 1e-5, "time_min_s": 9e-6, "time_max_s": 1.2e-5, "tflops": 0.05}],
                "membound": [{"bytes": 4194304, "time_s": 2e-4, "time_median_s": 2e-4, "bandwidth_GBps": 20}]},
    "replay": {"workload": "models/tiny-gpt.json", "cluster": "topologies/cpu-local.json", "layout": "tp=2",
               "scale_down": {"layers": {"from": 12, "to": 2}}, "overrides": ["model.layers=2"],
               "result": {"device": "cpu", "compute_library": "OpenBLAS", "comm_library": "MPI", "world": 2,
                          "warmup": 1, "iterations": 3, "iteration_time_s": 0.1, "iteration_min_s": 0.09,
                          "iteration_max_s": 0.2, "iteration_times_s": [0.1, 0.09, 0.2],
                          "check": {"ops": 4, "wrong_elements": 0}, "by_kind_s": {"gemm": 0.05},
                          "classes": [], "ranks": []}}
  })");
}

bool parser_accepts(const json& j) {
  try {
    tutti::exec::parse_measurements(j.dump(), "m.json");
    return true;
  } catch (const tutti::InputError&) {
    return false;
  }
}

}  // namespace

TEST_CASE("measurements: the reader and the schema agree") {
  const json schema = tutti::load_schema(tutti::testing::src("schemas/measurements.schema.json"));
  json doc = valid_doc();
  CHECK(tutti::validate_schema(schema, doc).empty());
  CHECK(parser_accepts(doc));
  auto m = tutti::exec::parse_measurements(doc.dump(), "m.json");
  CHECK(m.collectives.size() == 1);
  CHECK(m.collectives[0].points[0].busbw_Bps == doctest::Approx(1e8));
  CHECK(m.compute->gemm[0].time_median_s == doctest::Approx(1e-5));
  CHECK(m.replay->iteration_time_s == doctest::Approx(0.1));

  // Mutants: every object level gets an unknown key, loses a required key, gets a wrong type.
  const std::vector<std::string> objects = {
      "",         "/collectives/0",  "/collectives/0/points/0",
      "/compute", "/compute/gemm/0", "/compute/membound/0",
      "/replay",  "/replay/result",  "/replay/result/check"};
  int mutants = 0;
  for (const auto& path : objects) {
    const json::json_pointer ptr(path);
    {  // unknown key
      json j = doc;
      j[ptr]["no_such_key"] = 1;
      CHECK_MESSAGE(!tutti::validate_schema(schema, j).empty(), path);
      CHECK_MESSAGE(!parser_accepts(j), path);
      ++mutants;
    }
    for (const auto& item : doc[ptr].items()) {
      // Named copies, not a structured binding: clang 14 cannot capture one in CHECK_MESSAGE.
      const std::string key = item.key();
      const json value = item.value();
      json missing = doc;
      missing[ptr].erase(key);
      bool schema_ok = tutti::validate_schema(schema, missing).empty();
      CHECK_MESSAGE(schema_ok == parser_accepts(missing), path << "/" << key << " removed");
      json typed = doc;
      typed[ptr][key] = value.is_string() ? json(12345) : json("a string");
      CHECK_MESSAGE(!tutti::validate_schema(schema, typed).empty(),
                    path << "/" << key << " retyped");
      CHECK_MESSAGE(!parser_accepts(typed), path << "/" << key << " retyped");
      mutants += 2;
    }
  }
  CHECK(mutants > 60);
}

TEST_CASE("measurements: a file without any section, or of another kind, is refused") {
  json j = valid_doc();
  j.erase("collectives");
  j.erase("compute");
  j.erase("replay");
  CHECK_THROWS_AS(tutti::exec::parse_measurements(j.dump(), "m.json"), tutti::InputError);
  j = valid_doc();
  j["kind"] = "tutti.workload";
  CHECK_THROWS_AS(tutti::exec::parse_measurements(j.dump(), "m.json"), tutti::InputError);
}
