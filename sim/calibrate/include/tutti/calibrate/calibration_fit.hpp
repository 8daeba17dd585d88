#pragma once
// Refitting the default calibration profile from published microbenchmarks (`tutti calibrate
// defaults`): every constant of sim/calibration/default.json that was fitted to data names its
// data in "fitted_to" ("file:sim/calibration/microbench/<name>.json"), and this refits it from
// those files with the compute and collective models' own formulas (op_time_s,
// plan_collective_with + simulate_collectives), so the file can never drift from its data.
//
// Microbenchmark file (sim/calibration/microbench/*.json; schemas/microbench.schema.json):
//   {
//     "kind": "gemm" | "collective",
//     "source_key": "ml-engineering-mamf", "source": "where the numbers come from (URL, table,
//     commit)", "cluster": "topologies/dgx-h100-single.json",       // collective files only
//     "points": [
//       // gemm: one GEMM C[m,n] = A[m,k] B[k,n] on one GPU (a catalog GPU id), its measured rate
//       {"id": "h100-bf16", "gpu": "h100-sxm-80gb", "dtype": "bf16", "m": 2048, "n": 2048, "k":
//       13312,
//        "tflops": 794.5, "source": "..."},
//       // optional "best_of": {"min": 256, "max": 20224, "step": 256}: the rate is the best of a
//       // search over every m, n, k on that grid (mamf-finder); the model is then compared at its
//       // own fastest shape of the grid (so it never exceeds the measured best anywhere on it)
//       // collective: one NCCL collective on the first `gpus` GPUs of the cluster, forced
//       algorithm
//       // and protocol, its measured bus or algorithm bandwidth (nccl-tests terms)
//       {"id": "ring-8", "op": "all_reduce", "algo": "ring", "proto": "simple", "gpus": 8,
//        "bytes": "4GiB", "busbw": "367GB/s", "source": "..."}
//       // "algo": "auto", "proto": "auto": the tuner's own choice (NCCL_ALGO/NCCL_PROTO unset);
//       // "time": "69.1us" instead of a bandwidth: the time per call (latency-bound sizes)
//     ],
//     "fits": [  // each constant this file determines, and the points it is fitted to
//       {"constant": "compute.gemm.flops_efficiency_max", "points": ["h100-bf16"]}
//     ]
//   }
// Constants that can be fitted (key paths of the profile file):
//   compute.{gemm,attention}.flops_efficiency_max, compute.devices.<gpu>.gemm_efficiency.<dtype>,
//   network.tiers.<tier>.bandwidth_efficiency, nccl.nvls_bandwidth_efficiency.
// Each fit is one-dimensional: the value in (0, 1] minimising the sum of squared log errors
// log(model / measured) over its points (golden-section search, deterministic). Points named by
// no fit are still predicted and reported (a check of the model, not a fit).
#include <string>
#include <vector>

#include "tutti/sim/calibration.hpp"

namespace tutti {

/// One point of a microbenchmark file, measured vs the model under the refitted profile.
struct MicrobenchPoint {
  std::string file, id;
  std::string
      what;  ///< "gemm 2048x2048x13312 bf16 on h100-sxm-80gb", "all_reduce ring/simple 8 GPUs 4GiB"
  std::string metric;             ///< "TFLOP/s", "busbw GB/s" or "algbw GB/s"
  double measured = 0;            ///< In `metric` units.
  double predicted = 0;           ///< Under the refitted profile.
  std::vector<std::string> fits;  ///< Constants fitted to it (empty: a check only).
};

/// One refitted constant.
struct ConstantFit {
  std::string constant;  ///< Key path in the profile file.
  std::string file;      ///< Repo-relative microbenchmark file.
  std::string holder;    ///< Key path of the object holding it (where its fitted_to is).
  double current = 0;    ///< Value in the profile passed in.
  double fitted = 0;     ///< Least-squares value.
  int points = 0;
  double rms_log_error = 0;  ///< Over its points, at the fitted value.
  /// True when the profile's object holding this constant lists "file:<file>" in fitted_to.
  bool declared = false;
};

struct DefaultsFit {
  std::vector<ConstantFit> fits;
  std::vector<MicrobenchPoint> points;
  CalibrationProfile profile;  ///< The input with every fitted constant replaced.
};

/// Refits every constant named by the "fits" of the microbenchmark files `files` (repo-relative
/// paths under `root`), starting from `base`. Constants are fitted in file order, each with the
/// earlier ones already applied (the NVLS efficiency is relative to the NVLink tier's). Throws
/// InputError naming the file and key path for bad files, unknown constants or point ids.
DefaultsFit fit_defaults(const CalibrationProfile& base, const std::vector<std::string>& files,
                         const std::string& root);

/// The microbenchmark files under `root`/sim/calibration/microbench, sorted by name
/// (repo-relative).
std::vector<std::string> microbench_files(const std::string& root);

/// The value of fittable constant `key` in `p` (InputError naming `key` when it is not one).
double calibration_constant(const CalibrationProfile& p, const std::string& key);

}  // namespace tutti
