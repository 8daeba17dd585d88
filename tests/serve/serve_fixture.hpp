#pragma once
// Shared helpers of the serving tests: shipped models and clusters, a config from a few keys.
#include <map>
#include <string>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/serve/simulator.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::serve::testing {

inline const Workload& model(const std::string& name) {
  static std::map<std::string, Workload> cache;
  auto it = cache.find(name);
  if (it == cache.end())
    it = cache.emplace(name, load_workload(tutti::testing::src("models/" + name + ".json"))).first;
  return it->second;
}

inline const Cluster& cluster(const std::string& name) {
  static std::map<std::string, Cluster> cache;
  auto it = cache.find(name);
  if (it == cache.end())
    it = cache.emplace(name, load_cluster(tutti::testing::src("topologies/" + name + ".json")))
             .first;
  return it->second;
}

/// A Poisson load with fixed lengths on `serving` (JSON object text).
inline std::string config_text(double rate, int requests, int prompt, int output,
                               const std::string& serving, const std::string& extra = "") {
  return "{\"traffic\": {\"arrival\": \"poisson\", \"rate_per_s\": " + std::to_string(rate) +
         ", \"requests\": " + std::to_string(requests) +
         ", \"prompt_tokens\": {\"dist\": \"fixed\", \"value\": " + std::to_string(prompt) +
         "}, \"output_tokens\": {\"dist\": \"fixed\", \"value\": " + std::to_string(output) +
         "}}, \"serving\": " + serving + extra + "}";
}

inline ServeResult run(const std::string& model_name, const std::string& cluster_name,
                       const std::string& config, std::uint64_t seed = 1) {
  ServeConfig cfg = parse_serve_config(config, "test.json");
  return simulate_serving(model(model_name), cfg, sim_cluster(cluster(cluster_name)),
                          default_calibration(), seed);
}

}  // namespace tutti::serve::testing
