#pragma once
// `tutti report compare`: the same workload on several cluster architectures.
//
// The builder reads a neutral "comparison" JSON document (what cli/report.cpp collects from the
// engine, the topology and the facility models, and what `--format json` echoes under "data"):
//
//   { "kind": "compare", "engine": "native", "layout": "tp=8,pp=4,...",
//     "workload": { "name", "file", "tokens_to_train" },
//     "architectures": [ {
//        "name", "cluster_file", "description", "gpus",
//        "ok": bool, "error": "why the simulation failed (when !ok)",
//        "simulation": <`tutti simulate --json` of this workload on this cluster>,
//        "topology":   <`tutti topo --json` subset: bom, network_capex_usd, network_power_W, ...>,
//        "oversubscription": { "supported": bool, "reason": "...", "points": [
//            { "ratio": 2, "label": "2:1", "ok": bool, "error": "...", "baseline": bool,
//              "simulation": {...}, "topology": {...} } ] } } ] }
//
// Missing optional figures (no cost model, no BOM) are shown as "n/a" with a note; they are never
// invented. A failed architecture is reported as failed; a single architecture says there is
// nothing to compare; no chart is drawn without data.
#include <nlohmann/json_fwd.hpp>

#include "tutti/reports/document.hpp"

namespace tutti::reports {

/// Builds the comparison report. `data` as above. Fills everything but tool_version, command and
/// inputs (the caller knows them). Throws InputError when `data` lacks "architectures".
Report build_compare_report(const nlohmann::json& data);

/// One warning callout per GPU whose calibration values are defaults, from a
/// "calibration_defaults" object ({"<gpu id>": [{"key", "what", "value", "basis"}, ...]}, as
/// `tutti simulate --json` and `tutti plan --json` write it; sim/calibration.hpp
/// calibration_defaults). GPUs with an empty list get none; ids in the object's order.
std::vector<Callout> calibration_default_notices(const nlohmann::json& by_gpu);

/// A table saying where each money figure came from ("catalog": a cited catalog price;
/// "estimate": the catalog marks it an estimate, or it is derived from one; "user": a --prices
/// quote; "no price": nothing to price it with, shown as no figure). One row per
/// (name, "origins" object as `facility.cost.origins` in `tutti simulate --json` writes it);
/// rows without an origins object are left out. Empty table (no rows) when none has one.
Table price_origins_table(const std::vector<std::pair<std::string, nlohmann::json>>& rows);

}  // namespace tutti::reports
