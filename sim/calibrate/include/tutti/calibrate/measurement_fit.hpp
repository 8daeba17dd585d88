#pragma once
// `tutti calibrate MEASUREMENTS [--cluster C]`: the calibration profile fitted to measurements
// taken on a live cluster (measurement documents read through their schema, measurements.hpp).
//   * GEMM and copy sweeps (`tutti exec bench --gemm`): the compute curves (fit_gemm,
//     fit_membound in fit.hpp) and the device's peak FLOP/s and HBM bandwidth;
//   * serve replay decode steps (`tutti serve replay --phase decode`): the decode-regime terms
//     (decode_fit.hpp); not together with GEMM/copy sweeps (both fit the same terms);
//   * collective benches (`tutti exec bench --op`), with the cluster they ran on: per (backend,
//     tier), the tiers' bandwidth efficiency and, for MPI, the ring base and p2p latencies
//     (fit_network), through the engine's own collective model.
// Everything else keeps the default profile's value; the fitted_to entries of what was refitted
// are dropped (the profile is now fitted to these measurements).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tutti/calibrate/measurements.hpp"
#include "tutti/sim/calibration.hpp"

namespace tutti {
struct Cluster;
}

namespace tutti::calibrate {

struct MeasurementFit {
  CalibrationProfile profile;
  /// What was fitted and its errors: {"gemm", "membound", "decode", "network": [...]}, each
  /// present when fitted.
  nlohmann::json report = nlohmann::json::object();
  /// Collective benches were given without a cluster: the network kept the defaults.
  bool network_needs_cluster = false;
};

/// Fits a profile named `name` to `docs` (`cluster`: where they ran, or null). Throws InputError
/// when the documents hold nothing to fit, mix decode steps with GEMM/copy sweeps, mix GEMM types,
/// or a bench does not fit on the cluster. The profile is not range-checked here: the caller
/// round-trips it through parse_calibration.
MeasurementFit fit_measurements(const std::vector<Measurements>& docs, const Cluster* cluster,
                                const std::string& name);

/// Non-negative least squares of y ~ X a on relative errors (weights 1/t^2), by trying every
/// subset of the columns (X has at most a few columns). Returns a (zeros when nothing fits).
std::vector<double> nnls_rel(const std::vector<std::vector<double>>& X,
                             const std::vector<double>& y, const std::vector<double>& t);

/// Fits the tiers' bandwidth efficiency (and, for MPI, the ring base and p2p latencies) to the
/// collective benches on `cluster`, one fit per (backend, tier), into `prof`; appends one report
/// entry per fit to `report` (a JSON array).
void fit_network(const std::vector<CollectiveSweep>& benches, const Cluster& cluster,
                 CalibrationProfile& prof, nlohmann::json& report);

}  // namespace tutti::calibrate
