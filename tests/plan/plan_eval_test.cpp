// The planner's screening fast path (reduced Programs, affine in the layer count) against the
// analytic engine on the whole Program.
#include <doctest/doctest.h>

#include "../../sim/plan/src/plan_impl.hpp"
#include "../support/run.hpp"
#include "tutti/models/workload.hpp"

using namespace tutti;

namespace {

HardwareChoice choice(const std::string& node, int nodes, Network net) {
  NodeChoice n = resolve_node(node);
  HardwareChoice h;
  h.node = n.node;
  h.gpu = n.gpu;
  h.nodes = nodes;
  h.gpus = nodes * n.gpus_per_node;
  h.fabric = "rail_optimized";
  h.network = net;
  h.storage = default_storage();
  return h;
}

Layout layout(int tp, int pp, int dp, int cp, int vp, int mb, Recompute rc) {
  Layout l;
  l.tp = tp;
  l.pp = pp;
  l.dp = dp;
  l.cp = cp;
  l.vp = vp;
  l.micro_batch = mb;
  l.recompute = rc;
  l.sequence_parallel = tp > 1;
  l.schedule = vp > 1 ? PipeSchedule::Interleaved : PipeSchedule::OneFOneB;
  return l;
}

}  // namespace

TEST_CASE("plan: screening agrees with the analytic engine on the whole Program") {
  PlanRequest r;
  Workload w = load_workload(tutti::testing::src("models/llama3-70b.json"));
  w.training.tokens_to_train = 2e12;
  auto cache = make_perf_cache();
  struct Case {
    const char* node;
    int nodes;
    Layout l;
  };
  std::vector<Case> cases = {
      {"dgx-h100", 16, layout(8, 4, 4, 1, 1, 1, Recompute::Selective)},
      {"dgx-h100", 16, layout(8, 4, 4, 1, 5, 1, Recompute::Selective)},
      {"dgx-h100", 16, layout(4, 8, 2, 2, 2, 1, Recompute::Full)},
      {"dgx-b200", 16, layout(2, 5, 8, 1, 1, 2, Recompute::None)},
      {"dgx-b200", 32, layout(8, 16, 2, 1, 1, 1, Recompute::Selective)},
      {"hgx-h200", 8, layout(4, 2, 8, 1, 2, 1, Recompute::Selective)},
  };
  for (const auto& c : cases) {
    for (Network net : {Network::InfiniBand, Network::RoCE}) {
      auto hw = build_hardware(choice(c.node, c.nodes, net), r, w);
      Perf fast;
      evaluate_perf(*hw, w, c.l, false, fast, cache.get());
      REQUIRE(fast.valid);
      if (!fast.fits) continue;
      SimResult exact = exact_analytic(*hw, w, c.l);
      INFO(c.node << " " << to_string(c.l) << " " << to_string(net));
      CHECK(fast.sim.iteration_time_s == doctest::Approx(exact.iteration_time_s).epsilon(0.01));
      CHECK(fast.sim.breakdown.bubble_s == doctest::Approx(exact.breakdown.bubble_s).epsilon(0.02));
      CHECK(fast.sim.time_to_train_s == doctest::Approx(exact.time_to_train_s).epsilon(0.01));
      CHECK(fast.sim.mfu == doctest::Approx(exact.mfu).epsilon(0.01));
    }
  }
}
