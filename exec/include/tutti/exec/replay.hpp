#pragma once
// Replay of a Program on real hardware: each MPI rank runs the op list of its pipeline stage
//   * Gemm: a GEMM of the same shape (OpenBLAS on CPU ranks, cuBLAS on GPU ranks),
//   * Attention: as its two GEMMs (Q K^T and P V), repeated so that the FLOPs match the op,
//   * MemBound: a copy moving the same bytes,
//   * Collective: the same collective over the same group (an MPI communicator / NCCL
//     communicator built from group_ranks) with the same bytes (fp32 elements),
//   * Send/Recv: point-to-point with the peer stage, same bytes,
// in program order with the Program's streams: on CPU ranks communication is posted as
// nonblocking MPI calls (one communicator per stream and group) and progressed at op boundaries,
// compute runs in order on the rank's core(s); on GPU ranks each stream is a CUDA stream, deps
// are CUDA events and collectives are NCCL calls on the communication streams.
// A first pass fills every collective/p2p buffer with known values and verifies the results
// (sums, gathered blocks, permutations); then `warmup` untimed and `iterations` timed
// iterations follow. Every rank records the duration and start of every op of every timed
// iteration; the iteration time is the slowest rank's, and the result is the median.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tutti/models/kind_key.hpp"
#include "tutti/models/program.hpp"

namespace tutti::exec {

class Session;
class Watchdog;

struct ReplayOptions {
  int warmup = 2;      ///< Untimed iterations after the check pass.
  int iterations = 5;  ///< Timed iterations (the result is their median).
  bool check = true;   ///< Run the verifying pass first.
};

/// One rank's view of one op over the timed iterations.
struct OpTiming {
  double time_s = 0;   ///< Median duration (start to completion seen by this rank).
  double start_s = 0;  ///< Median start, from the iteration start.
};

struct RankTimings {
  int rank = 0;
  int stage = 0;                    ///< Pipeline stage = index of its RankClass.
  std::vector<OpTiming> ops;        ///< Indexed like the class's ops.
  std::vector<double> iteration_s;  ///< This rank's own time per timed iteration.
};

struct ReplayResult {
  std::string device;           ///< "cpu" or "gpu"
  std::string compute_library;  ///< OpenBLAS or cuBLAS version line
  std::string comm_library;     ///< "MPI: <library>" or "NCCL 2.x.y"
  int world = 1;
  int warmup = 0, iterations = 0;
  std::vector<double> iteration_times_s;  ///< Per timed iteration: the slowest rank's time.
  double iteration_time_s = 0;            ///< Median of iteration_times_s.
  double iteration_min_s = 0, iteration_max_s = 0;
  std::int64_t checked_ops = 0;     ///< Collective and p2p ops verified (summed over ranks).
  std::int64_t wrong_elements = 0;  ///< Elements that failed verification (summed over ranks).
  std::vector<RankTimings> ranks;   ///< Every rank's timings (complete on rank 0 only).
};

/// Runs the Program on CPU ranks (MPI + OpenBLAS). The MPI world must have program.world ranks
/// (checked by the caller with Session::require_world). Collective over all ranks.
ReplayResult replay_cpu(const Session& s, const Program& p, const ReplayOptions& o, Watchdog* wd);
/// The same on GPU ranks (cuBLAS + NCCL; one GPU per rank). Throws InputError without CUDA.
ReplayResult replay_gpu(const Session& s, const Program& p, const ReplayOptions& o, Watchdog* wd);

/// Sum over a class's ops of the median op times, per op kind, averaged over the ranks of the
/// class and then taken for the slowest class: keys "gemm", "attention", "membound",
/// "collective.tp", "collective.dp", ... "send", "recv". Seconds per iteration.
std::vector<std::pair<std::string, double>> measured_by_kind(const ReplayResult& r,
                                                             const Program& p);
// The key of an op in measured_by_kind ("collective.dp", "gemm", ...) is kind_key
// (models/kind_key.hpp), shared with live validation's prediction.

/// Result JSON: device, libraries, world, iterations, iteration_time_s (median), min, max,
/// iteration_times_s, check{ops, wrong_elements}, by_kind{...}, ops (per class: name, kind,
/// stream, group, bytes, flops) and ranks (per rank: stage, op_time_s[], op_start_s[]).
void to_json(nlohmann::json& j, const ReplayResult& r, const Program& p);

}  // namespace tutti::exec
