// Analytic engine: closed forms, no events (engine.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <tuple>
#include <vector>

#include "tutti/core/error.hpp"
#include "tutti/sim/attribution.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/engine.hpp"

namespace tutti {

namespace {
// Gradient and parameter groups of data parallelism (dense and expert): their collectives run on
// the DP stream, overlapped with backward, and count in the DP tail rather than on the compute
// path.
bool is_dp(GroupDim g) {
  return g == GroupDim::DP || g == GroupDim::DPxCP || g == GroupDim::EDP ||
         g == GroupDim::DPShard || g == GroupDim::DPReplica;
}
}  // namespace

AnalyticTime analytic_iteration(const AnalyticJob& job) {
  AnalyticTime t;
  const std::size_t p = job.stages.size();
  if (p == 0) return t;
  const double m = std::max(1, job.microbatches);
  const double v = std::max(1, job.virtual_stages);
  std::size_t crit = 0, tail_stage = 0;
  double tcrit = -1, sum = 0, p2p = 0, tail = 0;
  for (std::size_t s = 0; s < p; ++s) {
    const AnalyticStage& st = job.stages[s];
    double T = st.fwd_s + st.bwd_s;
    sum += T;
    if (T > tcrit) {
      tcrit = T;
      crit = s;
    }
    if (s + 1 < p) p2p += st.p2p_s;
    const double tail_s = std::max(0.0, st.dp_comm_s - st.dp_overlap_s) + st.optimizer_s;
    if (tail_s > tail) {
      tail = tail_s;
      tail_stage = s;
    }
  }
  const AnalyticStage& c = job.stages[crit];
  double exposed_mb = 0;
  for (double x : c.exposed_s) exposed_mb += x;
  const double fill = (sum - tcrit) / v;
  t.iteration_s = m * tcrit + fill + 2 * p2p + tail;
  t.compute_s = m * (tcrit - exposed_mb) + c.optimizer_s;
  t.bubble_s = fill;
  for (GroupDim d : enum_values<GroupDim>()) t.exposed_s[d] = m * c.exposed_s[d];
  t.exposed_s[GroupDim::PP] += 2 * p2p;
  double dp_tail = std::max(0.0, tail - c.optimizer_s);
  // The exposed DP tail, shared among the gradient groups in proportion to their traffic time.
  const AnalyticStage& ts = job.stages[tail_stage];
  for (GroupDim d : enum_values<GroupDim>())
    if (ts.dp_comm_dim_s[d] > 0) t.exposed_s[d] += dp_tail * ts.dp_comm_dim_s[d] / ts.dp_comm_s;
  if (ts.dp_comm_s <= 0) t.exposed_s[GroupDim::DP] += dp_tail;
  // MoE parts: of the stage with the most MoE busy time (the critical one may be dense only).
  double moe_best = 0;
  for (const AnalyticStage& st : job.stages) {
    double tot = 0;
    for (MoePart q : enum_values<MoePart>())
      if (q != MoePart::None) tot += st.moe_s[q];
    if (tot > moe_best) {
      moe_best = tot;
      t.moe_s = st.moe_s;
    }
  }
  t.other_s =
      std::max(0.0, t.iteration_s - t.compute_s - t.bubble_s - 2 * p2p - dp_tail - m * exposed_mb);
  return t;
}

double collective_time_s(Coll coll, double bytes, const std::vector<int>& group,
                         const CollectiveContext& ctx) {
  if (group.size() <= 1) return 0;
  return collective_estimate_s(coll, bytes, group, ctx);
}

double stage_collective_time_s(Coll coll, double bytes, GroupDim dim, const Layout& layout,
                               int first, const CollectiveContext& ctx, std::uint64_t seed) {
  const Topology& topo = *ctx.topo;
  const int per_stage = layout.tp * layout.cp * layout.dp;
  // Every group of the dimension inside the stage (the engine's Des::groups_of).
  std::vector<char> seen(per_stage, 0);
  std::vector<std::vector<int>> groups;
  for (int r = first; r < first + per_stage; ++r) {
    if (seen[r - first]) continue;
    std::vector<int> g = group_ranks(layout, r, dim);
    for (int x : g)
      if (x >= first && x < first + per_stage) seen[x - first] = 1;
    groups.push_back(std::move(g));
  }
  if (groups.empty() || groups.front().size() <= 1) return 0;
  bool local = true;
  for (const auto& g : groups)
    for (int r : g)
      if (topo.node_of(r) != topo.node_of(g[0])) local = false;
  // Groups inside one node each: disjoint NVLink copies of one another; one stands for all.
  if (local)
    return simulate_collectives({plan_collective(coll, bytes, groups.front(), ctx)}, topo,
                                *ctx.profile, seed);
  // Groups that cross the fabric share NICs and switch links: one max-min run of all of them.
  std::vector<CollectivePlan> plans;
  plans.reserve(groups.size());
  for (const auto& g : groups) plans.push_back(plan_collective(coll, bytes, g, ctx));
  return simulate_collectives(plans, topo, *ctx.profile, seed);
}

AnalyticJob analytic_job(const Program& program, const SimCluster& cluster,
                         const CalibrationProfile& profile, double compute_slowdown,
                         std::uint64_t) {
  const Topology& topo = *cluster.topology;
  CollectiveContext ctx =
      make_collective_context(topo, profile, cluster.nvls, cluster.sharp, program);
  const Layout& L = program.layout;
  const int per_stage = L.tp * L.cp * L.dp;
  AnalyticJob job;
  job.virtual_stages = std::max(1, L.vp);
  job.schedule = L.schedule;
  std::uint32_t max_mb = 0;
  for (const RankClass& rc : program.classes) {
    AnalyticStage st;
    const int first = rc.stage * per_stage;
    // Memoised collective times by (coll, dim, bytes) within the class.
    std::vector<std::tuple<int, int, double, double>> memo;
    auto coll_time = [&](const Op& op) {
      for (auto& [c, g, b, t] : memo)
        if (c == static_cast<int>(op.coll) && g == static_cast<int>(op.group) && b == op.bytes)
          return t;
      double t = collective_time_s(op.coll, op.bytes, group_ranks(L, first, op.group), ctx);
      memo.emplace_back(static_cast<int>(op.coll), static_cast<int>(op.group), op.bytes, t);
      return t;
    };
    std::vector<double> finish(rc.ops.size(), 0.0);
    // When the op may start: the latest finish, in `f`, of the ops it depends on.
    auto ready = [&](const std::vector<double>& f, const Op& op) {
      double t = 0;
      for (std::uint32_t d = 0; d < op.dep_count; ++d)
        t = std::max(t, f[rc.deps[op.dep_begin + d]]);
      return t;
    };
    double tc = 0, td = 0, compute_total = 0;
    // With tp_overlap, TP collectives run beside GEMMs: micro-batch 0's forward and backward are
    // list-scheduled on a compute and a comm timeline, and each phase takes its span (the comm
    // counts as exposed only where the span exceeds the phase's compute).
    const bool overlap = L.tp_overlap;
    std::vector<double> finish0(overlap ? rc.ops.size() : 0, 0.0);
    double c0 = 0, k0 = 0;
    double lo[2] = {1e300, 1e300}, hi[2] = {0, 0}, comp[2] = {0, 0};
    EnumArray<GroupDim, double> comm[2] = {};
    auto schedule0 = [&](std::size_t i, const Op& op, double t, bool on_comm) {
      double& line = on_comm ? k0 : c0;
      const double start = std::max(line, ready(finish0, op));
      line = start + t;
      finish0[i] = line;
      const int b = op.phase == Phase::Forward ? 0 : 1;
      lo[b] = std::min(lo[b], start);
      hi[b] = std::max(hi[b], line);
      if (on_comm)
        comm[b][op.group] += t;
      else
        comp[b] += t;
    };
    for (std::size_t i = 0; i < rc.ops.size(); ++i) {
      const Op& op = rc.ops[i];
      max_mb = std::max(max_mb, op.microbatch);
      const double dep_t = ready(finish, op);
      const bool fb =
          op.phase == Phase::Forward || op.phase == Phase::Backward || op.phase == Phase::Recompute;
      const bool in_mb0 = overlap && fb && op.microbatch == 0;  // on micro-batch 0's timelines
      if (is_compute(op.kind)) {
        double t = op_time_s(op, cluster.gpu, profile) * compute_slowdown;
        st.moe_s[op.moe_part] += t;
        if (in_mb0) schedule0(i, op, t, false);
        if (fb && op.microbatch == 0) (op.phase == Phase::Forward ? st.fwd_s : st.bwd_s) += t;
        if (!fb) st.optimizer_s += t;
        compute_total += t;
        (op.kind == OpKind::MemBound ? st.memory_busy_s : st.gemm_busy_s) += t;
        // Mini list schedule of compute vs DP streams (DP tail); blocking comm counted elsewhere.
        tc = std::max(tc, dep_t) + t;
        finish[i] = tc;
      } else if (op.kind == OpKind::Collective && is_dp(op.group)) {
        double t = coll_time(op);
        st.dp_comm_s += t;
        st.dp_comm_dim_s[op.group] += t;
        st.comm_busy_s += t;
        td = std::max(td, dep_t) + t;
        finish[i] = td;
      } else if (op.kind == OpKind::Collective) {
        double t = coll_time(op);
        st.moe_s[op.moe_part] += t;
        st.comm_busy_s += t;
        if (in_mb0) schedule0(i, op, t, true);
        if (fb && op.microbatch == 0) {
          (op.phase == Phase::Forward ? st.fwd_s : st.bwd_s) += t;
          st.exposed_s[op.group] += t;
        }
        finish[i] = dep_t;
      } else {
        if (op.kind == OpKind::Send) {
          const int b = first + op.peer_delta * per_stage;
          const bool cross =
              b >= 0 && b < topo.num_gpus() && topo.domain_of(first) != topo.domain_of(b);
          const double t =
              profile.nccl.p2p_latency_s + op.bytes / (cross ? ctx.inter_bw_Bps : ctx.intra_bw_Bps);
          st.comm_busy_s += t;
          if (op.microbatch == 0 && op.phase == Phase::Forward && op.peer_delta > 0) st.p2p_s = t;
        }
        finish[i] = dep_t;
        if (in_mb0) finish0[i] = ready(finish0, op);
      }
    }
    double tail = std::max(0.0, std::max(tc, td) - compute_total);
    st.dp_overlap_s = st.dp_comm_s - tail;
    if (overlap) {
      for (double& e : st.exposed_s) e = 0;
      for (int b = 0; b < 2; ++b) {
        const double span = hi[b] > lo[b] ? hi[b] - lo[b] : 0.0;
        double total = 0;
        for (double x : comm[b]) total += x;
        const double exposed = std::max(0.0, span - comp[b]);
        const double share = total > 0 ? std::min(1.0, exposed / total) : 0.0;
        for (GroupDim d : enum_values<GroupDim>()) st.exposed_s[d] += comm[b][d] * share;
        (b == 0 ? st.fwd_s : st.bwd_s) = comp[b] + std::min(exposed, total);
      }
    }
    job.stages.push_back(st);
  }
  job.microbatches = static_cast<int>(max_mb) + 1;
  return job;
}

void record_analytic_time(const AnalyticTime& t, SimResult& r) {
  r.engine = "analytic";
  r.iteration_time_s = t.iteration_s;
  r.breakdown.compute_s = t.compute_s;
  r.breakdown.bubble_s = t.bubble_s;
  r.breakdown.other_s = t.other_s;
  r.breakdown.exposed_comm_s = t.exposed_s;
  r.breakdown.moe_s = t.moe_s;
  r.breakdown.moe_s[MoePart::None] = 0;
}

namespace {

// pp = 1: one rank class and no pipeline, so the closed form's per-micro-batch terms can be
// replaced by the class's own op order at no more than O(ops) cost: every op is list-scheduled in
// program order on its stream (it starts when its stream is free and its dependencies are done),
// compute ops take op_time_s, collectives their time in every group of the stage at once
// (stage_collective_time_s). The breakdown then comes from attribute_timeline, the rules the
// native and SimGrid engines apply to their own op timings, so the three engines attribute
// exposed time to the same dimensions. Cross-stream sharing (a DP-stream gather beside an EP
// all-to-all on the same NICs) is not modelled: each collective is timed without the other
// streams' traffic.
bool list_schedule(const Program& program, const SimCluster& cluster,
                   const CalibrationProfile& profile, const ProgramSimOptions& options,
                   SimResult& r) {
  if (program.classes.size() != 1 || program.layout.pp != 1) return false;
  const RankClass& rc = program.classes.front();
  const CollectiveContext ctx =
      make_collective_context(*cluster.topology, profile, cluster.nvls, cluster.sharp, program);
  const Layout& L = program.layout;
  const int first = rc.stage * L.tp * L.cp * L.dp;
  std::vector<std::tuple<int, int, double, double>> memo;
  const std::size_t n = rc.ops.size();
  std::vector<double> start(n, 0.0), end(n, 0.0);
  EnumArray<Stream, double> free_at{};
  double iter = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = rc.ops[i];
    if (is_p2p(op.kind)) return false;  // no pipeline peers with pp = 1
    double t = 0;
    if (is_compute(op.kind)) {
      t = op_time_s(op, cluster.gpu, profile) * options.compute_slowdown;
    } else if (op.kind == OpKind::Collective) {
      bool found = false;
      for (auto& [c, g, b, x] : memo)
        if (c == static_cast<int>(op.coll) && g == static_cast<int>(op.group) && b == op.bytes) {
          t = x;
          found = true;
          break;
        }
      if (!found) {
        t = stage_collective_time_s(op.coll, op.bytes, op.group, L, first, ctx, options.seed);
        memo.emplace_back(static_cast<int>(op.coll), static_cast<int>(op.group), op.bytes, t);
      }
    }
    double s0 = free_at[op.stream];
    for (std::uint32_t d = 0; d < op.dep_count; ++d)
      s0 = std::max(s0, end[rc.deps[op.dep_begin + d]]);
    start[i] = s0;
    end[i] = s0 + t;
    free_at[op.stream] = end[i];
    iter = std::max(iter, end[i]);
  }
  const OpTimeline tl{&rc, start.data(), end.data(), start.data()};
  const Attribution a = attribute_timeline(tl, nullptr, iter);
  r.engine = "analytic";
  r.iteration_time_s = iter;
  r.breakdown = a.breakdown;
  double total = 0;
  r.breakdown.moe_s = moe_busy(tl, &total);
  r.gemm_busy_s = a.gemm_busy_s;
  r.memory_busy_s = a.memory_busy_s;
  r.comm_busy_s = a.comm_busy_s;
  return true;
}

}  // namespace

