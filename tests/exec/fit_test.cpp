// Unit tests of exec/: nccl-tests bus factors, sweep parsing, launcher checks, the fits.
#include "tutti/exec/fit.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "tutti/core/error.hpp"
#include "tutti/exec/bench.hpp"
#include "tutti/exec/session.hpp"

using namespace tutti;
using namespace tutti::exec;

TEST_CASE("exec: bus factors are nccl-tests' (doc/PERFORMANCE.md)") {
  CHECK(bus_factor(CollOp::AllReduce, 2) == doctest::Approx(1.0));
  CHECK(bus_factor(CollOp::AllReduce, 4) == doctest::Approx(1.5));
  CHECK(bus_factor(CollOp::AllReduce, 8) == doctest::Approx(1.75));
  CHECK(bus_factor(CollOp::AllGather, 4) == doctest::Approx(0.75));
  CHECK(bus_factor(CollOp::ReduceScatter, 8) == doctest::Approx(0.875));
  CHECK(bus_factor(CollOp::AllToAll, 2) == doctest::Approx(0.5));
  CHECK(bus_factor(CollOp::SendRecv, 16) == doctest::Approx(1.0));
  CHECK(parse_coll_op("reduce_scatter") == CollOp::ReduceScatter);
  CHECK_THROWS_AS(parse_coll_op("allreduce"), InputError);
}

TEST_CASE("exec: sizes and sweeps") {
  CHECK(parse_nccl_size("8", "-b") == 8);
  CHECK(parse_nccl_size("128M", "-e") == 128.0 * 1024 * 1024);
  CHECK(parse_nccl_size("64K", "-e") == 65536);
  CHECK(parse_nccl_size("1G", "-e") == 1073741824.0);
  CHECK(parse_nccl_size("64MiB", "-e") == 64.0 * 1024 * 1024);
  CHECK_THROWS_AS(parse_nccl_size("12Q", "-e"), InputError);
  CHECK(parse_sweep("64:1024:x2", "--mnk", false) == std::vector<double>{64, 128, 256, 512, 1024});
  CHECK(parse_sweep("100,200,300", "--m", false) == std::vector<double>{100, 200, 300});
  CHECK(parse_sweep("1024:4096:+1024", "--k", false) ==
        std::vector<double>{1024, 2048, 3072, 4096});
  CHECK(parse_sweep("64K:1M:x4", "--membound", true) ==
        std::vector<double>{65536, 262144, 1048576});
  CHECK_THROWS_AS(parse_sweep("64:1024:x1", "--mnk", false), InputError);
  CHECK_THROWS_AS(parse_sweep("64,,128", "--mnk", false), InputError);
  CHECK_THROWS_AS(parse_sweep("1.5", "--m", false), InputError);
}

TEST_CASE("exec: launcher and world checks say what is wrong") {
  LauncherInfo none;
  CHECK(check_world(none, 1, 0, "tutti exec bench") == "");
  CHECK(check_world(none, 2, 2, "x") == "");
  // Every process rank 0 of 1 although the launcher started 4.
  LauncherInfo four{4, "OMPI_COMM_WORLD_SIZE"};
  std::string m = check_world(four, 1, 0, "tutti exec bench");
  CHECK(m.find("rank 0 of 1") != std::string::npos);
  CHECK(m.find("OMPI_COMM_WORLD_SIZE=4") != std::string::npos);
  // No launcher at all, but the layout needs 2 ranks.
  m = check_world(none, 1, 2, "tutti exec replay --workload w.json");
  CHECK(m.find("no MPI launcher") != std::string::npos);
  CHECK(m.find("mpirun -np 2 tutti exec replay --workload w.json") != std::string::npos);
  CHECK(m.find("srun -n 2") != std::string::npos);
  // A launcher with the wrong count.
  m = check_world(LauncherInfo{3, "PMI_SIZE"}, 3, 2, "x");
  CHECK(m.find("needs 2 MPI ranks") != std::string::npos);
}

TEST_CASE("exec: the GEMM fit recovers known parameters") {
  GemmFit truth;
  truth.peak_flops_per_s = 1e11;
  truth.eff_max = 0.8;
  truth.half_flops = 1e6;
  truth.half_dim = 16;
  truth.launch_overhead_s = 2e-6;
  std::vector<GemmSample> s;
  for (double m : {32, 128, 512})
    for (double n : {64, 256, 1024})
      for (double k : {16, 128, 1024}) s.push_back({m, n, k, truth.predict_s(m, n, k)});
  GemmFit f = fit_gemm(s, 1e11);
  CHECK(f.rms_rel_error < 0.02);
  CHECK(f.eff_max == doctest::Approx(0.8).epsilon(0.05));
  CHECK(f.launch_overhead_s == doctest::Approx(2e-6).epsilon(0.25));
  for (const auto& x : s)
    CHECK(f.predict_s(x.m, x.n, x.k) == doctest::Approx(x.time_s).epsilon(0.05));
  CHECK_THROWS_AS(fit_gemm({s[0], s[1]}, 0), InputError);
}

TEST_CASE("exec: memory and alpha-beta fits") {
  MemFit truth;
  truth.peak_Bps = 2e10;
  truth.eff_max = 0.9;
  truth.half_bytes = 1e5;
  truth.launch_overhead_s = 1e-6;
  std::vector<MemSample> m;
  for (double b = 1e4; b < 1e9; b *= 4) m.push_back({b, truth.predict_s(b)});
  MemFit f = fit_membound(m, 2e10);
  CHECK(f.rms_rel_error < 0.03);
  for (const auto& x : m) CHECK(f.predict_s(x.bytes) == doctest::Approx(x.time_s).epsilon(0.06));

  std::vector<CollSample> c;
  for (double b = 8; b < 1e8; b *= 4) c.push_back({b, 5e-6 + b * 1.5 / 4e9});
  AlphaBetaFit ab = fit_alpha_beta(c, 1.5);
  CHECK(ab.latency_s == doctest::Approx(5e-6).epsilon(0.01));
  CHECK(ab.busbw_Bps == doctest::Approx(4e9).epsilon(0.01));
  CHECK(ab.max_rel_error < 1e-6);
}
