#pragma once
// `tutti report plan PLAN.json`: renders the planner's answer (`tutti plan --json`): the Pareto
// frontier over time to train and total cost (energy as point size and colour), the
// recommendation with its layout, breakdown and bill of materials, the runners-up, and the
// search's counts. "Nothing fits" plans show the reason and the nearest miss, no empty chart.
//
// Keys read (missing ones are shown as n/a, never invented): recommended, pareto, finalists,
// evaluated, feasible, simulated, pruned, violations, reason, request, workload; per
// configuration: hardware{node,gpu,nodes,gpus,fabric,oversubscription,network,storage},
// acquisition, layout, engine/native, time_to_train_s, iteration_time_s, total_cost_usd,
// capex_usd, run_opex_usd, energy_J, avg_it_power_W, peak_facility_power_W, mfu, breakdown,
// bottleneck, memory_per_gpu_bytes, bom.
#include <nlohmann/json_fwd.hpp>

#include "tutti/reports/document.hpp"

namespace tutti::reports {

/// Builds the plan report. Fills everything but tool_version, command and inputs.
/// Throws InputError when `plan` is not an object with at least "pareto" or "recommended".
Report build_plan_report(const nlohmann::json& plan);

}  // namespace tutti::reports
