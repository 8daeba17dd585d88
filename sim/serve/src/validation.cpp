// The serving predictor of tutti validate (validation.hpp).
#include "tutti/serve/validation.hpp"

#include "tutti/core/error.hpp"
#include "tutti/serve/simulator.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::serve {

double predict_validation_case(const ServingCase& c, std::vector<std::string>& assumptions) {
  if (!c.workload || !c.cluster || !c.profile)
    throw InternalError("serve validation: case without model, cluster or profile");
  ServeConfig cfg = parse_serve_config(c.serve_config, "validation case " + c.id);
  for (const std::string& d : cfg.defaults_applied) assumptions.push_back(d);
  const ServeResult r = simulate_serving(*c.workload, cfg, sim_cluster(*c.cluster), *c.profile, 1);
  const std::string& m = c.metric;
  if (m == "output_tokens_per_sec") return r.output_tokens_per_s;
  if (m == "total_tokens_per_sec") return r.total_tokens_per_s;
  if (m == "requests_per_sec") return r.requests_per_s;
  if (m == "ttft_mean_ms") return r.ttft.mean * 1e3;
  if (m == "ttft_median_ms") return r.ttft.p50 * 1e3;
  if (m == "ttft_p99_ms") return r.ttft.p99 * 1e3;
  if (m == "tpot_mean_ms") return r.tpot.mean * 1e3;
  if (m == "tpot_median_ms") return r.tpot.p50 * 1e3;
  if (m == "tpot_p99_ms") return r.tpot.p99 * 1e3;
  if (m == "e2e_mean_s") return r.e2e.mean;
  if (m == "e2e_median_s") return r.e2e.p50;
  throw InputError("validation case " + c.id, "measured.metric", m, "a serving metric");
}

}  // namespace tutti::serve
