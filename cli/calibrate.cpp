// tutti calibrate: fit the simulator's compute and network parameters to measurements
// (`tutti exec bench` output) and write a calibration profile (sim/calibration.hpp format).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "calibrate_decode.hpp"
#include "common.hpp"
#include "tutti/calibrate/calibration_fit.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/exec/fit.hpp"
#include "tutti/exec/measurements.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::cli {

namespace {

struct CalibrateOptions {
  std::vector<std::string> files;
  std::string cluster;
  std::string name = "calibrated";
};

Coll coll_of(const std::string& op) {
  if (op == "all_reduce") return Coll::AllReduce;
  if (op == "all_gather") return Coll::AllGather;
  if (op == "reduce_scatter") return Coll::ReduceScatter;
  return Coll::AllToAll;
}

/// The GPUs a bench of `ranks` ranks over `hosts` hosts ran on: the first ranks/hosts GPUs of
/// the first `hosts` nodes.
std::vector<int> bench_group(const exec::CollBenchResult& b, const Cluster& c) {
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
double engine_time(const exec::CollBenchResult& b, double size, const std::vector<int>& group,
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

/// Non-negative weighted least squares (relative errors) of y ~ X a over all column subsets.
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

struct NetFitReport {
  nlohmann::json json = nlohmann::json::array();
};

/// Fits tier bandwidth efficiency, ring base latency and p2p latency to collective benches.
void fit_network(const std::vector<exec::CollBenchResult>& benches, const Cluster& c,
                 CalibrationProfile& prof, NetFitReport& rep) {
  const Topology& topo = *c.topology;
  // One fit per (backend, tier): intra-node benches set the scale-up tier, inter-node ones the
  // fabric tiers.
  std::map<std::pair<std::string, std::string>, std::vector<const exec::CollBenchResult*>> groups;
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
      const exec::CollBenchResult* b;
      double size, time;
      std::vector<int> group;
    };
    std::vector<Pt> pts;
    for (const auto* b : list) {
      auto g = bench_group(*b, c);
      for (const auto& p : b->points)
        if (p.time_s > 0 && p.size_bytes > 0) pts.push_back({b, p.size_bytes, p.time_s, g});
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
    rep.json.push_back({{"backend", key.first},
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

int run_calibrate(const Globals& g, const CalibrateOptions& o) {
  std::vector<exec::MeasurementDoc> docs;
  for (const auto& f : o.files) docs.push_back(exec::load_measurements(f));
  std::vector<exec::CollBenchResult> colls;
  std::vector<exec::GemmSample> gemm;
  std::vector<exec::MemSample> mem;
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
        gemm.push_back({static_cast<double>(p.shape.m), static_cast<double>(p.shape.n),
                        static_cast<double>(p.shape.k), p.time_median_s});
      }
      for (const auto& p : d.compute->membound) mem.push_back({p.bytes, p.time_median_s});
      // Large copies carry the time of an iteration (optimizer, activations); cache-resident
      // small copies are fast and cheap. Fit the streaming regime (>= 4 MiB, beyond a core's L2)
      // when it was swept.
      std::vector<exec::MemSample> big;
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

  CalibrationProfile prof = default_calibration();
  prof.name = o.name;
  prof.file.clear();
  std::optional<Cluster> cluster;
  if (!o.cluster.empty()) cluster = load_cluster(o.cluster);
  nlohmann::json report = nlohmann::json::object();
  std::string files;
  for (const auto& f : o.files) files += (files.empty() ? "" : ", ") + f;

  DeviceOverride dev;
  dev.gpu = cluster ? cluster->gpu.id : "*";
  if (!gemm.empty()) {
    exec::GemmFit f = exec::fit_gemm(gemm, 0);
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
    exec::MemFit f = exec::fit_membound(mem, 0);
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
      note(g,
           "tutti calibrate: collective measurements need --cluster (the links they ran on); "
           "network left at the defaults");
    } else {
      NetFitReport rep;
      fit_network(colls, *cluster, prof, rep);
      report["network"] = rep.json;
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
  // Round trip through the strict parser: what we write must load.
  nlohmann::json j;
  to_json(j, prof);
  // A fit outside the profile's ranges (or not finite) comes from the measurements: name them.
  std::string bad = first_non_finite(j);
  if (!bad.empty())
    throw InputError(
        files, bad, "a fitted value that is not finite",
        "measurements whose fit gives finite parameters (check their times and sizes)");
  try {
    parse_calibration(j.dump(), "calibrate output");
  } catch (const InputError& e) {
    throw InputError(
        files + ": the calibration fitted from these measurements is out of range: " + e.what());
  }
  emit_json(g, j);
  if (g.verbosity >= 0) {
    std::string t = "tutti calibrate: fit report\n" + report.dump(2) + "\n";
    std::fputs(t.c_str(), stderr);
  }
  return kOk;
}

struct DefaultsOptions {
  bool check = false;
  double tolerance = 0.005;
  std::string root, profile;
};

/// `tutti calibrate defaults`: refit every fitted constant of the default profile from the
/// microbenchmark files it names (sim/calibration/microbench/), print old vs new; --check fails
/// when the profile differs from its data beyond the tolerance or does not declare its data.
int run_calibrate_defaults(Globals& g, const DefaultsOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string root = o.root;
  if (root.empty())
    root = fs::is_regular_file("sim/calibration/default.json", ec) ? "." : TUTTI_SOURCE_DIR;
  std::string profile_path =
      o.profile.empty() ? (fs::path(root) / "sim/calibration/default.json").string() : o.profile;
  CalibrationProfile prof = load_calibration(profile_path);
  std::vector<std::string> files = microbench_files(root);
  DefaultsFit fit = fit_defaults(prof, files, root);

  std::vector<std::string> problems;
  nlohmann::json jfits = nlohmann::json::array();
  std::string t = fmt::format(
      "tutti calibrate defaults: {} constants refitted from {} microbenchmark files ({})\n",
      fit.fits.size(), files.size(), profile_path);
  t += fmt::format("{:<52} {:<44} {:>6} {:>9} {:>9} {:>8} {:>8}  {}\n", "constant", "data",
                   "points", "current", "fitted", "diff", "rms_err", "fitted_to");
  for (const auto& f : fit.fits) {
    double diff = f.current > 0 ? (f.fitted - f.current) / f.current : 1.0;
    t += fmt::format("{:<52} {:<44} {:>6} {:>9.4g} {:>9.4g} {:>+7.2f}% {:>7.2f}%  {}\n", f.constant,
                     f.file, f.points, f.current, f.fitted, diff * 100, f.rms_log_error * 100,
                     f.declared ? "yes" : "MISSING");
    if (std::fabs(diff) > o.tolerance)
      problems.push_back(fmt::format(
          "{} is {:.4g} in the profile, {:.4g} fitted to {} ({:+.2f}%, tolerance {:.2f}%)",
          f.constant, f.current, f.fitted, f.file, diff * 100, o.tolerance * 100));
    if (!f.declared)
      problems.push_back(fmt::format("{}: the fitted_to of {} does not list \"file:{}\"",
                                     f.constant, f.holder.empty() ? "the root" : f.holder, f.file));
    jfits.push_back({{"constant", f.constant},
                     {"file", f.file},
                     {"points", f.points},
                     {"current", f.current},
                     {"fitted", f.fitted},
                     {"diff_pct", diff * 100},
                     {"rms_log_error", f.rms_log_error},
                     {"declared", f.declared}});
  }
  // Every "file:" entry of a microbenchmark file must be backed by a fit of that object.
  for (const auto& ft : prof.fitted_to)
    for (const auto& target : ft.targets) {
      if (target.rfind("file:sim/calibration/microbench/", 0) != 0) continue;
      bool backed = false;
      for (const auto& f : fit.fits)
        backed = backed || (f.holder == ft.path && "file:" + f.file == target);
      if (!backed)
        problems.push_back(
            fmt::format("{}: fitted_to names \"{}\" but that file fits no constant of this object",
                        ft.path.empty() ? "(root)" : ft.path, target));
    }
  nlohmann::json jpoints = nlohmann::json::array();
  t += "\nmicrobenchmark points, model under the fitted constants:\n";
  t += fmt::format("{:<48} {:<14} {:<50} {:>12} {:>10} {:>10} {:>8}  {}\n", "file", "id", "what",
                   "metric", "measured", "model", "error", "role");
  for (const auto& p : fit.points) {
    double err = (p.predicted - p.measured) / p.measured;
    std::string role =
        p.fits.empty() ? "check" : "fit: " + p.fits.front() + (p.fits.size() > 1 ? " ..." : "");
    t += fmt::format("{:<48} {:<14} {:<50} {:>12} {:>10.4g} {:>10.4g} {:>+7.1f}%  {}\n", p.file,
                     p.id, p.what, p.metric, p.measured, p.predicted, err * 100, role);
    jpoints.push_back({{"file", p.file},
                       {"id", p.id},
                       {"what", p.what},
                       {"metric", p.metric},
                       {"measured", p.measured},
                       {"predicted", p.predicted},
                       {"error_pct", err * 100},
                       {"fits", p.fits}});
  }
  if (o.check) {
    t += problems.empty()
             ? fmt::format(
                   "\ncheck: OK, every fitted constant within {:.2f}% of its data and declared\n",
                   o.tolerance * 100)
             : "\ncheck: FAILED\n";
    for (const auto& pr : problems) t += "  " + pr + "\n";
  }
  if (g.json)
    emit_json(g, {{"profile", profile_path},
                  {"files", files},
                  {"fits", jfits},
                  {"points", jpoints},
                  {"tolerance", o.tolerance},
                  {"problems", problems}});
  else
    emit(g, t);
  if (o.check && !problems.empty()) {
    if (g.json) std::fputs(t.c_str(), stderr);
    return kNo;
  }
  return kOk;
}

}  // namespace

void setup_calibrate(CLI::App& app, Globals& g) {
  static CalibrateOptions o;
  auto* sub = app.add_subcommand(
      "calibrate",
      "Fit the simulator's compute curves and link/collective parameters to `tutti exec bench` "
      "measurements, or the "
      "decode-regime terms (GEMV and KV-read bandwidth) to `tutti serve replay --phase decode` "
      "documents; "
      "writes a calibration profile (-o profile.json) for `tutti simulate --calibration`");
  sub->add_option("measurements", o.files,
                  "Measurement files from `tutti exec bench` (GEMM sweeps, collective benches)")
      ->check(CLI::ExistingFile);
  sub->add_option("--cluster", o.cluster,
                  "The cluster the measurements ran on (needed for link fits; names the device)");
  sub->add_option("--name", o.name, "Profile name")->capture_default_str();
  sub->callback([&g, sub] {
    if (sub->got_subcommand("defaults")) return;
    if (o.files.empty()) throw CLI::RequiredError("measurements");
    g.run = [&g] { return run_calibrate(g, o); };
  });

  static DefaultsOptions d;
  sub->require_subcommand(0, 1);  // `calibrate defaults`, or measurements and no subcommand
  auto* def = sub->add_subcommand("defaults",
                                  "Refit every fitted constant of sim/calibration/default.json "
                                  "from the microbenchmark files it names "
                                  "(sim/calibration/microbench/*.json) with the models' own "
                                  "formulas; prints current vs fitted and the "
                                  "model's error on every point");
  def->add_flag("--check", d.check,
                "Exit 1 when a constant differs from its fit beyond --tolerance or does not "
                "name its data in fitted_to");
  def->add_option("--tolerance", d.tolerance, "Relative tolerance of --check")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  def->add_option("--root", d.root,
                  "Repository root holding sim/calibration (default: . when it has one, else the "
                  "source tree of this binary)");
  def->add_option("--profile", d.profile,
                  "Profile to check (default: <root>/sim/calibration/default.json)")
      ->check(CLI::ExistingFile);
  def->callback([&g] { g.run = [&g] { return run_calibrate_defaults(g, d); }; });
}

}  // namespace tutti::cli
