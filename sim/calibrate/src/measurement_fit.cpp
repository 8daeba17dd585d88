// `tutti calibrate MEASUREMENTS`: the profile fitted to live measurements (measurement_fit.hpp).
// Moved from cli/calibrate.cpp (issue 23); the fits and their outputs are unchanged.
#include "tutti/calibrate/measurement_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "tutti/calibrate/decode_fit.hpp"
#include "tutti/calibrate/fit.hpp"
#include "tutti/core/error.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::calibrate {

namespace {

Coll coll_of(const std::string& op) {
  if (op == "all_reduce") return Coll::AllReduce;
  if (op == "all_gather") return Coll::AllGather;
  if (op == "reduce_scatter") return Coll::ReduceScatter;
  return Coll::AllToAll;
}

/// The GPUs a bench of `ranks` ranks over `hosts` hosts ran on: the first ranks/hosts GPUs of
/// the first `hosts` nodes.
std::vector<int> bench_group(const CollectiveSweep& b, const Cluster& c) {
  std::vector<int> g;
  int per_host = b.ranks / std::max(1, b.hosts);
  if (b.hosts > c.nodes || per_host > c.gpus_per_node)
    throw InputError(c.file, "nodes", fmt::format("{} nodes x {} GPUs", c.nodes, c.gpus_per_node),
                     fmt::format("room for the bench's {} ranks on {} hosts", b.ranks, b.hosts));
  for (int h = 0; h < b.hosts; ++h)
    for (int r = 0; r < per_host; ++r) g.push_back(h * c.gpus_per_node + r);
  return g;
}

/// Engine time of one bench point under `prof`.
double engine_time(const CollectiveSweep& b, double size, const std::vector<int>& group,
                   const Topology& topo, const CalibrationProfile& prof) {
  CollectiveContext ctx = make_collective_context(topo, prof, false, false);
  if (b.op == "sendrecv") {
    std::vector<CollectivePlan> plans;
    for (std::size_t i = 0; i < group.size(); ++i)
      plans.push_back(plan_p2p(group[i], group[(i + 1) % group.size()], size, ctx));
    return simulate_collectives(plans, topo, prof);
  }
  CollectivePlan plan = plan_collective(coll_of(b.op), size, group, ctx);
  return simulate_collectives({plan}, topo, prof);
}

}  // namespace

std::vector<double> nnls_rel(const std::vector<std::vector<double>>& X,
                             const std::vector<double>& y, const std::vector<double>& t) {
  const std::size_t n = X.empty() ? 0 : X[0].size();
  std::vector<double> best(n, 0.0);
  double best_err = 1e300;
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    std::vector<std::size_t> cols;
    for (std::size_t c = 0; c < n; ++c)
      if (mask & (1u << c)) cols.push_back(c);
    const std::size_t m = cols.size();
    std::vector<std::vector<double>> A(m, std::vector<double>(m + 1, 0.0));
    for (std::size_t i = 0; i < y.size(); ++i) {
      double w = 1.0 / (t[i] * t[i]);
      for (std::size_t a = 0; a < m; ++a) {
        for (std::size_t b = 0; b < m; ++b) A[a][b] += w * X[i][cols[a]] * X[i][cols[b]];
        A[a][m] += w * X[i][cols[a]] * y[i];
      }
    }
    bool ok = true;  // Gauss-Jordan
    for (std::size_t p = 0; p < m && ok; ++p) {
      std::size_t piv = p;
      for (std::size_t r = p + 1; r < m; ++r)
        if (std::fabs(A[r][p]) > std::fabs(A[piv][p])) piv = r;
      if (std::fabs(A[piv][p]) < 1e-300) ok = false;
      if (!ok) break;
      std::swap(A[p], A[piv]);
      for (std::size_t r = 0; r < m; ++r)
        if (r != p) {
          double f = A[r][p] / A[p][p];
          for (std::size_t c = p; c <= m; ++c) A[r][c] -= f * A[p][c];
        }
    }
    if (!ok) continue;
    std::vector<double> a(n, 0.0);
    for (std::size_t p = 0; p < m; ++p) {
      a[cols[p]] = A[p][m] / A[p][p];
      if (a[cols[p]] < 0) ok = false;
    }
    if (!ok) continue;
    double e = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      double pred = 0;
      for (std::size_t c = 0; c < n; ++c) pred += X[i][c] * a[c];
      e += std::pow((pred - y[i]) / t[i], 2);
    }
    if (e < best_err) {
      best_err = e;
      best = a;
    }
  }
  return best;
}

namespace {

/// Tiers of the links on the route a -> b.
std::vector<Tier> route_tiers(const Topology& topo, int a, int b) {
  std::vector<std::uint32_t> path;
  topo.route(a, b, 0, path);
  std::vector<Tier> out;
  for (auto l : path)
    if (std::find(out.begin(), out.end(), topo.links()[l].tier) == out.end())
      out.push_back(topo.links()[l].tier);
  return out;
}

}  // namespace

