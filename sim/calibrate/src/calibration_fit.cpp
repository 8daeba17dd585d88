#include "tutti/calibrate/calibration_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/models/program.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

namespace {

constexpr const char* kTierKeys[8] = {"nvlink",     "pcie",  "access", "leaf_spine",
                                      "spine_core", "local", "global", "torus"};

std::vector<std::string> split(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= key.size()) {
    std::size_t dot = key.find('.', start);
    if (dot == std::string::npos) dot = key.size();
    parts.push_back(key.substr(start, dot - start));
    start = dot + 1;
  }
  return parts;
}

int index_of(const char* const* names, int n, const std::string& s) {
  for (int i = 0; i < n; ++i)
    if (s == names[i]) return i;
  return -1;
}

/// The fittable constant `key` inside `p`, and the key path of the object that holds it (where
/// its fitted_to lives); nullptr when `key` is not a fittable constant. Creates a device override
/// on demand (create = true).
double* constant_ref(CalibrationProfile& p, const std::string& key, std::string* holder,
                     bool create) {
  auto parts = split(key);
  auto set_holder = [&](std::size_t n) {
    if (!holder) return;
    std::string h;
    for (std::size_t i = 0; i < n; ++i) h += (i ? "." : "") + parts[i];
    *holder = h;
  };
  if (parts.size() == 3 && parts[0] == "compute" && parts[2] == "flops_efficiency_max") {
    set_holder(2);
    if (parts[1] == "gemm") return &p.gemm.flops.eff_max;
    if (parts[1] == "attention") return &p.attention.flops.eff_max;
    return nullptr;
  }
  if (parts.size() == 5 && parts[0] == "compute" && parts[1] == "devices" &&
      parts[3] == "gemm_efficiency") {
    auto dt = parse_enum<DType>(parts[4]);
    if (!dt) return nullptr;
    const int d = static_cast<int>(*dt);
    set_holder(4);
    for (auto& dev : p.devices)
      if (dev.gpu == parts[2]) return &dev.gemm_efficiency[d];
    if (!create) return nullptr;
    DeviceOverride o;
    o.gpu = parts[2];
    p.devices.push_back(o);
    return &p.devices.back().gemm_efficiency[d];
  }
  if (parts.size() == 4 && parts[0] == "network" && parts[1] == "tiers" &&
      parts[3] == "bandwidth_efficiency") {
    int t = index_of(kTierKeys, 8, parts[2]);
    if (t < 0) return nullptr;
    set_holder(3);
    return &p.tiers[t].bandwidth_efficiency;
  }
  if (key == "nccl.nvls_bandwidth_efficiency") {
    set_holder(1);
    return &p.nccl.nvls_bandwidth_efficiency;
  }
  return nullptr;
}

struct Point {
  std::string id, what, metric;
  double measured = 0;  // metric units
  // gemm
  bool gemm = false;
  std::string gpu;
  DType dtype = DType::BF16;
  std::int64_t m = 0, n = 0, k = 0;
  // "best_of": the measurement is the best rate over every m, n, k in [lo, hi] step `step`
  // (a search such as mamf-finder's); the model's value is then its own best over that grid.
  bool best_of = false;
  std::int64_t lo = 0, hi = 0, step = 0;
  // collective
  Coll coll = Coll::AllReduce;
  CollAlgo algo = CollAlgo::Ring;
  NcclProto proto = NcclProto::Simple;
  bool tuned = false;  // "algo": "auto": the tuner's choice (NCCL_ALGO / NCCL_PROTO unset)
  int gpus = 0;
  double bytes = 0;
  bool busbw = false;
  bool time = false;  // "time": the measured time per call (us), for latency-bound sizes
  std::vector<std::string> fits;
};

struct File {
  std::string path;
  std::string cluster;  // collective files
  std::vector<Point> points;
  struct Fit {
    std::string constant;
    std::vector<std::size_t> points;
    std::string path;  // key path in the file, for errors
  };
  std::vector<Fit> fits;
};

