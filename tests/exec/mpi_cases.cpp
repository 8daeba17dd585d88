// MPI tests of the execution backend (ctest label "mpi"): each case launches real ranks with
// mpirun (as root: the allow-run-as-root variables; more ranks than cores: oversubscribe;
// shared memory only). No timing assertions: values are checked for consistency, and the
// accuracy check compares a calibrated prediction with a measured median.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "../support/run.hpp"

using namespace tutti::testing;

namespace {

const char* kMpiEnv =
    "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
    "OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_oob_tcp_if_include=lo OPENBLAS_NUM_THREADS=1 ";

std::string tutti_bin() { return std::string(TUTTI_BINARY_DIR) + "/tutti"; }

/// `timeout 120 mpirun -np N tutti ARGS` with the test environment.
RunResult mpirun(int np, const std::string& args) {
  return run_shell(std::string("timeout 120 ") + kMpiEnv + "mpirun -np " + std::to_string(np) + " " + tutti_bin() +
                   " " + args);
}

nlohmann::json parse(const RunResult& r) {
  INFO("stderr: " << r.err.substr(0, 2000));
  REQUIRE(r.rc == 0);
  return r.json();
}

void check_bench_points(const nlohmann::json& c, int n) {
  const std::string op = c["op"];
  double factor = op == "all_reduce" ? 2.0 * (n - 1) / n : op == "sendrecv" ? 1.0 : double(n - 1) / n;
  CHECK(c["ranks"] == n);
  CHECK(c["bus_factor"].get<double>() == doctest::Approx(factor));
  REQUIRE(c["points"].size() >= 3);
  double prev = 0;
  for (const auto& p : c["points"]) {
    INFO(op << " size " << p["size_bytes"]);
    double size = p["size_bytes"], t = p["time_s"], algbw = p["algbw_GBps"], busbw = p["busbw_GBps"];
    CHECK(size > prev);
    prev = size;
    CHECK(t > 0);
    CHECK(t < 1.0);  // sane: a 1 MiB collective on one host takes far less than a second
    CHECK(p["time_max_s"].get<double>() >= t * 0.999);
    CHECK(algbw == doctest::Approx(size / t / 1e9).epsilon(1e-9));
    CHECK(busbw == doctest::Approx(algbw * factor).epsilon(1e-9));
    CHECK(p["wrong"] == 0);
  }
}

}  // namespace

TEST_CASE("bench: all_reduce on 2 ranks, nccl-tests columns and bus factor") {
  auto j = parse(mpirun(2, "--json exec bench -b 8 -e 1M -f 4 -w 2 -n 10 --op all_reduce"));
  CHECK(j["kind"] == "tutti.measurements");
  CHECK(j["environment"]["ranks"] == 2);
  CHECK(j["environment"]["mpi_library"].get<std::string>().find("MPI") != std::string::npos);
  CHECK(j["environment"]["openblas"]["threads"] == 1);
  REQUIRE(j["collectives"].size() == 1);
  const auto& c = j["collectives"][0];
  CHECK(c["backend"] == "mpi");
  CHECK(c["tier"] == "intra_node");
  CHECK(c["points"][0]["size_bytes"] == 8);
  CHECK(c["points"][0]["count"] == 2);
  check_bench_points(c, 2);
}

TEST_CASE("bench: every collective is correct on 3 and 4 ranks (odd and even groups)") {
  for (int np : {3, 4}) {
    auto j = parse(mpirun(np, "--json exec bench -b 64 -e 256K -f 8 -w 1 -n 3 --op all"));
    REQUIRE(j["collectives"].size() == 5);
    for (const auto& c : j["collectives"]) check_bench_points(c, np);
  }
}

TEST_CASE("bench: the GEMM and copy sweep runs on every rank at once") {
  auto j = parse(mpirun(2, "--json exec bench --gemm --m 32,64 --n 48 --k 16,80 --membound 64K:1M:x4 -n 3"));
  const auto& c = j["compute"];
  CHECK(c["device"] == "cpu");
  CHECK(c["ranks"] == 2);
  CHECK(c["library"].get<std::string>().find("OpenBLAS") != std::string::npos);
  REQUIRE(c["gemm"].size() == 4);
  for (const auto& p : c["gemm"]) {
    double flops = 2.0 * p["m"].get<double>() * p["n"].get<double>() * p["k"].get<double>();
    CHECK(p["flops"].get<double>() == flops);
    CHECK(p["time_s"].get<double>() > 0);
    CHECK(p["tflops"].get<double>() == doctest::Approx(flops / p["time_s"].get<double>() / 1e12).epsilon(1e-9));
  }
  REQUIRE(c["membound"].size() == 3);
  CHECK(c["membound"][2]["bytes"] == 1048576);
}

TEST_CASE("robustness: started without a launcher, or with a launcher that does not match") {
  // The caller asked for 2 ranks but ran the binary alone.
  auto r = run_shell(std::string(kMpiEnv) + tutti_bin() + " exec bench --expect-ranks 2 -b 8 -e 8");
  CHECK(r.rc == 2);
  CHECK(r.err.find("no MPI launcher") != std::string::npos);
  CHECK(r.err.find("mpirun -np 2") != std::string::npos);
  // A launcher announced 4 processes, but this MPI sees 1: every process would be rank 0 of 1.
  r = run_shell(std::string(kMpiEnv) + "PMI_SIZE=4 " + tutti_bin() + " exec bench -b 8 -e 8");
  CHECK(r.rc == 2);
  CHECK(r.err.find("rank 0 of 1") != std::string::npos);
}

TEST_CASE("robustness: a hung rank fails the job within the timeout") {
  auto t0 = std::chrono::steady_clock::now();
  auto r = mpirun(3, "exec bench -b 1K -e 64K --debug-hang-rank 1 --timeout 3s");
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r.rc != 0);
  CHECK(r.rc != 124);  // not ended by the test's own `timeout 120`
  CHECK(r.err.find("no progress for") != std::string::npos);
  CHECK(r.err.find("aborting the whole job") != std::string::npos);
  CHECK(wall < 60);  // generous: the watchdog fires after 3 s
}

TEST_CASE("robustness: a killed rank fails the job") {
  auto r = mpirun(3, "exec bench -b 1K -e 64K --debug-die-rank 2 --timeout 5s");
  CHECK(r.rc != 0);
  CHECK(r.rc != 124);
  CHECK(r.err.find("rank 2") != std::string::npos);
}
