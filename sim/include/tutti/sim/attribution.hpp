#pragma once
// Breakdown attribution shared by the engines that produce per-op timings (native DES and
// SimGrid): one set of rules, so that the engines can differ only in their timings. The analytic
// engine has no per-op timeline of the whole iteration (closed forms over micro-batch 0), so it
// fills the same Breakdown from its own terms (analytic.cpp); it uses op_kind helpers from here.
#include <cstdint>
#include <functional>

#include "tutti/core/enum.hpp"
#include "tutti/models/program.hpp"
#include "tutti/sim/result.hpp"

namespace tutti {

/// Ops that occupy the GPU's compute units (timed by op_time_s).
inline bool is_compute(OpKind k) {
  return k == OpKind::Gemm || k == OpKind::Attention || k == OpKind::MemBound;
}
/// Point-to-point pipeline transfers.
inline bool is_p2p(OpKind k) {
  return k == OpKind::Send || k == OpKind::Recv;
}

/// The op timings (seconds from the iteration start) of one timeline: one rank (SimGrid) or the
/// representative timeline of a rank class (native). Arrays are indexed like `rc->ops`;
/// `rendezvous_s[i]` is when a communication op's peers had all arrived (its transfer start).
struct OpTimeline {
  const RankClass* rc = nullptr;
  const double* start_s = nullptr;
  const double* end_s = nullptr;
  const double* rendezvous_s = nullptr;
};

/// The timeline of the pipeline stage `peer_delta` stages away from the attributed one (the same
/// data-parallel replica), or nullptr when the engine has none. The pointer is read before the
/// next call (an engine may return the same storage each time).
using PeerTimeline = std::function<const OpTimeline*(int peer_delta)>;

/// What `attribute_timeline` fills: the breakdown and the busy times the power model uses.
struct Attribution {
  Breakdown breakdown;       // compute, exposed comm per GroupDim, bubble, other (moe_s not set)
  double gemm_busy_s = 0;    // compute-stream time in GEMM and attention ops
  double memory_busy_s = 0;  // compute-stream time in memory-bound ops
  double comm_busy_s = 0;    // union of communication op intervals (from rendezvous to end)
};

/// Attributes the iteration time of timeline `t` (the critical one: it ends last), walking its
/// compute stream in program order. Each op's compute time counts as compute; a gap before an
/// op counts against its latest-finishing dependency: a collective's group (exposed comm), a
/// send/recv as pipeline bubble until the peer arrived and as PP comm after; where the peer stage
/// was itself blocked on one of its own collectives in that wait (one level deep), the wait is
/// that collective's exposure, not bubble. Time after the compute stream's last op up to the
/// timeline's last op is charged to that op; the rest up to `iteration_s` is other. The terms sum
/// to `iteration_s`.
Attribution attribute_timeline(const OpTimeline& t, const PeerTimeline& peer, double iteration_s);

/// Busy time per MoE part of timeline `t` (communication ops from rendezvous to end); `total_s`
/// receives the sum over parts.
EnumArray<MoePart, double> moe_busy(const OpTimeline& t, double* total_s);

}  // namespace tutti
