#pragma once
// Pieces shared by the CPU and GPU replays and collective benchmarks (private to exec/src).
#include <cstdint>
#include <functional>
#include <vector>

#include "tutti/exec/bench.hpp"
#include "tutti/exec/replay.hpp"

namespace tutti::exec {

/// Per-rank element counts (fp32) of one collective or p2p op.
struct CollCounts {
  std::int64_t send = 0, recv = 0, block = 0;
};
/// Counts for a collective of nccl-tests size `bytes` over `g` ranks (at least one element per
/// rank; blocks rounded down to whole elements).
CollCounts coll_counts(Coll c, double bytes, int g);
CollCounts p2p_counts(double bytes);

/// Known values for the verifying pass (exact in fp32 for groups up to 1,024 ranks).
void fill_coll(Coll c, const CollCounts& k, int gi, int g, float* buf);
std::int64_t verify_coll(Coll c, const CollCounts& k, int gi, int g, const float* recv);
void fill_p2p(float* buf, std::int64_t n, int src_rank, int tag);
std::int64_t verify_p2p(const float* buf, std::int64_t n, int src_rank, int tag);

/// Repetitions of the (Q K^T, P V) GEMM pair so that 4 m n k * reps matches op.flops.
std::int64_t attention_repeats(const Op& op);
const RankClass& class_of_stage(const Program& p, int stage);
double median_of(std::vector<double> v);
/// Gathers every rank's timings on rank 0 and fills median/min/max of the iteration times.
void finish_result(const Session& s, const RankTimings& mine, ReplayResult& res);

/// The timed iterations shared by the CPU and GPU replays: res.iterations times, a barrier then
/// `iterate()`, which runs one iteration, leaves each op's start and end (s, from the iteration's
/// start) in `start` / `end` and returns this rank's wall time. Then fills the per-op medians, the
/// check sums (`checked` and `wrong` are read after the loop) and the gathered result. Collective.
void timed_iterations(const Session& s, int stage, const std::function<double()>& iterate,
                      const std::vector<double>& start, const std::vector<double>& end,
                      const std::int64_t& checked, const std::int64_t& wrong, ReplayResult& res);

/// A collective benchmark's result before its points: checks the size range of `o` (throws
/// InputError) and fills op, backend, ranks, hosts, tier, warmup and iters. Collective.
CollBenchResult coll_bench_result(const Session& s, const CollBenchOptions& o, const char* backend);
/// Fills a point's times, bandwidths and check from this rank's per-iteration time and wrong
/// elements (-1: not checked). Collective.
void finish_coll_point(const Session& s, const CollBenchOptions& o, double per_iter_s,
                       std::int64_t wrong, CollPoint& p);

}  // namespace tutti::exec