File read_file(const std::string& rel, const std::string& root) {
  File f;
  f.path = rel;
  Doc doc = Doc::load((std::filesystem::path(root) / rel).string());
  Obj r = doc.root();
  std::string kind = r.req("kind").choice({"gemm", "collective"});
  r.req("source_key").string();
  r.req("source").string();
  r.allow("notes");
  if (kind == "collective") f.cluster = r.req("cluster").string();
  Arr pts = r.req("points").arr();
  std::map<std::string, std::size_t> by_id;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    Obj o = pts.at(i).obj();
    Point p;
    p.id = o.req("id").string();
    o.req("source").string();
    o.allow("notes");
    if (by_id.count(p.id))
      o.value().fail("a point id not used before in this file (\"" + p.id + "\" repeats)");
    if (kind == "gemm") {
      p.gemm = true;
      Value gv = o.req("gpu");
      p.gpu = gv.string();
      const GpuSpec* gpu = nullptr;
      try {
        gpu = &Catalog::builtin().gpu(p.gpu);
      } catch (const InputError&) {
        gv.fail("a GPU id of the catalog (`tutti catalog`)");
      }
      Value dv = o.req("dtype");
      {
        auto dt = parse_enum<DType>(dv.is_string() ? dv.string() : "");
        if (!dt) dv.fail("one of " + enum_names<DType>(", "));
        p.dtype = *dt;
      }
      if (peak_flops(*gpu, p.dtype, CalibrationProfile{}) <= 0)
        dv.fail("a data type with a peak rate on " + p.gpu);
      p.m = o.req("m").integer(1, 1 << 24);
      p.n = o.req("n").integer(1, 1 << 24);
      p.k = o.req("k").integer(1, 1 << 24);
      p.measured = o.req("tflops").number(1e-6, 1e6);
      if (auto b = o.opt("best_of")) {
        Obj bo = b->obj();
        p.best_of = true;
        p.lo = bo.req("min").integer(1, 1 << 20);
        p.hi = bo.req("max").integer(p.lo, 1 << 20);
        p.step = bo.req("step").integer(1, 1 << 20);
        bo.allow("source");
        bo.done();
        auto on_grid = [&](std::int64_t x) {
          return x >= p.lo && x <= p.hi && (x - p.lo) % p.step == 0;
        };
        if (!on_grid(p.m) || !on_grid(p.n) || !on_grid(p.k))
          b->fail("a grid (min, max, step) that contains the point's own m, n and k");
        if ((p.hi - p.lo) / p.step > 200) b->fail("at most 200 steps per dimension");
      }
      p.metric = "TFLOP/s";
      p.what =
          fmt::format("gemm {}x{}x{} {} on {}{}", p.m, p.n, p.k, to_string(p.dtype), p.gpu,
                      p.best_of ? fmt::format(" (best of {}..{}/{})", p.lo, p.hi, p.step) : "");
    } else {
      std::string op = o.req("op").choice({"all_reduce", "all_gather", "reduce_scatter"});
      p.coll = op == "all_reduce"   ? Coll::AllReduce
               : op == "all_gather" ? Coll::AllGather
                                    : Coll::ReduceScatter;
      std::string algo = o.req("algo").choice({"ring", "tree", "nvls", "auto"});
      p.tuned = algo == "auto";
      p.algo = algo == "tree" ? CollAlgo::Tree : algo == "nvls" ? CollAlgo::Nvls : CollAlgo::Ring;
      std::string proto = o.req("proto").choice({"ll", "ll128", "simple", "auto"});
      if ((proto == "auto") != p.tuned)
        o.req("proto").fail("\"auto\" exactly when algo is \"auto\"");
      p.proto = proto == "ll"      ? NcclProto::LL
                : proto == "ll128" ? NcclProto::LL128
                                   : NcclProto::Simple;
      p.gpus = static_cast<int>(o.req("gpus").integer(2, 1 << 20));
      p.bytes = o.req("bytes").quantity(Dim::Bytes, 1);
      auto bus = o.opt("busbw");
      auto alg = o.opt("algbw");
      auto tm = o.opt("time");
      if (bus.has_value() + alg.has_value() + tm.has_value() != 1)
        o.value().fail(
            "exactly one of \"busbw\", \"algbw\" and \"time\" (what the source reports)");
      p.busbw = bus.has_value();
      p.time = tm.has_value();
      p.measured = tm ? tm->quantity(Dim::Time, 1e-9) * 1e6
                      : (bus ? *bus : *alg).quantity(Dim::Bandwidth, 1) / 1e9;
      p.metric = p.time ? "time us" : p.busbw ? "busbw GB/s" : "algbw GB/s";
      p.what = fmt::format("{} {}/{} {} GPUs {}", op, algo, proto, p.gpus,
                           format_quantity(p.bytes, Dim::Bytes));
    }
    o.done();
    by_id[p.id] = f.points.size();
    f.points.push_back(p);
  }
  Arr fits = r.req("fits").arr();
  for (std::size_t i = 0; i < fits.size(); ++i) {
    Obj o = fits.at(i).obj();
    File::Fit fit;
    fit.path = o.path();
    Value c = o.req("constant");
    fit.constant = c.string();
    CalibrationProfile probe;
    if (!constant_ref(probe, fit.constant, nullptr, true))
      c.fail(
          "a fittable constant (compute.gemm.flops_efficiency_max, "
          "compute.attention.flops_efficiency_max, "
          "compute.devices.<gpu>.gemm_efficiency.<dtype>, "
          "network.tiers.<tier>.bandwidth_efficiency, "
          "nccl.nvls_bandwidth_efficiency)");
    Arr ids = o.req("points").arr();
    if (ids.size() == 0) ids.value().fail("at least one point id");
    for (std::size_t j = 0; j < ids.size(); ++j) {
      Value v = ids.at(j);
      auto it = by_id.find(v.string());
      if (it == by_id.end()) v.fail("the id of a point of this file");
      fit.points.push_back(it->second);
      f.points[it->second].fits.push_back(fit.constant);
    }
    o.done();
    f.fits.push_back(fit);
  }
  r.done();
  return f;
}

