// GEMM and memory-bound sweeps on the rank's compute device; sweep parsing; bench JSON.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/exec/bench.hpp"
#include "tutti/exec/session.hpp"

namespace tutti::exec {

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}
}  // namespace

ComputeBenchResult bench_compute(const Session& s, ComputeDevice& dev, const ComputeBenchOptions& o,
                                 Watchdog* wd) {
  ComputeBenchResult res;
  res.device = dev.is_gpu() ? "gpu" : "cpu";
  res.library = dev.library();
  res.model = dev.model();
  res.ranks = s.size();
  res.warmup = o.warmup;
  res.iters = o.iters;
  std::int64_t mk = 1, kn = 1, mn = 1;
  for (const auto& g : o.shapes) {
    if (g.m < 1 || g.n < 1 || g.k < 1)
      throw InputError("--gemm", "",
                       std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k),
                       "positive M, N, K");
    mk = std::max(mk, g.m * g.k);
    kn = std::max(kn, g.k * g.n);
    mn = std::max(mn, g.m * g.n);
  }
  double mb = 0;
  for (double b : o.membound_bytes) mb = std::max(mb, b);
  dev.reserve(mk, kn, mn, mb);
  const int iters = std::max(1, o.iters);

  for (const auto& g : o.shapes) {
    for (int i = 0; i < o.warmup; ++i) dev.timed_gemm(g.m, g.n, g.k, 1, o.type);
    s.barrier();
    std::vector<double> t;
    for (int i = 0; i < iters; ++i) {
      t.push_back(dev.timed_gemm(g.m, g.n, g.k, 1, o.type));
      if (wd) wd->kick("GEMM bench");
    }
    double med = median(t), mean = 0;
    for (double x : t) mean += x / static_cast<double>(t.size());
    GemmPoint p;
    p.shape = g;
    p.type = to_string(o.type);
    p.flops = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
    p.time_s = s.sum(mean) / s.size();
    p.time_median_s = s.sum(med) / s.size();
    p.time_max_s = s.max(mean);
    p.time_min_s = s.min(*std::min_element(t.begin(), t.end()));
    p.flops_per_s = p.time_s > 0 ? p.flops / p.time_s : 0;
    res.gemm.push_back(p);
  }
  for (double b : o.membound_bytes) {
    for (int i = 0; i < o.warmup; ++i) dev.timed_membound(b);
    s.barrier();
    std::vector<double> t;
    for (int i = 0; i < iters; ++i) {
      t.push_back(dev.timed_membound(b));
      if (wd) wd->kick("memory bench");
    }
    MemPoint p;
    p.bytes = b;
    double mean = 0;
    for (double x : t) mean += x / static_cast<double>(t.size());
    p.time_s = s.sum(mean) / s.size();
    p.time_median_s = s.sum(median(t)) / s.size();
    p.bandwidth_Bps = p.time_s > 0 ? b / p.time_s : 0;
    res.membound.push_back(p);
  }
  return res;
}

double parse_nccl_size(const std::string& text, const std::string& what) {
  if (auto q = parse_quantity(text, Dim::Bytes)) return *q;
  // nccl-tests style: 8, 64K, 128M, 1G (powers of two).
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos == 0 || v < 0)
    throw InputError(what, "", "\"" + text + "\"", "a size such as 8, 64K, 128M, 1G or \"64MiB\"");
  std::string suf = text.substr(pos);
  if (suf.empty()) return v;
  if (suf == "K" || suf == "k") return v * 1024;
  if (suf == "M" || suf == "m") return v * 1024 * 1024;
  if (suf == "G" || suf == "g") return v * 1024 * 1024 * 1024;
  throw InputError(what, "", "\"" + text + "\"", "a size such as 8, 64K, 128M, 1G or \"64MiB\"");
}

