#pragma once
// `tutti serve simulate --html FILE`: renders a serving run (`tutti serve simulate --json
// --requests`, schemas/serve_result.schema.json): latency percentiles (TTFT, TPOT, end-to-end,
// queueing) as a table and a bar chart, TTFT of every request over its arrival time (bubble:
// size = prompt tokens, colour = preemptions), throughput and goodput, KV cache, facility view.
// The document is read only through serve::ServeResultView::from_json (sim/serve: schema check,
// then typed fields), so a malformed run is an InputError naming the key path.
#include <nlohmann/json_fwd.hpp>

#include "tutti/reports/document.hpp"

namespace tutti::reports {

/// Builds the serving report. Throws InputError when `run` is not a serving_run document or
/// breaks schemas/serve_result.schema.json.
Report build_serve_report(const nlohmann::json& run);

}  // namespace tutti::reports