/// Cached clusters: loading routes the whole topology.
struct Clusters {
  std::map<std::string, SimCluster> loaded;
  const SimCluster& get(const std::string& rel, const std::string& root, const std::string& file) {
    auto it = loaded.find(rel);
    if (it != loaded.end()) return it->second;
    std::error_code ec;
    auto full = std::filesystem::path(root) / rel;
    if (!std::filesystem::is_regular_file(full, ec))
      throw InputError(file, "cluster", "\"" + rel + "\"",
                       "a cluster file of the repository (repo-relative path)");
    return loaded.emplace(rel, sim_cluster(load_cluster(full.string()))).first->second;
  }
};

double gemm_tflops(const Point& p, std::int64_t m, std::int64_t n, std::int64_t k,
                   const CalibrationProfile& prof) {
  Op op;
  op.kind = OpKind::Gemm;
  op.dtype = p.dtype;
  op.m = m;
  op.n = n;
  op.k = k;
  op.batch = 1;
  double t = op_time_s(op, Catalog::builtin().gpu(p.gpu), prof);
  return 2.0 * m * n * k / t / 1e12;
}

/// For a best_of point: `p` at the shape of the grid where the model is fastest under `prof`.
Point pinned(const Point& p, const CalibrationProfile& prof) {
  if (!p.best_of) return p;
  Point q = p;
  q.best_of = false;
  double best = -1;
  for (std::int64_t m = p.lo; m <= p.hi; m += p.step)
    for (std::int64_t n = p.lo; n <= p.hi; n += p.step)
      for (std::int64_t k = p.lo; k <= p.hi; k += p.step) {
        double r = gemm_tflops(p, m, n, k, prof);
        if (r > best) {
          best = r;
          q.m = m;
          q.n = n;
          q.k = k;
        }
      }
  return q;
}

/// The model's value of `p` (in p.metric units) under `prof`.
double predict(const Point& p, const File& f, const CalibrationProfile& prof, Clusters& clusters,
               const std::string& root) {
  if (p.gemm) {
    if (p.best_of) return predict(pinned(p, prof), f, prof, clusters, root);
    return gemm_tflops(p, p.m, p.n, p.k, prof);
  }
  const SimCluster& c = clusters.get(f.cluster, root, f.path);
  if (p.gpus > c.topology->num_gpus())
    throw InputError(f.path, "points." + p.id + ".gpus", std::to_string(p.gpus),
                     fmt::format("at most the {} GPUs of {}", c.topology->num_gpus(), f.cluster));
  std::vector<int> group;
  for (int i = 0; i < p.gpus; ++i) group.push_back(i);
  CollectiveContext ctx = make_collective_context(*c.topology, prof, c.nvls, c.sharp);
  CollectivePlan plan = p.tuned
                            ? plan_collective(p.coll, p.bytes, group, ctx)
                            : plan_collective_with(p.coll, p.bytes, group, ctx, p.algo, p.proto);
  double t = simulate_collectives({plan}, *c.topology, prof);
  if (p.time) return t * 1e6;
  double algbw = p.bytes / t;
  return (p.busbw ? algbw * bus_factor(p.coll, p.gpus) : algbw) / 1e9;
}

}  // namespace

