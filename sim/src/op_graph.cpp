#include "tutti/sim/op_graph.hpp"

#include <algorithm>
#include <map>

namespace tutti {

OpGraph build_op_graph(const RankClass& rc) {
  OpGraph g;
  const std::size_t n = rc.ops.size();
  g.indeg0.assign(n, 0);
  g.stream_next.assign(n, -1);
  g.occurrence.assign(n, 0);
  std::vector<std::uint32_t> cnt(n + 1, 0);
  std::int32_t last[kNumStreams];
  std::fill(last, last + kNumStreams, -1);
  std::map<std::uint16_t, std::uint32_t> occ;
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = rc.ops[i];
    check_internal(op.dep_begin + op.dep_count <= rc.deps.size(),
                   "program: dependency range out of bounds");
    for (std::uint32_t d = 0; d < op.dep_count; ++d) {
      const std::uint32_t dep = rc.deps[op.dep_begin + d];
      check_internal(dep < i, "program: an op depends on a later op");
      ++cnt[dep];
      ++g.indeg0[i];
    }
    const int st = static_cast<int>(op.stream);
    if (last[st] >= 0) {
      g.stream_next[last[st]] = static_cast<std::int32_t>(i);
      ++g.indeg0[i];
    }
    last[st] = static_cast<std::int32_t>(i);
    g.occurrence[i] = occ[op.name]++;
  }
  g.done_next = g.stream_next;
  for (std::size_t i = 0; i < n; ++i)
    if (is_p2p(rc.ops[i].kind)) g.done_next[i] = -1;
  g.succ_off.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) g.succ_off[i + 1] = g.succ_off[i] + cnt[i];
  g.succ.assign(g.succ_off[n], 0);
  std::vector<std::uint32_t> fill(g.succ_off.begin(), g.succ_off.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = rc.ops[i];
    for (std::uint32_t d = 0; d < op.dep_count; ++d)
      g.succ[fill[rc.deps[op.dep_begin + d]]++] = static_cast<std::uint32_t>(i);
  }
  return g;
}

}  // namespace tutti
