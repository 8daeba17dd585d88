// `tutti calibrate MEASUREMENTS`: measurement documents read through their schema and the profile
// fitted to them (calibrate/measurements.hpp, calibrate/measurement_fit.hpp).
#include "tutti/calibrate/measurement_fit.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "tutti/calibrate/measurements.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;
using namespace tutti::calibrate;
using nlohmann::json;
using tutti::testing::src;

namespace {

json seed() {
  std::ifstream in(src("tests/fuzz/seeds/measurements/bench-and-replay.json"));
  return json::parse(in);
}

json gemm_point(int m, int n, int k, double t) {
  return {{"m", m},
          {"n", n},
          {"k", k},
          {"type", "fp32"},
          {"flops", 2.0 * m * n * k},
          {"time_s", t},
          {"time_median_s", t},
          {"time_min_s", t},
          {"time_max_s", t},
          {"tflops", 2.0 * m * n * k / t / 1e12}};
}

// A CPU compute sweep whose times follow t = flops / 1e11 + 2 us and a copy sweep at 20 GB/s.
json compute_doc() {
  json d = seed();
  d.erase("collectives");
  d.erase("replay");
  json& g = d["compute"]["gemm"];
  g = json::array();
  for (int m : {64, 256, 1024})
    for (int n : {128, 1024})
      for (int k : {64, 512}) g.push_back(gemm_point(m, n, k, 2.0 * m * n * k / 1e11 + 2e-6));
  json& mb = d["compute"]["membound"];
  mb = json::array();
  for (double b = 1 << 22; b <= double(1 << 28); b *= 4)
    mb.push_back({{"bytes", b},
                  {"time_s", b / 2e10 + 1e-6},
                  {"time_median_s", b / 2e10 + 1e-6},
                  {"bandwidth_GBps", 20}});
  return d;
}

std::string error_of(const json& doc) {
  try {
    read_measurements(doc, "m.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("calibrate: the embedded measurement schema is schemas/measurements.schema.json") {
  CHECK(measurements_schema() == load_schema(src("schemas/measurements.schema.json")));
}

TEST_CASE("calibrate: measurement documents are read through their schema, naming the key") {
  const Measurements m = read_measurements(seed(), "m.json");
  REQUIRE(m.collectives.size() == 1);
  CHECK(m.collectives[0].op == "all_reduce");
  CHECK(m.collectives[0].backend == "mpi");
  CHECK(m.collectives[0].tier == "intra_node");
  REQUIRE(m.collectives[0].points.size() == 1);
  CHECK(m.collectives[0].points[0].first == 1024);
  CHECK(m.collectives[0].points[0].second == doctest::Approx(1e-5));
  REQUIRE(m.compute);
  CHECK(m.compute->device == "cpu");
  REQUIRE(m.compute->gemm.size() == 1);
  CHECK(m.compute->gemm[0].m == 64);
  CHECK(m.compute->gemm[0].type == "fp32");
  REQUIRE(m.replay);
  CHECK(m.replay->device == "cpu");
  CHECK_FALSE(m.replay->serve_phase);

  json bad = seed();
  bad["collectives"][0]["points"][0]["time_s"] = "fast";
  CHECK(error_of(bad).find("collectives.0.points.0.time_s") != std::string::npos);
  bad = seed();
  bad["compute"]["gemm"][0]["m"] = 0;
  CHECK(error_of(bad).find("compute.gemm.0.m") != std::string::npos);
  bad = seed();
  bad["surprise"] = 1;
  CHECK(error_of(bad).find("surprise") != std::string::npos);
  bad = seed();
  bad.erase("collectives");
  bad.erase("compute");
  bad.erase("replay");
  CHECK(error_of(bad).find("no collectives, compute or replay section") != std::string::npos);
  // A stage-0 rank records one time per op of its class.
  bad = seed();
  bad["replay"]["result"]["classes"] = {{{"stage", 0}, {"ops", {{{"kind", "gemm"}}}}}};
  bad["replay"]["result"]["ranks"] = {{{"stage", 0}, {"op_time_s", {1e-3, 2e-3}}}};
  CHECK(error_of(bad).find("replay.result.ranks.0.op_time_s") != std::string::npos);
  bad["replay"]["result"]["ranks"] = {{{"stage", 0}, {"op_time_s", {1e-3}}},
                                      {{"stage", 0}, {"op_time_s", {3e-3}}}};
  const Measurements r = read_measurements(bad, "m.json");
  REQUIRE(r.replay->ops.size() == 1);
  CHECK(r.replay->ops[0].time_s == doctest::Approx(2e-3));  // averaged over stage 0's ranks
}

TEST_CASE("calibrate: nnls_rel keeps coefficients non-negative") {
  // y = 2 x0 + 3 x1 exactly: recovered.
  std::vector<std::vector<double>> X = {{1, 0}, {0, 1}, {1, 1}, {2, 1}};
  std::vector<double> y = {2, 3, 5, 7}, t = y;
  auto a = nnls_rel(X, y, t);
  CHECK(a[0] == doctest::Approx(2));
  CHECK(a[1] == doctest::Approx(3));
  // y = 5 - x0 exactly: the unconstrained fit's x0 coefficient is negative; it is dropped and the
  // constant column carries the fit.
  X = {{1, 1}, {2, 1}, {3, 1}, {4, 1}};
  y = {4, 3, 2, 1};
  a = nnls_rel(X, y, y);
  CHECK(a[0] == 0);
  CHECK(a[1] > 0);
}

TEST_CASE("calibrate: a profile fitted to GEMM and copy sweeps loads, and says what it fitted") {
  const MeasurementFit fit =
      fit_measurements({read_measurements(compute_doc(), "c.json")}, nullptr, "test-profile");
  CHECK(fit.profile.name == "test-profile");
  CHECK_FALSE(fit.network_needs_cluster);
  REQUIRE(fit.report.contains("gemm"));
  REQUIRE(fit.report.contains("membound"));
  CHECK(fit.report["gemm"]["samples"] == 12);
  CHECK(fit.report["gemm"]["rms_error_pct"].get<double>() < 5);
  CHECK(fit.report["membound"]["peak_Bps"].get<double>() == doctest::Approx(2e10).epsilon(0.1));
  CHECK(fit.profile.source.find("tutti calibrate from c.json") == 0);
  json j;
  to_json(j, fit.profile);
  CHECK_NOTHROW(parse_calibration(j.dump(), "fitted"));
  // Collective benches without the cluster they ran on: the network keeps the defaults.
  json both = compute_doc();
  both["collectives"] = seed()["collectives"];
  CHECK(fit_measurements({read_measurements(both, "b.json")}, nullptr, "x").network_needs_cluster);
}

TEST_CASE("calibrate: fit_network fits the link efficiency of a bench on its cluster") {
  const Cluster c = load_cluster(src("topologies/cpu-local.json"));
  if (c.gpus() < 2) return;
  CollectiveSweep s;
  s.op = "all_reduce";
  s.backend = "mpi";
  s.tier = "intra_node";
  s.ranks = 2;
  s.hosts = 1;
  for (double b = 1024; b <= 64.0 * 1024 * 1024; b *= 4) s.points.emplace_back(b, 2e-5 + b / 5e9);
  CalibrationProfile prof = default_calibration();
  json report = json::array();
  fit_network({s}, c, prof, report);
  REQUIRE(report.size() == 1);
  CHECK(report[0]["backend"] == "mpi");
  CHECK(report[0]["tier"] == "intra_node");
  const double eff = report[0]["bandwidth_efficiency"].get<double>();
  CHECK(eff > 0);
  CHECK(eff <= 1);
  CHECK(report[0]["points"] == s.points.size());
}

TEST_CASE("calibrate: nothing to fit, or decode steps with GEMM sweeps, is an input error") {
  json replay_only = seed();
  replay_only.erase("collectives");
  replay_only.erase("compute");
  CHECK_THROWS_AS(fit_measurements({read_measurements(replay_only, "r.json")}, nullptr, "x"),
                  InputError);
}