double calibration_constant(const CalibrationProfile& p, const std::string& key) {
  CalibrationProfile copy = p;
  double* v = constant_ref(copy, key, nullptr, false);
  if (!v) {
    // A device override that does not exist yet reads as 0 (keep the family's value).
    CalibrationProfile probe;
    if (constant_ref(probe, key, nullptr, true)) return 0;
    throw InputError("calibration profile", key, "\"" + key + "\"", "a fittable constant");
  }
  return *v;
}

std::vector<std::string> microbench_files(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  fs::path dir = fs::path(root) / "sim" / "calibration" / "microbench";
  if (!fs::is_directory(dir, ec))
    throw InputError(dir.string(), "", "no such folder",
                     "the microbenchmark data of the default calibration");
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json")
      out.push_back("sim/calibration/microbench/" + e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

DefaultsFit fit_defaults(const CalibrationProfile& base, const std::vector<std::string>& files,
                         const std::string& root) {
  DefaultsFit out;
  out.profile = base;
  std::vector<File> parsed;
  for (const auto& rel : files) parsed.push_back(read_file(rel, root));
  Clusters clusters;
  for (const File& f : parsed) {
    for (const File::Fit& fit : f.fits) {
      ConstantFit cf;
      cf.constant = fit.constant;
      cf.file = f.path;
      cf.points = static_cast<int>(fit.points.size());
      cf.current = calibration_constant(base, fit.constant);
      std::string holder;
      constant_ref(out.profile, fit.constant, &holder, true);
      cf.holder = holder;
      for (const auto& ft : base.fitted_to)
        if (ft.path == holder)
          for (const auto& t : ft.targets) cf.declared = cf.declared || t == "file:" + f.path;
      // best_of points are evaluated at the model's fastest shape of their grid: pinned under
      // the current value, refitted, re-pinned until the shapes stop moving (a fixed point).
      std::vector<Point> pts;
      for (std::size_t i : fit.points) pts.push_back(pinned(f.points[i], out.profile));
      auto loss = [&](double x) {
        CalibrationProfile trial = out.profile;
        *constant_ref(trial, fit.constant, nullptr, true) = x;
        double s = 0;
        for (const Point& p : pts) {
          double e = std::log(predict(p, f, trial, clusters, root) / p.measured);
          s += e * e;
        }
        return s;
      };
      double a = 1e-3, b = 1.0;
      for (int round = 0; round < 8; ++round) {
        // Golden-section search on (0, 1]: the model's rate is monotone in each constant.
        const double g = (std::sqrt(5.0) - 1) / 2;
        a = 1e-3;
        b = 1.0;
        double x1 = b - g * (b - a), x2 = a + g * (b - a);
        double f1 = loss(x1), f2 = loss(x2);
        for (int it = 0; it < 80; ++it) {
          if (f1 <= f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            f1 = loss(x1);
          } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            f2 = loss(x2);
          }
        }
        CalibrationProfile at = out.profile;
        *constant_ref(at, fit.constant, nullptr, true) = (a + b) / 2;
        bool moved = false;
        for (std::size_t j = 0; j < pts.size(); ++j) {
          Point q = pinned(f.points[fit.points[j]], at);
          moved = moved || q.m != pts[j].m || q.n != pts[j].n || q.k != pts[j].k;
          pts[j] = q;
        }
        if (!moved) break;
      }
      cf.fitted = (a + b) / 2;
      cf.rms_log_error = std::sqrt(loss(cf.fitted) / static_cast<double>(fit.points.size()));
      *constant_ref(out.profile, fit.constant, nullptr, true) = cf.fitted;
      out.fits.push_back(cf);
    }
  }
  // Every point under the fully refitted profile (fits and checks alike).
  for (const File& f : parsed)
    for (const Point& p : f.points) {
      MicrobenchPoint mp;
      mp.file = f.path;
      mp.id = p.id;
      mp.what = p.what;
      mp.metric = p.metric;
      mp.measured = p.measured;
      mp.predicted = predict(p, f, out.profile, clusters, root);
      mp.fits = p.fits;
      out.points.push_back(mp);
    }
  return out;
}

}  // namespace tutti
