#pragma once
// `tutti report plan PLAN.json`: renders the planner's answer (`tutti plan --json`): the Pareto
// frontier over time to train and total cost (energy as point size and colour), the
// recommendation with its layout, breakdown and bill of materials, the runners-up, and the
// search's counts. "Nothing fits" plans show the reason and the nearest miss, no empty chart.
//
// The document is read only through PlanResultView::from_json (sim/plan/plan_result.hpp: schema
// check, then typed fields; the keys read are listed there). Optional numbers missing from it are
// shown as n/a, never invented.
#include <nlohmann/json_fwd.hpp>

#include "tutti/reports/document.hpp"

namespace tutti::reports {

/// Builds the plan report. Fills everything but tool_version, command and inputs.
/// Throws InputError when `plan` is not an object with at least "pareto" or "recommended", or
/// breaks schemas/plan_result.schema.json (naming the key path).
Report build_plan_report(const nlohmann::json& plan);

}  // namespace tutti::reports
