// `mpirun -np 2 tutti serve replay` (ctest label "mpi"): serving steps replayed as Programs over MPI
// on CPU ranks, their collectives checked element by element. The step Program itself is tested in
// tests/serve/replay_test.cpp.
#include <doctest/doctest.h>

#include "../support/run.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti::testing;

TEST_CASE("serve replay: decode and prefill steps run under mpirun on CPU and check their collectives") {
  const std::string env =
      "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
      "OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_oob_tcp_if_include=lo OPENBLAS_NUM_THREADS=1 "
      "OMPI_MCA_mpi_yield_when_idle=1 ";
  nlohmann::json schema = tutti::load_schema(src("schemas/measurements.schema.json"));
  for (const char* phase : {"decode", "prefill"}) {
    INFO(phase);
    auto r = run_shell(
        "timeout 300 " + env + "mpirun -np 2 " + std::string(TUTTI_BINARY_DIR) +
        "/tutti --json --set serving.tp=2 serve replay -w models/tiny-gpt.json -c topologies/cpu-local.json "
        "--config sim/serve/examples/chat-llama3-70b.json --phase " + phase +
        " --sequences 2 --context 64 --iterations 1 --warmup 0");
    INFO("stderr: " << r.err.substr(0, 2000));
    REQUIRE(r.rc == 0);
    nlohmann::json j = r.json();
    auto errors = tutti::validate_schema(schema, j);
    CHECK_MESSAGE(errors.empty(), tutti::format_schema_errors(errors));
    const auto& res = j["replay"]["result"];
    CHECK(res["world"] == 2);
    CHECK(res["check"]["wrong_elements"] == 0);
    CHECK(res["check"]["ops"].get<int>() > 0);
    CHECK(res["iteration_time_s"].get<double>() > 0);
    CHECK(j["replay"]["serve"]["phase"] == phase);
    CHECK(j["replay"]["serve"]["predicted_s"].get<double>() > 0);
  }
}
