// Breakdown attribution (attribution.hpp): the one copy of the rules the native and SimGrid
// engines apply to their op timings.
#include "tutti/sim/attribution.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace tutti {

namespace {

/// The dependency of op `i` that finishes last (-1 when it has none).
std::int64_t latest_dep(const OpTimeline& t, std::size_t i) {
  const RankClass& rc = *t.rc;
  const Op& op = rc.ops[i];
  std::int64_t blocker = -1;
  double bt = -1;
  for (std::uint32_t d = 0; d < op.dep_count; ++d) {
    const std::uint32_t dep = rc.deps[op.dep_begin + d];
    if (t.end_s[dep] > bt) {
      bt = t.end_s[dep];
      blocker = dep;
    }
  }
  return blocker;
}

using Blocked = std::vector<std::tuple<double, double, GroupDim>>;

/// Intervals in which the compute stream of `t` waited on one of its own collectives.
Blocked blocked_on_collectives(const OpTimeline& t) {
  Blocked out;
  const RankClass& k = *t.rc;
  double pe = 0;
  for (std::size_t i = 0; i < k.ops.size(); ++i) {
    if (k.ops[i].stream != Stream::Compute) continue;
    const std::int64_t bl = latest_dep(t, i);
    if (bl >= 0 && k.ops[bl].kind == OpKind::Collective && t.start_s[i] > pe)
      out.emplace_back(pe, t.start_s[i], k.ops[bl].group);
    pe = std::max(pe, t.end_s[i]);
  }
  return out;
}

}  // namespace

Attribution attribute_timeline(const OpTimeline& t, const PeerTimeline& peer, double iteration_s) {
  Attribution out;
  Breakdown& b = out.breakdown;
  const RankClass& rc = *t.rc;
  std::map<int, Blocked> blocked_by_delta;  // per peer stage, computed on first use
  auto blocked = [&](int delta) -> const Blocked* {
    auto it = blocked_by_delta.find(delta);
    if (it == blocked_by_delta.end()) {
      const OpTimeline* p = peer ? peer(delta) : nullptr;
      it = blocked_by_delta.emplace(delta, p ? blocked_on_collectives(*p) : Blocked{}).first;
    }
    return &it->second;
  };
  auto attribute = [&](double from, double to, std::int64_t blocker) {
    if (to <= from) return;
    if (blocker < 0) {
      b.other_s += to - from;
      return;
    }
    const Op& op = rc.ops[blocker];
    if (op.kind == OpKind::Collective) {
      b.exposed_comm_s[op.group] += to - from;
    } else if (is_p2p(op.kind)) {
      const double rv = std::clamp(t.rendezvous_s[blocker], from, to);
      double on_coll = 0;
      for (const auto& [a, z, dim] : *blocked(op.peer_delta)) {
        const double lo = std::max(a, from), hi = std::min(z, rv);
        if (hi <= lo) continue;
        b.exposed_comm_s[dim] += hi - lo;
        on_coll += hi - lo;
      }
      b.bubble_s += std::max(0.0, rv - from - on_coll);
      b.exposed_comm_s[GroupDim::PP] += to - rv;
    } else {
      b.other_s += to - from;
    }
  };
  double prev_end = 0;
  for (std::size_t i = 0; i < rc.ops.size(); ++i) {
    const Op& op = rc.ops[i];
    if (op.stream != Stream::Compute) continue;
    const double dur = t.end_s[i] - t.start_s[i];
    if (is_compute(op.kind)) {
      b.compute_s += dur;
      (op.kind == OpKind::MemBound ? out.memory_busy_s : out.gemm_busy_s) += dur;
    }
    attribute(prev_end, t.start_s[i], latest_dep(t, i));
    if (!is_compute(op.kind)) attribute(t.start_s[i], t.end_s[i], static_cast<std::int64_t>(i));
    prev_end = std::max(prev_end, t.end_s[i]);
  }
  // Tail: after the last compute-stream op, the op that ends last on this timeline.
  std::int64_t last = -1;
  double le = -1;
  for (std::size_t i = 0; i < rc.ops.size(); ++i)
    if (t.end_s[i] > le) {
      le = t.end_s[i];
      last = static_cast<std::int64_t>(i);
    }
  attribute(prev_end, le, last);
  b.other_s += std::max(0.0, iteration_s - std::max(prev_end, le));
  // Communication busy time: the union of communication op intervals.
  std::vector<std::pair<double, double>> iv;
  for (std::size_t i = 0; i < rc.ops.size(); ++i)
    if (!is_compute(rc.ops[i].kind))
      iv.push_back({std::max(t.start_s[i], t.rendezvous_s[i]), t.end_s[i]});
  std::sort(iv.begin(), iv.end());
  double busy = 0, cs = -1, ce = -1;
  for (auto [a, z] : iv) {
    if (a > ce) {
      if (ce > cs) busy += ce - cs;
      cs = a;
      ce = z;
    } else {
      ce = std::max(ce, z);
    }
  }
  if (ce > cs) busy += ce - cs;
  out.comm_busy_s = busy;
  return out;
}

EnumArray<MoePart, double> moe_busy(const OpTimeline& t, double* total_s) {
  EnumArray<MoePart, double> m{};
  double tot = 0;
  for (std::size_t i = 0; i < t.rc->ops.size(); ++i) {
    const Op& op = t.rc->ops[i];
    if (op.moe_part == MoePart::None) continue;
    const double a = is_compute(op.kind) ? t.start_s[i] : std::max(t.start_s[i], t.rendezvous_s[i]);
    const double d = std::max(0.0, t.end_s[i] - a);
    m[op.moe_part] += d;
    tot += d;
  }
  if (total_s) *total_s = tot;
  return m;
}

}  // namespace tutti
