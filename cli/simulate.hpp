#pragma once
// The document `tutti simulate --json` prints, assembled in one place so that every command that
// shows simulation results (`tutti report compare`) shows exactly the same numbers.
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "tutti/facility/facility.hpp"
#include "tutti/models/layout.hpp"
#include "tutti/sim/engine.hpp"

namespace tutti {
struct Workload;
struct Cluster;
}  // namespace tutti

namespace tutti::cli {

/// Runs simulate(w, c, l, options) and returns the `tutti simulate --json` document: the
/// SimResult's keys (result.hpp) plus workload, cluster, gpus, layout, calibration (and whatever
/// else `tutti simulate --json` adds: add it here, not in run_simulate). `result`, when given,
/// receives the SimResult. `facility_flag` is the `--facility` text (facility.hpp
/// parse_facility_flag); the facility models' JSON goes under "facility", and `facility`, when
/// given, receives their result. `progress`: progress bars on stderr (when it is a terminal) for
/// the SimGrid engine and the cooling fixed point (the caller's -q turns them off; a caller with
/// its own bar passes false). Throws InputError like simulate() and the facility models.
nlohmann::json simulation_document(const Workload& w, const Cluster& c, const Layout& l,
                                   const SimOptions& options, SimResult* result = nullptr,
                                   const std::string& facility_flag = "",
                                   FacilityResult* facility = nullptr, bool progress = false);

}  // namespace tutti::cli
