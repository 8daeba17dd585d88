// Serving steps as Programs (StepModel::step_program) and their replay over MPI on CPU ranks
// (`mpirun -np 2 tutti serve replay`,
// tested in tests/exec/mpi_serve_cases.cpp).
#include <doctest/doctest.h>

#include "serve_fixture.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti;
using namespace tutti::serve;
using namespace tutti::serve::testing;

TEST_CASE("serve replay: the step Program has the step model's ops, in order") {
  ServeConfig cfg = parse_serve_config(config_text(1, 1, 16, 16, "{\"tp\": 2}"), "t.json");
  StepModel sm(model("tiny-gpt"), cfg.serving, sim_cluster(cluster("cpu-local")),
               default_calibration());
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
  ServeConfig pp =
      parse_serve_config(config_text(1, 1, 16, 16, "{\"tp\": 1, \"pp\": 2}"), "t.json");
  StepModel smp(model("tiny-gpt"), pp.serving, sim_cluster(cluster("cpu-local")),
                default_calibration());
  CHECK_THROWS_WITH_AS(smp.step_program(b), doctest::Contains("serving.pp"), InputError);
}
// The mpirun case lives in tests/exec/mpi_serve_cases.cpp (ctest label "mpi": it spawns Open MPI,
// which the sanitizer build does not instrument).
