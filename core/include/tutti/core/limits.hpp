#pragma once
// Limits of tutti's inputs, declared once (issue 25). Every parser checks its values against
// these before any allocation or loop depends on them; the schemas in schemas/ state the same
// ranges. They sit far above any real cluster (so no valid plan is refused) and low enough that
// products of such values stay finite.
#include <cstdint>

#include "tutti/core/units.hpp"

namespace tutti {

/// The largest SI value any quantity of dimension `d` may take in any input, enforced by
/// Value::quantity (config.hpp) for every file and flag:
///   Bytes 1e21 B (1 ZB), Bandwidth 1e16 B/s, Time 1000 y, Power 1e11 W, Energy 1e22 J,
///   FlopRate 1e21 FLOP/s, Count 1e18, EnergyPrice $1000/kWh, Money $1e15, MoneyRate $1e6/h,
///   Ratio 1e9.
double dim_max(Dim d);

/// Most micro-batch x layer passes per iteration (micro-batches per pipeline times transformer
/// layers; micro-batches for ResNet/DLRM) that a Program may hold: the Program lists every op of
/// every pass (~100 ops of ~110 bytes each), so this bounds it near 1.5 GB. Llama 3 405B (126
/// layers) fits up to 1,040 micro-batches per pipeline. check_layout (models/workload.hpp)
/// refuses more, saying what would fit.
inline constexpr std::int64_t kMaxLayerPasses = std::int64_t(1) << 17;

/// Deepest nesting of objects and arrays in any JSON input (the shipped files use < 10).
inline constexpr int kMaxJsonDepth = 128;

}  // namespace tutti
