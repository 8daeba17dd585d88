#pragma once
// The simulation result: the document `tutti simulate --json` prints and `tutti report compare`
// reads back (schemas/simulation_result.schema.json). It combines the engine's SimResult
// (sim/result.hpp), the facility models' FacilityResult (facility.hpp), and the workload, cluster
// and layout they ran on, so it lives here, the first library that sees all of them.
//
//   SimulationDocument d = make_simulation_document(w, c, l, options, r, fr);  // the writer
//   nlohmann::json j = to_json(d);                                              // what is printed
//   SimulationDocument back = simulation_document_from_json(j, "run.json");     // the reader
//
// The struct types every key a reader uses; `document` keeps the whole document as written (the
// keys not typed here: failures, overrides, moe, prices, the facility models' details), so
// to_json(from_json(j)) == j.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tutti/sim/calibration.hpp"
#include "tutti/sim/engine.hpp"

namespace tutti {

struct Workload;
struct Cluster;
struct Layout;
struct FacilityResult;

/// The iteration as the run lives it: the simulated one, then thermal throttling, data-loading
/// stalls and failures (checkpoints, rework, restarts) added on top, each its own breakdown row so
/// the rows sum to the headline. The one definition of the document's "lived" object and of
/// `tutti simulate`'s table.
struct LivedIteration {
  bool fac = false;  ///< Facility figures known (iterations, effective time to train > 0).
  double T_sim = 0, T_thr = 0, T_stall = 0, T = 0;
  double k = 1;  ///< Rate scale, simulated -> lived (T_sim / T).
};
LivedIteration lived_iteration(const SimResult& r, const FacilityResult& fr);

/// One of the engine's busiest links (SimResult::bottleneck_links as written).
struct SimulationLink {
  std::string link, tier;  ///< "leaf3->spine7", Tier name as written
  double utilization = 0, bytes = 0;
};

/// The facility figures the reports read; nullopt: null in the document (not known: no price, no
/// storage system, no tokens) or absent.
struct SimulationFacility {
  std::optional<double> energy_per_run_J, time_to_train_s, effective_time_to_train_s;
  std::optional<double> avg_it_W;  ///< power.avg_it_W
  std::optional<double> capex_usd, cost_per_run_usd, usd_per_million_tokens,
      cloud_cost_per_run_usd;                  ///< cost.*
  nlohmann::json cost_origins;                 ///< cost.origins (null: absent)
  std::optional<double> goodput;               ///< reliability.goodput
  std::optional<double> physical_J_per_token;  ///< energy.physical_J_per_token
};

struct SimulationDocument {
  int schema_version = 1;
  std::string engine, workload, cluster, layout, calibration;
  long long gpus = 0;
  double iteration_time_s = 0, tokens_per_s_per_gpu = 0, samples_per_s = 0, tflops_per_gpu = 0;
  double mfu = 0, hfu = 0, iterations = 0, time_to_train_s = 0, memory_per_gpu_bytes = 0;
  double compute_s = 0, bubble_s = 0, other_s = 0;  ///< breakdown.*
  /// breakdown.exposed_comm_s: (GroupDim name, seconds) in the document's order.
  std::vector<std::pair<std::string, double>> exposed_comm_s;
  std::vector<SimulationLink> bottleneck_links;
  /// Per GPU id, the calibration values that are defaults for it (sim/calibration.hpp).
  std::map<std::string, std::vector<CalibrationDefault>> calibration_defaults;
  SimulationFacility facility;
  nlohmann::json document;  ///< The whole document (object), keys not typed above included.

  /// Exposed communication of parallel dimension `dim` (a GroupDim name); nullopt when the
  /// document has no such key.
  std::optional<double> exposed(const std::string& dim) const;
};

/// The writer: the document of a run of `w` on `c` with layout `l` (SimResult `r`, facility
/// models `fr`, the engine options it ran with). Output keys: the SimResult's (result.hpp) plus
/// lived, schema_version, workload, cluster, routing, failures, gpus, cluster_gpus, placement,
/// layout, calibration, calibration_defaults, moe, facility, prices (add new keys here).
SimulationDocument make_simulation_document(const Workload& w, const Cluster& c, const Layout& l,
                                            const SimOptions& options, const SimResult& r,
                                            const FacilityResult& fr);

/// The document as printed: `document` with the typed fields written over it. Deterministic.
nlohmann::json to_json(const SimulationDocument& d);

/// The strict reader: checks `j` against schemas/simulation_result.schema.json (embedded) and
/// fills the struct. Throws InputError naming `source` (the file; "" for none) and the key path
/// prefixed with `at` (where `j` sits in its file, e.g. "architectures.1.simulation"), what was
/// found and what was expected. O(document size).
SimulationDocument simulation_document_from_json(const nlohmann::json& j, const std::string& source,
                                                 const std::string& at = "");

/// schemas/simulation_result.schema.json, parsed (embedded at build time).
const nlohmann::json& simulation_result_schema();
/// The embedded schema file as (file name, text) (cmake/embed_files.cmake).
const std::vector<std::pair<std::string, std::string>>& embedded_simulation_result_schema();

}  // namespace tutti
