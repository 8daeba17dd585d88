// Unit tests of exec/: nccl-tests bus factors, sweep parsing, launcher checks.
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
