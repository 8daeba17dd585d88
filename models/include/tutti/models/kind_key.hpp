#pragma once
// The key of an op in per-kind time tables ("gemm", "attention", "membound", "collective.tp",
// "collective.dp", ..., "send", "recv"): what a replay measures per kind (exec/replay.hpp
// measured_by_kind) and what live validation predicts per kind (sim/validation live.hpp), so that
// both sides name the same kinds.
#include <string>

namespace tutti {

struct Op;

/// "collective.<group>" for a collective (group as to_string(GroupDim)), else to_string(kind).
std::string kind_key(const Op& op);

}  // namespace tutti