SimResult simulate_program_analytic(const Program& program, const SimCluster& cluster,
                                    const CalibrationProfile& profile,
                                    const ProgramSimOptions& options) {
  auto wall0 = std::chrono::steady_clock::now();
  check_internal(cluster.topology != nullptr,
                 "simulate_program_analytic: cluster without topology");
  if (program.world > cluster.topology->num_gpus())
    throw InputError("the program needs " + std::to_string(program.world) + " GPUs but cluster " +
                     cluster.name + " has " + std::to_string(cluster.topology->num_gpus()));
  SimResult r;
  if (list_schedule(program, cluster, profile, options, r)) {
    finish_result(r, program, cluster, profile, options);
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  }
  AnalyticJob job = analytic_job(program, cluster, profile, options.compute_slowdown);
  AnalyticTime t = analytic_iteration(job);
  record_analytic_time(t, r);
  // Power-model busy times from op activity, of the class the native engine reports them for:
  // the one whose last op ends last, which under 1F1B (plain or interleaved) is the first
  // pipeline stage (it runs the last backward).
  if (!job.stages.empty()) {
    const AnalyticStage& first = job.stages.front();
    r.gemm_busy_s = first.gemm_busy_s;
    r.memory_busy_s = first.memory_busy_s;
    r.comm_busy_s = std::min(t.iteration_s, first.comm_busy_s);
  }
  finish_result(r, program, cluster, profile, options);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

}  // namespace tutti
