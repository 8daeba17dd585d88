// MPI tests of the execution backend (ctest label "mpi"): each case launches real ranks with
// mpirun (as root: the allow-run-as-root variables; more ranks than cores: oversubscribe;
// shared memory only). No timing assertions: values are checked for consistency, and the
// accuracy check compares a calibrated prediction with a measured median.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>

#include "../support/run.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti::testing;

namespace {

const char* kMpiEnv =
    "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
    "OMPI_MCA_rmaps_base_oversubscribe=1 "
    "OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_oob_tcp_if_include=lo "
    "OPENBLAS_NUM_THREADS=1 ";

std::string tutti_bin() {
  return std::string(TUTTI_BINARY_DIR) + "/tutti";
}

/// `timeout 120 mpirun -np N tutti ARGS` with the test environment.
RunResult mpirun(int np, const std::string& args) {
  return run_shell(std::string("timeout 120 ") + kMpiEnv + "mpirun -np " + std::to_string(np) +
                   " " + tutti_bin() + " " + args);
}

/// Parses a measurements document and checks it against schemas/measurements.schema.json.
nlohmann::json parse(const RunResult& r) {
  INFO("stderr: " << r.err.substr(0, 2000));
  REQUIRE(r.rc == 0);
  nlohmann::json j = r.json();
  static const nlohmann::json schema = tutti::load_schema(src("schemas/measurements.schema.json"));
  auto errs = tutti::validate_schema(schema, j);
  CHECK_MESSAGE(errs.empty(), tutti::format_schema_errors(errs));
  return j;
}

void check_bench_points(const nlohmann::json& c, int n) {
  const std::string op = c["op"];
  double factor = op == "all_reduce" ? 2.0 * (n - 1) / n
                  : op == "sendrecv" ? 1.0
                                     : double(n - 1) / n;
  CHECK(c["ranks"] == n);
  CHECK(c["bus_factor"].get<double>() == doctest::Approx(factor));
  REQUIRE(c["points"].size() >= 3);
  double prev = 0;
  for (const auto& p : c["points"]) {
    INFO(op << " size " << p["size_bytes"]);
    double size = p["size_bytes"], t = p["time_s"], algbw = p["algbw_GBps"],
           busbw = p["busbw_GBps"];
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
  auto j = parse(
      mpirun(2, "--json exec bench --gemm --m 32,64 --n 48 --k 16,80 --membound 64K:1M:x4 -n 3"));
  const auto& c = j["compute"];
  CHECK(c["device"] == "cpu");
  CHECK(c["ranks"] == 2);
  CHECK(c["library"].get<std::string>().find("OpenBLAS") != std::string::npos);
  REQUIRE(c["gemm"].size() == 4);
  for (const auto& p : c["gemm"]) {
    double flops = 2.0 * p["m"].get<double>() * p["n"].get<double>() * p["k"].get<double>();
    CHECK(p["flops"].get<double>() == flops);
    CHECK(p["time_s"].get<double>() > 0);
    CHECK(p["tflops"].get<double>() ==
          doctest::Approx(flops / p["time_s"].get<double>() / 1e12).epsilon(1e-9));
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
  CHECK(r.rc == 3);  // the watchdog's own exit code, not 70 (a bug)
  CHECK(r.err.find("no progress for") != std::string::npos);
  CHECK(r.err.find("aborting the whole job") != std::string::npos);
  // The hung rank is named, with its host and its last op, as the rank behind the others.
  CHECK_MESSAGE(r.err.find("stuck: rank 1 (host ") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("(the rank behind the others)") != std::string::npos, r.err);
  CHECK(wall < 60);  // generous: the watchdog fires after 3 s
}

TEST_CASE("robustness: a killed rank fails the job") {
  auto r = mpirun(3, "exec bench -b 1K -e 64K --debug-die-rank 2 --timeout 5s");
  CHECK(r.rc != 0);
  CHECK(r.rc != 124);
  CHECK(r.err.find("rank 2") != std::string::npos);
}

namespace {

/// The scaled-down tiny workload used by the replay tests (seconds per iteration on one core).
const char* kTiny =
    "--workload models/tiny-gpt.json --cluster topologies/cpu-local.json "
    "--scale-down layers=2,hidden=256,seq=256,vocab=8192,batch=2,micro_batch=1";
/// For the accuracy check: two micro-batches per rank, so that the gradient all-reduce (which a
/// CPU core cannot overlap with its own compute, unlike a GPU) stays a small part of the step,
/// while an iteration stays well under the kernel's real-time throttling period (1 s, of which
/// 50 ms are given back to other tasks): the median iteration then misses those gaps.
const char* kTinyAccum =
    "--workload models/tiny-gpt.json --cluster topologies/cpu-local.json "
    "--scale-down layers=2,hidden=256,seq=256,vocab=8192,batch=4,micro_batch=1";

/// Real-time priority for the measuring ranks when this machine allows it (root, RT budget):
/// other jobs on a shared CI machine then cannot preempt them mid-op. Empty when not allowed.
std::string rt_prefix() {
  static const std::string p = run_shell("chrt -f 1 true").rc == 0 ? "chrt -f 1 " : "";
  return p;
}

/// OpenBLAS picks a slow generic kernel on CPUs newer than its tables; pin the AVX2 one when
/// the CPU has AVX2 and the environment did not choose.
std::string blas_env() {
  if (std::getenv("OPENBLAS_CORETYPE")) return "";
  return run_shell("grep -qw avx2 /proc/cpuinfo").rc == 0 ? "OPENBLAS_CORETYPE=Haswell " : "";
}

RunResult mpirun_rt(int np, const std::string& args) {
  return run_shell(std::string("timeout 150 ") + kMpiEnv + blas_env() + "mpirun -np " +
                   std::to_string(np) + " " + rt_prefix() + tutti_bin() + " " + args);
}

}  // namespace

TEST_CASE(
    "replay: the tiny workload on 2 ranks (tp=2), collectives verified, per-op times on all "
    "ranks") {
  auto j = parse(mpirun_rt(2, std::string("--json exec replay ") + kTiny +
                                  " --parallel tp=2,pp=1,dp=1 --iterations 3 --warmup 1"));
  const auto& rep = j["replay"];
  CHECK(rep["scale_down"]["layers"]["from"] == 12);
  CHECK(rep["scale_down"]["layers"]["to"] == 2);
  CHECK(rep["scale_down"]["hidden"]["to"] == 256);
  CHECK(rep["scale_down"]["heads"]["to"] == 4);
  const auto& r = rep["result"];
  CHECK(r["world"] == 2);
  CHECK(r["check"]["ops"].get<int>() > 0);
  CHECK(r["check"]["wrong_elements"] == 0);
  REQUIRE(r["ranks"].size() == 2);
  const auto& ops = r["classes"][0]["ops"];
  bool tp_coll = false;
  for (const auto& o : ops)
    if (o["kind"] == "collective" && o["group"] == "tp") tp_coll = true;
  CHECK(tp_coll);
  for (const auto& rk : r["ranks"]) {
    CHECK(rk["op_time_s"].size() == ops.size());
    for (const auto& t : rk["op_time_s"]) CHECK(t.get<double>() >= 0);
  }
  CHECK(r["iteration_time_s"].get<double>() > 0);
  CHECK(r["iteration_times_s"].size() == 3);
  CHECK(r["by_kind_s"]["gemm"].get<double>() > 0);
}

TEST_CASE("replay: pipeline stages exchange activations (pp=2, send/recv verified)") {
  auto j = parse(mpirun_rt(2, std::string("--json exec replay ") + kTiny +
                                  " --parallel tp=1,pp=2,dp=1 --iterations 2 --warmup 0"));
  const auto& r = j["replay"]["result"];
  CHECK(r["check"]["wrong_elements"] == 0);
  CHECK(r["classes"].size() == 2);
  CHECK(r["by_kind_s"].contains("send"));
}

TEST_CASE("replay: a world that does not match the layout is refused") {
  auto r = mpirun(2, std::string("exec replay ") + kTiny + " --parallel tp=2,pp=2,dp=1");
  CHECK(r.rc == 2);
  CHECK(r.err.find("needs 4 MPI ranks") != std::string::npos);
}

TEST_CASE("replay: a rank that hangs mid-run fails the job within the timeout") {
  auto r = mpirun(2, std::string("exec replay ") + kTiny +
                         " --parallel tp=2,pp=1,dp=1 --debug-hang-rank 0 --timeout 3s");
  CHECK(r.rc == 3);
  CHECK(r.err.find("no progress for") != std::string::npos);
  // Rank 0 is named: as the rank behind, or (when rank 1 had not reached a collective yet on a
  // loaded machine) among every rank's state.
  CHECK_MESSAGE(r.err.find("rank 0 (host ") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("last op \"") != std::string::npos, r.err);
}

// The CI check of issue 10: calibrate from an MPI bench and a GEMM sweep, replay a small workload
// with 2 ranks, and compare the calibrated prediction of the iteration time with the measured
// median. An accuracy check (not a timing assertion): both sides are measured on this machine,
// seconds apart; the GEMM sweep runs before and after the replay so that a drift of the machine's
// speed between them averages out. This VM's speed also fluctuates by +-15% from second to second
// (other tenants of the host, which no priority inside the VM can stop). The check runs once (no
// retry): a miss is judged unless the machine itself was measured to change speed during the
// sequence, i.e. the two GEMM sweeps that bracket the replay disagree by more than 10% in total
// time (or the load is far above the cores), and then the figure is reported, with that cause.
namespace {
struct Attempt {
  double err_pct = 1e9;
  double drift_pct = 0;  ///< GEMM sweep after the replay against before it, total time.
  int validate_rc = -1;
  std::string dir;
};
Attempt calibrate_and_validate() {
  Attempt a;
  a.dir = temp_dir();
  const std::string& dir = a.dir;
  // A generic sweep plus the GEMM shapes and copy sizes the replay will run.
  const std::string sweep =
      "exec bench --gemm --m 64,256,1024 --n 256,2048 --k 64,256,1024 --workload "
      "models/tiny-gpt.json "
      "--scale-down layers=2,hidden=256,seq=256,vocab=8192,batch=4,micro_batch=1 --parallel "
      "tp=1,pp=1,dp=2,zero=0 "
      "--membound 4M:256M:x4 -n 5 -o ";
  REQUIRE(mpirun_rt(2, sweep + dir + "/gemm1.json").rc == 0);
  REQUIRE(mpirun_rt(
              2, "exec bench --op all_reduce -b 1K -e 32M -f 4 -w 3 -n 20 -o " + dir + "/coll.json")
              .rc == 0);
  auto rep = mpirun_rt(2, std::string("exec replay ") + kTinyAccum +
                              " --parallel tp=1,pp=1,dp=2,zero=0 --iterations 15 -o " + dir +
                              "/replay.json");
  INFO("replay stderr: " << rep.err.substr(0, 2000));
  REQUIRE(rep.rc == 0);
  REQUIRE(mpirun_rt(2, sweep + dir + "/gemm2.json").rc == 0);
  auto cal = run_tutti({"calibrate", dir + "/gemm1.json", dir + "/gemm2.json", dir + "/coll.json",
                        "--cluster", "topologies/cpu-local.json", "-o", dir + "/profile.json"});
  INFO("calibrate stderr: " << cal.err);
  REQUIRE(cal.rc == 0);
  auto v = run_tutti({"--json", "validate", "--measurements", dir + "/replay.json", "--calibration",
                      dir + "/profile.json", "--tolerance", "15"});
  INFO("validate: " << v.out << v.err);
  REQUIRE((v.rc == 0 || v.rc == 1));
  auto j = v.json();
  // The output contract (schemas/replay_validation_result.schema.json).
  const auto errors = tutti::validate_schema(
      tutti::load_schema(src("schemas/replay_validation_result.schema.json")), j);
  CHECK_MESSAGE(errors.empty(), tutti::format_schema_errors(errors));
  a.err_pct = j["iteration"]["error_pct"];
  a.validate_rc = v.rc;
  // How much the machine's speed moved between the sweeps before and after the replay.
  double t1 = 0, t2 = 0;
  {
    std::ifstream f1(dir + "/gemm1.json"), f2(dir + "/gemm2.json");
    const auto g1 = nlohmann::json::parse(f1).at("compute").at("gemm");
    const auto g2 = nlohmann::json::parse(f2).at("compute").at("gemm");
    REQUIRE(g1.size() == g2.size());
    for (std::size_t i = 0; i < g1.size(); ++i) {
      t1 += g1[i].at("time_s").get<double>();
      t2 += g2[i].at("time_s").get<double>();
    }
  }
  REQUIRE(t1 > 0);
  a.drift_pct = (t2 / t1 - 1) * 100;
  MESSAGE("calibrated prediction vs measured median iteration time: "
          << a.err_pct << "% (predicted " << j["iteration"]["predicted_s"].get<double>() * 1e3
          << " ms, measured " << j["iteration"]["measured_median_s"].get<double>() * 1e3 << " ms)");
  return a;
}
}  // namespace

TEST_CASE(
    "calibrate + validate: calibrated prediction within 15% of the measured median (2 ranks)") {
  const Attempt a = calibrate_and_validate();
  MESSAGE("machine speed drift across the replay (GEMM sweeps after/before): " << a.drift_pct
                                                                               << "%");
  // On a host so overloaded that the ranks cannot keep their cores (1-minute load above 4 per
  // core; the CI VM reached 24 on 2 cores while other suites ran), the measured side is not a
  // measurement of this machine: report the figure as a warning instead of failing main.
  double load = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0;
    std::fclose(f);
  }
  const double per_core = load / std::max(1u, std::thread::hardware_concurrency());
  if (std::fabs(a.err_pct) > 15.0 && (per_core > 4.0 || std::fabs(a.drift_pct) > 10.0)) {
    WARN_MESSAGE(false,
                 "accuracy check not judged: the machine changed speed during the "
                 "measurement (GEMM sweeps differ by "
                     << a.drift_pct << "%, load " << load << ", " << per_core
                     << " per core); error " << a.err_pct << "%");
  } else {
    CHECK(std::fabs(a.err_pct) <= 15.0);
    CHECK(a.validate_rc == 0);
  }
  const std::string& dir = a.dir;
  // The same comparison is also available live, in one command (2 ranks, fewer iterations).
  auto live = mpirun_rt(2, std::string("--json validate --live ") + kTinyAccum +
                               " --parallel tp=1,pp=1,dp=2,zero=0 --iterations 3 --calibration " +
                               dir + "/profile.json");
  INFO("live: " << live.err.substr(0, 2000));
  REQUIRE(live.rc == 0);
  auto lj = live.json();
  CHECK(lj["iteration"]["measured_median_s"].get<double>() > 0);
  CHECK(lj["replay"]["replay"]["result"]["check"]["wrong_elements"] == 0);
}