void fit_network(const std::vector<CollectiveSweep>& benches, const Cluster& c,
                 CalibrationProfile& prof, nlohmann::json& report) {
  const Topology& topo = *c.topology;
  // One fit per (backend, tier): intra-node benches set the scale-up tier, inter-node ones the
  // fabric tiers.
  std::map<std::pair<std::string, std::string>, std::vector<const CollectiveSweep*>> groups;
  for (const auto& b : benches) groups[{b.backend, b.tier}].push_back(&b);
  for (const auto& [key, list] : groups) {
    const bool mpi = key.first == "mpi";
    const bool intra = key.second == "intra_node";
    if (mpi) {  // MPI has no NCCL protocols or trees: one ring/simple model
      for (auto& A : prof.nccl.algorithms) {
        A.base_latency_s[static_cast<int>(NcclProto::LL)] = -1;
        A.base_latency_s[static_cast<int>(NcclProto::LL128)] = -1;
        for (auto& hw : A.step_latency_s) hw[static_cast<int>(NcclProto::Simple)] = 0;
      }
      prof.nccl.enable_tree = prof.nccl.enable_nvls = prof.nccl.enable_sharp =
          prof.nccl.enable_pat = false;
      prof.nccl.net_overhead_s = 0;  // NCCL's proxy overhead and ring plateau are not MPI's
      prof.nccl.ring_plateau_latency_factor = 1.0;
    }
    std::vector<Tier> tiers;
    {
      std::vector<int> g0 = bench_group(*list.front(), c);
      if (g0.size() < 2) continue;
      auto all = route_tiers(topo, g0[0], g0.back());
      auto intra_tiers = c.gpus_per_node > 1 ? route_tiers(topo, 0, 1) : std::vector<Tier>{};
      for (Tier t : all)
        if (intra || std::find(intra_tiers.begin(), intra_tiers.end(), t) == intra_tiers.end())
          tiers.push_back(t);
    }
    if (tiers.empty()) continue;
    auto with = [&](double eff, double base, double p2p) {
      CalibrationProfile p = prof;
      for (Tier t : tiers) p.tiers[static_cast<int>(t)].bandwidth_efficiency = eff;
      if (mpi)
        p.nccl.algorithms[static_cast<int>(NcclAlgo::Ring)]
            .base_latency_s[static_cast<int>(NcclProto::Simple)] = base;
      if (mpi) p.nccl.p2p_latency_s = p2p;
      return p;
    };
    // Affine decomposition of the engine's time in (base, p2p, 1/eff) per point.
    CalibrationProfile p1 = with(1.0, 0, 0), p2 = with(0.5, 0, 0), p3 = with(1.0, 1e-3, 0),
                       p4 = with(1.0, 0, 1e-3);
    std::vector<std::vector<double>> X;
    std::vector<double> y, t;
    struct Pt {
      const CollectiveSweep* b;
      double size, time;
      std::vector<int> group;
    };
    std::vector<Pt> pts;
    for (const auto* b : list) {
      auto g = bench_group(*b, c);
      for (const auto& [size_bytes, time_s] : b->points)
        if (time_s > 0 && size_bytes > 0) pts.push_back({b, size_bytes, time_s, g});
    }
    for (const auto& p : pts) {
      double T1 = engine_time(*p.b, p.size, p.group, topo, p1),
             T2 = engine_time(*p.b, p.size, p.group, topo, p2);
      double D = T2 - T1, L = T1 - D;
      double R = mpi ? (engine_time(*p.b, p.size, p.group, topo, p3) - T1) / 1e-3 : 0;
      double Q = mpi ? (engine_time(*p.b, p.size, p.group, topo, p4) - T1) / 1e-3 : 0;
      X.push_back({R, Q, D});
      y.push_back(p.time - L);
      t.push_back(p.time);
    }
    if (pts.size() < 2) continue;
    // Two stages: the bandwidth from the large points (>= 1 MiB, bandwidth-bound), then the
    // latencies from the small ones (< 64 KiB) with that bandwidth. One joint relative fit
    // would let the many latency-bound points pick the bandwidth.
    std::vector<double> a(3, 0.0);
    {
      std::vector<std::vector<double>> Xb;
      std::vector<double> yb, tb;
      for (std::size_t i = 0; i < pts.size(); ++i)
        if (pts[i].size >= 1048576) {
          Xb.push_back({X[i][2]});
          yb.push_back(y[i]);
          tb.push_back(t[i]);
        }
      if (Xb.empty())
        for (std::size_t i = 0; i < pts.size(); ++i) {
          Xb.push_back({X[i][2]});
          yb.push_back(y[i]);
          tb.push_back(t[i]);
        }
      a[2] = nnls_rel(Xb, yb, tb)[0];
      std::vector<std::vector<double>> Xl;
      std::vector<double> yl, tl;
      for (std::size_t i = 0; i < pts.size(); ++i)
        if (pts[i].size < 65536) {
          Xl.push_back({X[i][0], X[i][1]});
          yl.push_back(y[i] - a[2] * X[i][2]);
          tl.push_back(t[i]);
        }
      if (mpi && !Xl.empty()) {
        auto l = nnls_rel(Xl, yl, tl);
        a[0] = l[0];
        a[1] = l[1];
      }
    }
    double inv_eff = a[2] > 0 ? a[2] : 1.0;
    double eff = 1.0 / inv_eff;
    if (eff > 1.0) {
      // Faster than the nominal link: the catalog's bandwidth is too low. The profile cannot
      // raise a link's bandwidth, so efficiency is capped at 1 and the report says so.
      eff = 1.0;
    }
    prof = with(eff, mpi ? a[0] : 0, mpi ? a[1] : prof.nccl.p2p_latency_s);
    double se = 0, me = 0;
    nlohmann::json per_op = nlohmann::json::object();
    std::map<std::string, std::pair<double, int>> op_err;
    for (const auto& p : pts) {
      double pred = engine_time(*p.b, p.size, p.group, topo, prof);
      double r = (pred - p.time) / p.time;
      se += r * r;
      me = std::max(me, std::fabs(r));
      op_err[p.b->op].first += r * r;
      op_err[p.b->op].second += 1;
    }
    for (const auto& [op, e] : op_err) per_op[op] = std::sqrt(e.first / e.second) * 100;
    std::string tier_names;
    for (Tier tt : tiers) tier_names += std::string(tier_names.empty() ? "" : ",") + to_string(tt);
    report.push_back({{"backend", key.first},
                      {"tier", key.second},
                      {"fitted_tiers", tier_names},
                      {"bandwidth_efficiency", eff},
                      {"efficiency_capped", 1.0 / inv_eff > 1.0},
                      {"ring_base_latency_s", mpi ? a[0] : 0.0},
                      {"p2p_latency_s", mpi ? a[1] : prof.nccl.p2p_latency_s},
                      {"points", pts.size()},
                      {"rms_error_pct", std::sqrt(se / static_cast<double>(pts.size())) * 100},
                      {"max_error_pct", me * 100},
                      {"rms_error_pct_by_op", per_op}});
  }
}

