// Serving steps as Programs (StepModel::step_program) and their replay over MPI on CPU ranks
// (`mpirun -np 2 tutti serve replay`).
#include <doctest/doctest.h>

#include "serve_fixture.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti;
using namespace tutti::serve;
using namespace tutti::serve::testing;

TEST_CASE("serve replay: the step Program has the step model's ops, in order") {
  ServeConfig cfg = parse_serve_config(config_text(1, 1, 16, 16, "{\"tp\": 2}"), "t.json");
  StepModel sm(model("tiny-gpt"), cfg.serving, sim_cluster(cluster("cpu-local")), default_calibration());
  BatchShape b;
  b.decodes = 4;
  b.decode_context_tokens = 4 * 256;
  b.logits = 4;
  Program p = sm.step_program(b);
  REQUIRE(p.classes.size() == 1);
  CHECK(p.world == 2);
  CHECK(p.layout.tp == 2);
  int colls = 0, gemms = 0;
  std::size_t expanded = 0;
  for (const StepOp& so : sm.ops(b)) expanded += static_cast<std::size_t>(so.times);
  CHECK(p.classes[0].ops.size() == expanded);
  for (const Op& op : p.classes[0].ops) {
    colls += op.kind == OpKind::Collective;
    gemms += op.kind == OpKind::Gemm;
  }
  CHECK(colls == 2 * 12 + 1);  // two TP all-reduces per layer and the logits all-gather
  CHECK(gemms == 4 * 12 + 1);  // qkv, o, up, down per layer and the LM head
  ServeConfig pp = parse_serve_config(config_text(1, 1, 16, 16, "{\"tp\": 1, \"pp\": 2}"), "t.json");
  StepModel smp(model("tiny-gpt"), pp.serving, sim_cluster(cluster("cpu-local")), default_calibration());
  CHECK_THROWS_WITH_AS(smp.step_program(b), doctest::Contains("serving.pp"), InputError);
}

TEST_CASE("serve replay: decode and prefill steps run under mpirun on CPU and check their collectives") {
  const std::string env =
      "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
      "OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_oob_tcp_if_include=lo OPENBLAS_NUM_THREADS=1 "
      "OMPI_MCA_mpi_yield_when_idle=1 ";
  nlohmann::json schema = load_schema(tutti::testing::src("schemas/measurements.schema.json"));
  for (const char* phase : {"decode", "prefill"}) {
    INFO(phase);
    auto r = tutti::testing::run_shell(
        "timeout 300 " + env + "mpirun -np 2 " + std::string(TUTTI_BINARY_DIR) +
        "/tutti --json --set serving.tp=2 serve replay -w models/tiny-gpt.json -c topologies/cpu-local.json "
        "--config sim/serve/examples/chat-llama3-70b.json --phase " + phase +
        " --sequences 2 --context 64 --iterations 1 --warmup 0");
    INFO("stderr: " << r.err.substr(0, 2000));
    REQUIRE(r.rc == 0);
    nlohmann::json j = r.json();
    auto errors = validate_schema(schema, j);
    CHECK_MESSAGE(errors.empty(), format_schema_errors(errors));
    const auto& res = j["replay"]["result"];
    CHECK(res["world"] == 2);
    CHECK(res["check"]["wrong_elements"] == 0);
    CHECK(res["check"]["ops"].get<int>() > 0);
    CHECK(res["iteration_time_s"].get<double>() > 0);
    CHECK(j["replay"]["serve"]["phase"] == phase);
    CHECK(j["replay"]["serve"]["predicted_s"].get<double>() > 0);
  }
}
