#pragma once
// Runs the engine and the facility models for `tutti simulate` and `tutti report compare`, so
// that every command that shows simulation results shows exactly the same numbers. The document
// itself (its keys, its writer and its strict reader) is sim/facility's simulation_document.hpp.
#include <string>

#include "tutti/facility/facility.hpp"
#include "tutti/facility/simulation_document.hpp"
#include "tutti/models/layout.hpp"
#include "tutti/sim/engine.hpp"

namespace tutti {
struct Workload;
struct Cluster;
}  // namespace tutti

namespace tutti::cli {

/// Runs simulate(w, c, l, options) (simulate_simgrid for --engine simgrid) and the facility models
/// and returns the `tutti simulate --json` document (make_simulation_document). `result`, when
/// given, receives the SimResult. `facility_flag` is the `--facility` text (facility.hpp
/// parse_facility_flag); `facility`, when given, receives the facility models' result.
/// `progress`: progress bars on stderr (when it is a terminal) for the SimGrid engine and the
/// cooling fixed point (the caller's -q turns them off; a caller with its own bar passes false).
/// Throws InputError like simulate() and the facility models.
SimulationDocument run_simulation(const Workload& w, const Cluster& c, const Layout& l,
                                  const SimOptions& options, SimResult* result = nullptr,
                                  const std::string& facility_flag = "",
                                  FacilityResult* facility = nullptr, bool progress = false);

}  // namespace tutti::cli