MeasurementFit fit_measurements(const std::vector<Measurements>& docs, const Cluster* cluster,
                                const std::string& name) {
  std::vector<CollectiveSweep> colls;
  std::vector<GemmSample> gemm;
  std::vector<MemSample> mem;
  std::string gemm_type, device;
  for (const auto& d : docs) {
    for (const auto& c : d.collectives) colls.push_back(c);
    if (d.compute) {
      device = d.compute->device;
      for (const auto& p : d.compute->gemm) {
        if (!gemm_type.empty() && gemm_type != p.type)
          throw InputError(d.file, "compute.gemm.type", p.type,
                           "one GEMM type per calibration (found " + gemm_type + " too)");
        gemm_type = p.type;
        // Medians: robust to the odd preempted or throttled repetition.
        gemm.push_back({static_cast<double>(p.m), static_cast<double>(p.n),
                        static_cast<double>(p.k), p.time_median_s});
      }
      for (const auto& p : d.compute->membound) mem.push_back({p.bytes, p.time_median_s});
      // Large copies carry the time of an iteration (optimizer, activations); cache-resident
      // small copies are fast and cheap. Fit the streaming regime (>= 4 MiB, beyond a core's L2)
      // when it was swept.
      std::vector<MemSample> big;
      for (const auto& m : mem)
        if (m.bytes >= 4194304) big.push_back(m);
      if (big.size() >= 2) mem = big;
    }
  }
  const DecodeSamples decode = decode_samples(docs, default_calibration().gemm.tile);
  if (gemm.empty() && mem.empty() && colls.empty() && decode.empty())
    throw InputError(
        "calibrate: no bench measurements or serve replay decode steps in the given files "
        "(training "
        "replay results are for `tutti validate`)");
  if (!decode.empty() && (!gemm.empty() || !mem.empty()))
    throw InputError(
        "calibrate: give serve replay decode steps or GEMM/copy sweeps, not both (both fit the "
        "GEMM "
        "and memory-bound bandwidth terms)");

  MeasurementFit out;
  CalibrationProfile& prof = out.profile;
  prof = default_calibration();
  prof.name = name;
  prof.file.clear();
  nlohmann::json& report = out.report;
  std::string files;
  for (const auto& d : docs) files += (files.empty() ? "" : ", ") + d.file;

  DeviceOverride dev;
  dev.gpu = cluster ? cluster->gpu.id : "*";
  if (!gemm.empty()) {
    GemmFit f = fit_gemm(gemm, 0);
    if (f.eff_max > 1) {  // keep eff_max <= 1: move the excess into the reference peak
      f.peak_flops_per_s *= f.eff_max;
      f.eff_max = 1;
    }
    prof.gemm.flops = {f.eff_max, f.half_flops};
    prof.gemm.half_dim = f.half_dim;
    prof.gemm.launch_overhead_s = f.launch_overhead_s;
    // The fit is the flops/half_dim form: drop the default profile's time-based curve and tile
    // terms.
    prof.gemm.half_time_s = prof.gemm.tile = prof.gemm.half_k = 0;
    prof.attention.half_time_s = prof.attention.tile = prof.attention.half_k = 0;
    // Attention runs as GEMMs on the replay backends; the same curve, with the shape factor.
    prof.attention.flops = prof.gemm.flops;
    prof.attention.half_dim = f.half_dim;
    prof.attention.launch_overhead_s = f.launch_overhead_s;
    if (device == "cpu") {
      for (auto& pk : dev.peak_flops) pk = f.peak_flops_per_s;  // every type runs as sgemm on a CPU
    } else {
      int idx = gemm_type == "bf16"   ? static_cast<int>(DType::BF16)
                : gemm_type == "fp16" ? static_cast<int>(DType::FP16)
                : gemm_type == "tf32" ? static_cast<int>(DType::TF32)
                                      : static_cast<int>(DType::FP32);
      dev.peak_flops[idx] = f.peak_flops_per_s;
    }
    report["gemm"] = {{"type", gemm_type},
                      {"device", device},
                      {"samples", f.samples},
                      {"peak_flops_per_s", f.peak_flops_per_s},
                      {"eff_max", f.eff_max},
                      {"half_flops", f.half_flops},
                      {"half_dim", f.half_dim},
                      {"launch_overhead_s", f.launch_overhead_s},
                      {"rms_error_pct", f.rms_rel_error * 100},
                      {"max_error_pct", f.max_rel_error * 100}};
  }
  if (!mem.empty()) {
    MemFit f = fit_membound(mem, 0);
    if (f.eff_max > 1) {
      f.peak_Bps *= f.eff_max;
      f.eff_max = 1;
    }
    dev.hbm_bw_Bps = f.peak_Bps;
    prof.membound.bandwidth = {f.eff_max, f.half_bytes};
    prof.membound.launch_overhead_s = f.launch_overhead_s;
    // GEMMs and attention use the same memory system for their bandwidth roofline.
    prof.gemm.bandwidth = prof.attention.bandwidth = {f.eff_max, f.half_bytes};
    report["membound"] = {{"samples", f.samples},
                          {"peak_Bps", f.peak_Bps},
                          {"eff_max", f.eff_max},
                          {"half_bytes", f.half_bytes},
                          {"launch_overhead_s", f.launch_overhead_s},
                          {"rms_error_pct", f.rms_rel_error * 100},
                          {"max_error_pct", f.max_rel_error * 100}};
  }
  if (!decode.empty()) fit_decode(decode, cluster ? &cluster->gpu : nullptr, prof, dev, report);
  if (!gemm.empty() || !mem.empty() || !decode.empty()) {
    prof.devices.erase(std::remove_if(prof.devices.begin(), prof.devices.end(),
                                      [&](const DeviceOverride& d) { return d.gpu == dev.gpu; }),
                       prof.devices.end());
    prof.devices.push_back(dev);
  }
  if (!colls.empty()) {
    if (!cluster) {
      out.network_needs_cluster = true;
    } else {
      nlohmann::json net = nlohmann::json::array();
      fit_network(colls, *cluster, prof, net);
      report["network"] = net;
    }
  }
  // What this run refitted is fitted to these measurements, not to the default's data.
  auto refitted = [&](const std::string& path) {
    bool compute = !gemm.empty() || !mem.empty() || !decode.empty();
    bool network = !colls.empty() && cluster;
    return (compute && path.rfind("compute", 0) == 0) || (network && path.rfind("network", 0) == 0);
  };
  prof.fitted_to.erase(std::remove_if(prof.fitted_to.begin(), prof.fitted_to.end(),
                                      [&](const FittedTo& f) { return refitted(f.path); }),
                       prof.fitted_to.end());
  prof.source =
      "tutti calibrate from " + files + (cluster ? " on cluster " + cluster->name : "") +
      "; compute curves least-squares fitted to the GEMM/copy sweeps or to the GEMVs and "
      "memory-bound "
      "ops of serve replay decode steps, link efficiency and latencies to "
      "the collective benches (relative errors in the calibration report); other parameters: " +
      default_calibration().name + " profile";
  return out;
}

}  // namespace tutti::calibrate