std::vector<double> parse_sweep(const std::string& text, const std::string& what, bool bytes) {
  auto one = [&](const std::string& t) -> double {
    if (bytes) return parse_nccl_size(t, what);
    std::size_t pos = 0;
    double v = 0;
    try {
      v = std::stod(t, &pos);
    } catch (...) {
      pos = 0;
    }
    if (pos != t.size() || v < 1 || v != std::floor(v))
      throw InputError(what, "", "\"" + t + "\"", "a positive integer");
    return v;
  };
  std::vector<double> out;
  auto bad = [&] {
    throw InputError(what, "", "\"" + text + "\"",
                     "a list \"256,512\" or a range \"256:4096:x2\" / \"1024:4096:+1024\"");
  };
  if (text.find(':') != std::string::npos) {
    auto a = text.find(':'), b = text.find(':', a + 1);
    if (b == std::string::npos) bad();
    double from = one(text.substr(0, a)), to = one(text.substr(a + 1, b - a - 1));
    std::string step = text.substr(b + 1);
    if (step.size() < 2 || (step[0] != 'x' && step[0] != '+') || to < from) bad();
    double st = 0;
    try {
      st = std::stod(step.substr(1));
    } catch (...) {
      bad();
    }
    if ((step[0] == 'x' && st <= 1) || (step[0] == '+' && st <= 0)) bad();
    for (double v = from; v <= to * (1 + 1e-12); v = step[0] == 'x' ? v * st : v + st)
      out.push_back(std::round(v));
  } else {
    std::size_t start = 0;
    while (start <= text.size()) {
      auto c = text.find(',', start);
      std::string item = text.substr(start, c == std::string::npos ? std::string::npos : c - start);
      if (item.empty()) bad();
      out.push_back(one(item));
      if (c == std::string::npos) break;
      start = c + 1;
    }
  }
  if (out.empty() || out.size() > 10000) bad();
  return out;
}

void to_json(nlohmann::json& j, const CollBenchResult& r) {
  j = nlohmann::json{{"op", r.op},
                     {"backend", r.backend},
                     {"dtype", r.dtype},
                     {"ranks", r.ranks},
                     {"hosts", r.hosts},
                     {"tier", r.tier},
                     {"warmup", r.warmup},
                     {"iters", r.iters},
                     {"bus_factor", r.ranks > 0 ? bus_factor(parse_coll_op(r.op), r.ranks) : 0.0}};
  auto& pts = j["points"] = nlohmann::json::array();
  for (const auto& p : r.points)
    pts.push_back({{"size_bytes", p.size_bytes},
                   {"count", p.count},
                   {"time_s", p.time_s},
                   {"time_max_s", p.time_max_s},
                   {"algbw_GBps", p.algbw_Bps / 1e9},
                   {"busbw_GBps", p.busbw_Bps / 1e9},
                   {"wrong", p.wrong}});
}

void to_json(nlohmann::json& j, const ComputeBenchResult& r) {
  j = nlohmann::json{{"device", r.device}, {"library", r.library}, {"model", r.model},
                     {"ranks", r.ranks},   {"warmup", r.warmup},   {"iters", r.iters}};
  auto& g = j["gemm"] = nlohmann::json::array();
  for (const auto& p : r.gemm)
    g.push_back({{"m", p.shape.m},
                 {"n", p.shape.n},
                 {"k", p.shape.k},
                 {"type", p.type},
                 {"flops", p.flops},
                 {"time_s", p.time_s},
                 {"time_median_s", p.time_median_s},
                 {"time_min_s", p.time_min_s},
                 {"time_max_s", p.time_max_s},
                 {"tflops", p.flops_per_s / 1e12}});
  auto& m = j["membound"] = nlohmann::json::array();
  for (const auto& p : r.membound)
    m.push_back({{"bytes", p.bytes},
                 {"time_s", p.time_s},
                 {"time_median_s", p.time_median_s},
                 {"bandwidth_GBps", p.bandwidth_Bps / 1e9}});
}

}  // namespace tutti::exec
