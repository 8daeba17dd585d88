#include "tutti/sim/result.hpp"

#include <nlohmann/json.hpp>

namespace tutti {

double Breakdown::exposed_comm_total() const {
  double s = 0;
  for (double x : exposed_comm_s) s += x;
  return s;
}

void to_json(nlohmann::json& j, const SimResult& r) {
  using nlohmann::json;
  json exposed = json::object();
  for (GroupDim d : enum_values<GroupDim>()) exposed[to_string(d)] = r.breakdown.exposed_comm_s[d];
  json links = json::array();
  for (const auto& l : r.bottleneck_links)
    links.push_back({{"link", l.name},
                     {"tier", to_string(l.tier)},
                     {"utilization", l.utilization},
                     {"bytes", l.bytes}});
  j = json{{"engine", r.engine},
           {"iteration_time_s", r.iteration_time_s},
           {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
           {"samples_per_s", r.samples_per_s},
           {"tflops_per_gpu", r.tflops_per_gpu},
           {"mfu", r.mfu},
           {"hfu", r.hfu},
           {"breakdown",
            {{"compute_s", r.breakdown.compute_s},
             {"exposed_comm_s", exposed},
             {"bubble_s", r.breakdown.bubble_s},
             {"other_s", r.breakdown.other_s}}},
           {"bottleneck_links", links},
           {"iterations", r.iterations},
           {"time_to_train_s", r.time_to_train_s},
           {"memory_per_gpu_bytes", r.memory_per_gpu_bytes}};
  if (!r.approximations.empty()) j["approximations"] = r.approximations;
  // wall_s (the engine's own run time) is left out on purpose: the JSON is a result, byte-identical
  // across runs of the same inputs; the CLI prints the wall time on stderr.
  // MoE parts only where there are MoE layers (dense outputs keep their keys).
  double moe = 0;
  for (double x : r.breakdown.moe_s) moe += x;
  if (moe > 0) {
    json parts = json::object();
    for (MoePart p : enum_values<MoePart>())
      if (p != MoePart::None) parts[to_string(p)] = r.breakdown.moe_s[p];
    j["breakdown"]["moe_busy_s"] = parts;
  }
}

}  // namespace tutti
