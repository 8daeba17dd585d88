#pragma once
// The serving predictor of `tutti validate` (ValidationOptions::serving in sim/validation.hpp):
// simulates a serving case's configuration with simulate_serving (seed 1) and returns its metric.
#include <string>
#include <vector>

#include "tutti/validation/validation.hpp"

namespace tutti::serve {

/// Reads `c.serve_config` (its applied defaults go to `assumptions`), simulates it on `c.cluster`
/// and returns `c.metric` (output_tokens_per_sec, total_tokens_per_sec, requests_per_sec: all GPUs;
/// ttft/tpot in ms, e2e in s: mean, median or p99). Throws InputError when the configuration cannot
/// run (weights or requests do not fit) or the metric is unknown.
double predict_validation_case(const ServingCase& c, std::vector<std::string>& assumptions);

}  // namespace tutti::serve
