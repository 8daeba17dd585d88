// fitted_to in calibration profiles, and refitting the default profile from its microbenchmark
// files (sim/calibration_fit.hpp, `tutti calibrate defaults`).
#include "tutti/calibrate/calibration_fit.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/topologies/catalog.hpp"

using namespace tutti;
using tutti::testing::run_tutti;
using tutti::testing::src;

namespace {

nlohmann::json default_file() {
  std::ifstream in(src("sim/calibration/default.json"));
  return nlohmann::json::parse(in);
}

std::string error_of(const nlohmann::json& j) {
  try {
    parse_calibration(j.dump(), "bad.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const FittedTo* find_fitted(const CalibrationProfile& p, const std::string& path) {
  for (const auto& f : p.fitted_to)
    if (f.path == path) return &f;
  return nullptr;
}

void write(const std::string& path, const nlohmann::json& j) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << j.dump(2);
}

}  // namespace

TEST_CASE("fitted_to is read strictly, kept with its key path and written back") {
  nlohmann::json j = default_file();
  j["compute"]["attention"]["fitted_to"] = {"case:llama-7b-a100", "source:some-paper",
                                            "file:sim/calibration/microbench/gemm-mamf.json"};
  j["nccl"]["protocols"]["ll"]["fitted_to"] = {"source:nccl-tuning"};
  CalibrationProfile p = parse_calibration(j.dump(), "ok.json");
  const FittedTo* a = find_fitted(p, "compute.attention");
  REQUIRE(a != nullptr);
  CHECK(a->targets == std::vector<std::string>{"case:llama-7b-a100", "source:some-paper",
                                               "file:sim/calibration/microbench/gemm-mamf.json"});
  REQUIRE(find_fitted(p, "nccl.protocols.ll") != nullptr);
  // Round trip: to_json puts each back where it was read.
  nlohmann::json out;
  to_json(out, p);
  CHECK(out["compute"]["attention"]["fitted_to"] == j["compute"]["attention"]["fitted_to"]);
  CHECK(out["nccl"]["protocols"]["ll"]["fitted_to"] == j["nccl"]["protocols"]["ll"]["fitted_to"]);
  CalibrationProfile q = parse_calibration(out.dump(), "roundtrip.json");
  CHECK(q.fitted_to.size() == p.fitted_to.size());
}

TEST_CASE("fitted_to errors name the file and key path and say what was expected") {
  struct Bad {
    nlohmann::json value;
    std::string needle;
  };
  const std::vector<Bad> bads = {
      {"file:sim/calibration/microbench/gemm-mamf.json", "expected a non-empty array"},
      {nlohmann::json::array(), "expected a non-empty array"},
      {{42}, "compute.gemm.fitted_to.0"},
      {{"paper:foo"}, "compute.gemm.fitted_to.0"},
      {{"case:"}, "compute.gemm.fitted_to.0"},
      {{"file:sim/calibration/microbench/no-such-file.json"},
       "names an existing file of the repository"},
      {{"file:../outside.json"}, "stays inside the repository"},
      {{"file:/etc/passwd"}, "relative to the repository root"},
  };
  for (const auto& b : bads) {
    nlohmann::json j = default_file();
    j["compute"]["gemm"]["fitted_to"] = b.value;
    std::string w = error_of(j);
    CHECK_MESSAGE(w.find("bad.json") != std::string::npos, w);
    CHECK_MESSAGE(w.find("compute.gemm.fitted_to") != std::string::npos, w);
    CHECK_MESSAGE(w.find(b.needle) != std::string::npos, b.value.dump() << " -> " << w);
  }
  // "fitted_to" on the devices object is not taken for a device id.
  nlohmann::json j = default_file();
  j["compute"]["devices"]["fitted_to"] = {"source:x"};
  CalibrationProfile p = parse_calibration(j.dump(), "ok.json");
  CHECK(p.device("fitted_to") == nullptr);
  CHECK(find_fitted(p, "compute.devices") != nullptr);
}

TEST_CASE("the default profile names the data of every fitted constant") {
  const CalibrationProfile& p = default_calibration();
  for (const char* path :
       {"compute.gemm", "compute.devices.h100-sxm-80gb.gemm_efficiency",
        "compute.devices.h200-sxm-141gb.gemm_efficiency", "network.tiers.nvlink", "nccl"}) {
    const FittedTo* f = find_fitted(p, path);
    REQUIRE_MESSAGE(f != nullptr, path);
    for (const auto& t : f->targets) {
      CHECK_MESSAGE(t.rfind("file:sim/calibration/microbench/", 0) == 0, t);
      CHECK(std::filesystem::is_regular_file(src(t.substr(5))));
    }
  }
}

TEST_CASE("fit_defaults refits the shipped constants from the microbenchmark files") {
  const std::string root = TUTTI_SOURCE_DIR;
  std::vector<std::string> files = microbench_files(root);
  REQUIRE(files.size() >= 2);
  DefaultsFit fit = fit_defaults(default_calibration(), files, root);
  REQUIRE(fit.fits.size() >= 5);
  for (const auto& f : fit.fits) {
    CHECK_MESSAGE(f.declared, f.constant);
    CHECK_MESSAGE(f.fitted == doctest::Approx(f.current).epsilon(0.005), f.constant);
    CHECK(f.fitted > 0.3);
    CHECK(f.fitted <= 1.0);
  }
  // Physically sane: the H100 BF16 asymptote is 0.7-0.9 of dense peak.
  CHECK(fit.profile.gemm.flops.eff_max > 0.7);
  CHECK(fit.profile.gemm.flops.eff_max < 0.9);
  // The refitted model reproduces the measured best over the search grid and exceeds it nowhere
  // on the grid (through op_time_s itself): the largest cube is its fastest shape.
  auto tflops = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    Op op;
    op.kind = OpKind::Gemm;
    op.dtype = DType::BF16;
    op.m = m;
    op.n = n;
    op.k = k;
    return 2.0 * m * n * k / op_time_s(op, Catalog::builtin().gpu("h100-sxm-80gb"), fit.profile) /
           1e12;
  };
  CHECK(tflops(20224, 20224, 20224) == doctest::Approx(794.5).epsilon(0.002));
  CHECK(tflops(2048, 2048, 13312) < 794.5);
  CHECK(tflops(8192, 8192, 8192) < 794.5 * 1.002);
  // Fitted points agree; check points are predicted too (finite, positive).
  bool saw_check = false;
  for (const auto& p : fit.points) {
    CHECK(p.predicted > 0);
    if (p.fits.empty()) saw_check = true;
    if (p.id == "nvls-8" || p.id == "h100-sxm-bf16")
      CHECK(p.predicted == doctest::Approx(p.measured).epsilon(0.03));
  }
  CHECK(saw_check);
  // A different start converges to the same values (the fit does not depend on the file's numbers).
  CalibrationProfile off = default_calibration();
  off.gemm.flops.eff_max = 0.3;
  off.tiers[static_cast<int>(Tier::NVLink)].bandwidth_efficiency = 0.5;
  DefaultsFit again = fit_defaults(off, files, root);
  for (std::size_t i = 0; i < fit.fits.size(); ++i)
    CHECK(again.fits[i].fitted == doctest::Approx(fit.fits[i].fitted).epsilon(1e-6));
}

