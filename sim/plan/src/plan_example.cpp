// The built-in example request behind `tutti plan --example` (the README's first command).
// Print it with `tutti plan --show-request` to start a request of your own.
#include "tutti/plan/planner.hpp"

namespace tutti {

const std::string& example_plan_request() {
  static const std::string kExample = R"({
  "description": "Pre-train Llama 3 70B on 2T tokens within 30 days for at most $250M of hardware: H100 vs H200 vs B200, rail-optimized InfiniBand vs RoCE, 1,024 to 8,192 GPUs, bought.",
  "workload": "models/llama3-70b.json",
  "tokens": "2T",
  "constraints": {
    "deadline": "30d",
    "capex_budget": "$250M",
    "gpus_min": 1024,
    "gpus_max": 8192
  },
  "search": {
    "gpus": ["h100-sxm-80gb", "h200-sxm-141gb", "b200"],
    "fabrics": ["rail_optimized"],
    "networks": ["infiniband", "roce"],
    "acquisition": ["buy"],
    "layouts": {
      "tp": [2, 4, 8],
      "pp": [1, 2, 4, 8, 16],
      "cp": [1, 2],
      "vp": [1, 2, 4],
      "micro_batch": [1, 2, 4],
      "zero": [1],
      "recompute": ["none", "selective", "full"]
    }
  },
  "objective": "cost",
  "finalists": 3
}
)";
  return kExample;
}

}  // namespace tutti
