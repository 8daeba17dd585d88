// Serving planner: the recommendation meets the SLOs and is the cheapest that does; the frontier is
// non-dominated; more load needs at least as much hardware; impossible SLOs give no answer (exit
// 1).
#include "tutti/serve/plan.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "serve_fixture.hpp"

using namespace tutti;
using namespace tutti::serve;
using namespace tutti::serve::testing;

namespace {
ServePlanResult plan(double rate, const std::string& slo, int requests = 80) {
  ServeConfig cfg = parse_serve_config(
      config_text(rate, requests, 512, 128, "{\"tp\": 8}", ", \"slo\": " + slo), "p.json");
  std::vector<HardwareOption> hw = {{"dgx-h100-single", &cluster("dgx-h100-single")}};
  ServePlanOptions o;
  o.max_batches = {32, 256};
  return plan_serving(model("llama3-70b"), cfg, hw, default_calibration(), 1, o);
}
}  // namespace

TEST_CASE("serve plan: cheapest configuration that meets the SLOs, with a frontier") {
  ServePlanResult r = plan(2, "{\"ttft\": \"1s\", \"tpot\": \"40ms\"}");
  REQUIRE(r.best >= 0);
  const ServeCandidate& b = r.candidates[r.best];
  CHECK(b.meets);
  CHECK(b.attainment >= 0.99);
  for (const ServeCandidate& c : r.candidates)
    if (c.meets) CHECK(c.cost() >= b.cost());
  // Llama 3 70B in bf16 (141 GB) needs at least 2 H100 80GB GPUs per replica.
  CHECK(b.serving.tp >= 2);
  bool tp1_fits = false;
  for (const ServeCandidate& c : r.candidates) tp1_fits |= c.serving.tp == 1 && c.feasible;
  CHECK_FALSE(tp1_fits);
  REQUIRE(!r.frontier.empty());
  CHECK(r.frontier.front() == r.best);
  for (int i : r.frontier)
    for (int k : r.frontier) {
      if (i == k) continue;
      const ServeCandidate &a = r.candidates[i], &d = r.candidates[k];
      const bool dominates = d.cost() <= a.cost() && d.e2e_p99_s <= a.e2e_p99_s &&
                             d.energy_per_token_J <= a.energy_per_token_J &&
                             (d.cost() < a.cost() || d.e2e_p99_s < a.e2e_p99_s ||
                              d.energy_per_token_J < a.energy_per_token_J);
      CHECK_FALSE(dominates);
    }
}

TEST_CASE("serve plan: a tighter TPOT target needs more GPUs, an impossible one has no answer") {
  ServePlanResult loose = plan(2, "{\"tpot\": \"40ms\"}");
  ServePlanResult tight = plan(2, "{\"tpot\": \"14ms\"}");
  REQUIRE(loose.best >= 0);
  REQUIRE(tight.best >= 0);
  CHECK(tight.candidates[tight.best].gpus > loose.candidates[loose.best].gpus);
  ServePlanResult never = plan(2, "{\"tpot\": \"1ms\"}");
  CHECK(never.best < 0);
  CHECK(never.nearest_miss >= 0);
  CHECK(to_text(never).find("no configuration meets") != std::string::npos);
}

TEST_CASE("serve plan: a model that no node holds is served with pipeline stages across nodes") {
  // Llama 3 405B in bf16 (~811 GB) does not fit 8 H100 80GB GPUs at any TP: the planner must
  // pipeline it over nodes (tp 8 inside a node, pp across nodes).
  ServeConfig cfg = parse_serve_config(
      config_text(0.5, 24, 512, 64, "{\"tp\": 8}", ", \"slo\": {\"tpot\": \"200ms\"}"), "p.json");
  std::vector<HardwareOption> hw = {{"h100-64gpu-fattree", &cluster("h100-64gpu-fattree")}};
  ServePlanOptions o;
  o.max_batches = {64};
  o.disaggregation = false;
  o.attainment = 0.9;
  ServePlanResult r = plan_serving(model("llama3-405b"), cfg, hw, default_calibration(), 1, o);
  std::set<int> pps;
  for (const ServeCandidate& c : r.candidates) {
    pps.insert(c.serving.pp);
    if (c.serving.pp == 1) CHECK_FALSE(c.feasible);
    if (c.serving.pp > 1) CHECK(c.serving.tp == 8);  // pipelines only when TP fills the node
  }
  CHECK(pps == std::set<int>{1, 2, 4, 8});
  REQUIRE(r.best >= 0);
  const ServeCandidate& b = r.candidates[r.best];
  CHECK(b.serving.pp >= 2);
  CHECK(b.gpus == 8 * b.serving.pp * b.serving.replicas);
  CHECK(to_text(r).find(" pp" + std::to_string(b.serving.pp)) != std::string::npos);
  CHECK(to_json(r)["recommended"]["pp"] == b.serving.pp);
  // max_pp 1 searches no pipelines: nothing fits.
  o.max_pp = 1;
  ServePlanResult none = plan_serving(model("llama3-405b"), cfg, hw, default_calibration(), 1, o);
  CHECK(none.best < 0);
}

TEST_CASE("serve plan: CLI exit codes") {
  auto ok = tutti::testing::run_tutti({"serve", "plan", "-w", "models/llama3-70b.json", "--config",
                                       "sim/serve/examples/chat-llama3-70b.json", "-c",
                                       "topologies/dgx-h100-single.json", "--max-batch", "256",
                                       "--set", "traffic.requests=60", "--no-disaggregation"});
  REQUIRE_MESSAGE(ok.rc == 0, ok.err);
  CHECK(ok.out.find("recommended:") != std::string::npos);
  CHECK(ok.out.find("Pareto frontier") != std::string::npos);
  auto no = tutti::testing::run_tutti({"serve", "plan", "-w", "models/llama3-70b.json", "--config",
                                       "sim/serve/examples/chat-llama3-70b.json", "-c",
                                       "topologies/dgx-h100-single.json", "--max-batch", "256",
                                       "--set", "traffic.requests=60", "--set", "slo.tpot=1ms"});
  CHECK(no.rc == 1);
  CHECK(no.out.find("nearest miss") != std::string::npos);
}