TEST_CASE("bad microbenchmark files are input errors naming file and key path") {
  const std::string root = tutti::testing::temp_dir();
  const std::string file = "sim/calibration/microbench/x.json";
  nlohmann::json ok = {
      {"kind", "gemm"},
      {"source_key", "k"},
      {"source", "s"},
      {"points",
       {{{"id", "a"},
         {"gpu", "h100-sxm-80gb"},
         {"dtype", "bf16"},
         {"m", 4096},
         {"n", 4096},
         {"k", 4096},
         {"tflops", 700.0},
         {"source", "s"}}}},
      {"fits", {{{"constant", "compute.gemm.flops_efficiency_max"}, {"points", {"a"}}}}}};
  write(root + "/" + file, ok);
  DefaultsFit fit = fit_defaults(default_calibration(), microbench_files(root), root);
  REQUIRE(fit.fits.size() == 1);
  CHECK(fit.fits[0].rms_log_error < 1e-4);
  CHECK_FALSE(fit.fits[0].declared);  // the default profile names gemm-mamf.json, not x.json

  auto expect = [&](nlohmann::json j, const std::string& needle) {
    write(root + "/" + file, j);
    try {
      fit_defaults(default_calibration(), {file}, root);
      FAIL("no error for " << needle);
    } catch (const InputError& e) {
      std::string w = e.what();
      CHECK_MESSAGE(w.find("x.json") != std::string::npos, w);
      CHECK_MESSAGE(w.find(needle) != std::string::npos, w);
    }
  };
  nlohmann::json j = ok;
  j["fits"][0]["constant"] = "compute.gemm.half_k";
  expect(j, "fits.0.constant");
  j = ok;
  j["fits"][0]["points"] = {"nope"};
  expect(j, "fits.0.points.0");
  j = ok;
  j["points"][0]["bogus"] = 1;
  expect(j, "bogus");
  j = ok;
  j["points"][0]["gpu"] = "h900";
  expect(j, "h900");
  j = ok;
  j["kind"] = "collective";
  j["cluster"] = "topologies/none.json";
  j["points"] = {{{"id", "a"},
                  {"op", "all_reduce"},
                  {"algo", "ring"},
                  {"proto", "simple"},
                  {"gpus", 8},
                  {"bytes", "1GiB"},
                  {"source", "s"}}};
  expect(j, "exactly one of \"busbw\", \"algbw\" and \"time\"");
}

TEST_CASE(
    "tutti calibrate defaults --check passes on the shipped profile and fails on a drifted one") {
  auto r = run_tutti({"calibrate", "defaults", "--check"});
  CHECK_MESSAGE(r.rc == 0, r.out << r.err);
  CHECK(r.out.find("compute.gemm.flops_efficiency_max") != std::string::npos);
  CHECK(r.out.find("check: OK") != std::string::npos);

  nlohmann::json j = default_file();
  j["compute"]["gemm"]["flops_efficiency_max"] = 0.6;
  j["network"]["tiers"]["nvlink"].erase("fitted_to");
  std::string path = tutti::testing::temp_dir() + "/drifted.json";
  std::ofstream(path) << j.dump(2);
  auto bad = run_tutti({"calibrate", "defaults", "--check", "--profile", path});
  CHECK(bad.rc == 1);
  CHECK(bad.out.find("check: FAILED") != std::string::npos);
  CHECK(bad.out.find("compute.gemm.flops_efficiency_max is 0.6") != std::string::npos);
  CHECK(bad.out.find("network.tiers.nvlink") != std::string::npos);

  auto js = run_tutti({"calibrate", "defaults", "--json"});
  REQUIRE(js.rc == 0);
  nlohmann::json out = js.json();
  CHECK(out["fits"].size() >= 5);
  CHECK(out["points"].size() >= 10);

  auto nofolder = run_tutti({"calibrate", "defaults", "--root", tutti::testing::temp_dir()});
  CHECK(nofolder.rc == 2);
  CHECK(nofolder.err.find("sim/calibration") != std::string::npos);
}
