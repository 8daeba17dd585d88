#pragma once
// Microbenchmarks in the form of nccl-tests (collectives) plus GEMM and memory-bound sweeps.
//
// Collective sizes follow nccl-tests: `size` is the per-rank buffer nccl-tests prints:
//   all_reduce: the buffer (in = out), all_gather: the gathered output, reduce_scatter: the full
//   input, alltoall: the whole send buffer, sendrecv: the message each rank sends to rank+1.
// algbw = size / time; busbw = algbw * bus_factor (nccl-tests' doc/PERFORMANCE.md):
//   all_reduce 2(n-1)/n, all_gather / reduce_scatter / alltoall (n-1)/n, sendrecv 1.
// time = per-iteration time of `iters` back-to-back calls after `warmup` calls, averaged over the
// ranks (nccl-tests' default `-a 1`); the slowest rank's time is kept too.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tutti/exec/device.hpp"
#include "tutti/models/coll_op.hpp"

namespace tutti::exec {

class Session;
class Watchdog;

/// The benchmarked operations: models' CollOp table (coll_op.hpp), the collectives of the Program
/// (Coll) that nccl-tests times plus "sendrecv"; to_string(op) and bus_factor(op, n) come with it.
using tutti::CollOp;
/// Parses "all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"; throws InputError
/// (file "--op") otherwise.
CollOp parse_coll_op(const std::string& s);

struct CollBenchOptions {
  CollOp op = CollOp::AllReduce;
  double min_bytes = 8;                    ///< -b
  double max_bytes = 128.0 * 1024 * 1024;  ///< -e
  double factor = 2;                       ///< -f (multiplicative step; 0 = use step_bytes)
  double step_bytes = 0;                   ///< -i (additive step)
  int warmup = 5;                          ///< -w
  int iters = 20;                          ///< -n
  bool check = true;  ///< -c: fill known values and verify the first call's result
};

struct CollPoint {
  double size_bytes = 0;   ///< nccl-tests "size" (after rounding the count to the rank count)
  std::int64_t count = 0;  ///< Elements (fp32) as nccl-tests prints "count".
  double time_s = 0;       ///< Mean over ranks of the per-iteration time.
  double time_max_s = 0;   ///< Slowest rank's per-iteration time.
  double algbw_Bps = 0;
  double busbw_Bps = 0;
  std::int64_t wrong = 0;  ///< Elements that failed the check, summed over ranks (-1: not checked).
};

struct CollBenchResult {
  std::string op;       ///< to_string(CollOp)
  std::string backend;  ///< "mpi" or "nccl"
  std::string dtype = "fp32";
  int ranks = 1;
  int hosts = 1;     ///< Distinct hosts in the world.
  std::string tier;  ///< "intra_node" (one host) or "inter_node".
  int warmup = 0, iters = 0;
  std::vector<CollPoint> points;
};

/// The collective sweep over MPI_COMM_WORLD with MPI (CPU buffers). Collective over all ranks.
CollBenchResult bench_collective_mpi(const Session& s, const CollBenchOptions& o, Watchdog* wd);
/// The same with NCCL on each rank's GPU (the ncclUniqueId travels over MPI). Throws InputError
/// without a CUDA backend or device.
CollBenchResult bench_collective_nccl(const Session& s, const CollBenchOptions& o, Watchdog* wd);

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
};

struct ComputeBenchOptions {
  std::vector<GemmShape> shapes;  ///< GEMMs to time (C[m,n] = A[m,k] B[k,n]).
  ExecType type = ExecType::FP32;
  std::vector<double> membound_bytes;  ///< Memory-bound (copy) sizes, bytes moved.
  int warmup = 2;
  int iters = 7;
};

struct GemmPoint {
  GemmShape shape;
  std::string type;          ///< to_string(ExecType)
  double flops = 0;          ///< 2mnk
  double time_s = 0;         ///< Mean over iterations (as nccl-tests times), then over ranks.
  double time_median_s = 0;  ///< Median over iterations, mean over ranks.
  double time_min_s = 0;     ///< Fastest iteration on any rank.
  double time_max_s = 0;     ///< Slowest rank's mean.
  double flops_per_s = 0;    ///< flops / time_s
};

struct MemPoint {
  double bytes = 0;          ///< Bytes moved (read + written).
  double time_s = 0;         ///< Mean over iterations and ranks.
  double time_median_s = 0;  ///< Median over iterations, mean over ranks.
  double bandwidth_Bps = 0;
};

struct ComputeBenchResult {
  std::string device;   ///< "cpu" or "gpu"
  std::string library;  ///< ComputeDevice::library()
  std::string model;    ///< ComputeDevice::model()
  int ranks = 1;  ///< Ranks that ran the sweep at the same time (all share the node's resources).
  int warmup = 0, iters = 0;
  std::vector<GemmPoint> gemm;
  std::vector<MemPoint> membound;
};

/// Every rank times each GEMM / copy at the same time (a barrier before each point), as in a
/// replay where all ranks compute at once. The mean over iterations is the reported time: on a
/// shared machine a median would favour short ops that fit in one scheduler slice, while a
/// replay's iteration pays the average. Collective over all ranks.
ComputeBenchResult bench_compute(const Session& s, ComputeDevice& dev, const ComputeBenchOptions& o,
                                 Watchdog* wd);

/// Parses a size sweep list: "256,512,1024", "256:4096:x2" (from:to:xfactor), "1024:4096:+1024".
/// Sizes take units ("64MiB") when `bytes`, else plain integers. Throws InputError naming `what`.
std::vector<double> parse_sweep(const std::string& text, const std::string& what, bool bytes);
/// Parses a size with optional unit suffix as nccl-tests does ("8", "128M", "1G", "64K", "64MiB").
double parse_nccl_size(const std::string& text, const std::string& what);

void to_json(nlohmann::json& j, const CollBenchResult& r);
void to_json(nlohmann::json& j, const ComputeBenchResult& r);

}  // namespace tutti::exec
