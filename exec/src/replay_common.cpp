#include "replay_common.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tutti/core/error.hpp"
#include "tutti/exec/session.hpp"
#include "tutti/models/kind_key.hpp"

namespace tutti::exec {

CollCounts coll_counts(Coll c, double bytes, int g) {
  std::int64_t elems = std::max<std::int64_t>(static_cast<std::int64_t>(bytes / 4), 1);
  CollCounts k;
  switch (c) {
    case Coll::AllReduce:
    case Coll::Broadcast:
      k.send = k.recv = elems;
      break;
    case Coll::AllGather:
      k.block = std::max<std::int64_t>(elems / g, 1);
      k.send = k.block;
      k.recv = k.block * g;
      break;
    case Coll::ReduceScatter:
      k.block = std::max<std::int64_t>(elems / g, 1);
      k.send = k.block * g;
      k.recv = k.block;
      break;
    case Coll::AllToAll:
      k.block = std::max<std::int64_t>(elems / g, 1);
      k.send = k.recv = k.block * g;
      break;
  }
  return k;
}

CollCounts p2p_counts(double bytes) {
  CollCounts k;
  k.send = k.recv = std::max<std::int64_t>(static_cast<std::int64_t>(bytes / 4), 1);
  return k;
}

void fill_coll(Coll c, const CollCounts& k, int gi, int g, float* buf) {
  switch (c) {
    case Coll::AllReduce:
    case Coll::AllGather:
    case Coll::ReduceScatter:
      for (std::int64_t i = 0; i < k.send; ++i) buf[i] = static_cast<float>(gi + 1 + i % 3);
      break;
    case Coll::AllToAll:
      for (std::int64_t i = 0; i < k.send; ++i) {
        std::int64_t j = i / k.block, e = i % k.block;
        buf[i] = static_cast<float>(gi * g + j + (e % 5) * g * g);
      }
      break;
    case Coll::Broadcast:
      if (gi == 0)
        for (std::int64_t i = 0; i < k.recv; ++i) buf[i] = static_cast<float>(3 + i % 7);
      else
        for (std::int64_t i = 0; i < k.recv; ++i) buf[i] = -1.0f;
      break;
  }
}

std::int64_t verify_coll(Coll c, const CollCounts& k, int gi, int g, const float* recv) {
  const double tri = g * (g + 1) / 2.0;
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < k.recv; ++i) {
    double want = 0;
    switch (c) {
      case Coll::AllReduce:
        want = tri + static_cast<double>(g) * (i % 3);
        break;
      case Coll::AllGather:
        want = static_cast<double>(i / k.block + 1 + (i % k.block) % 3);
        break;
      case Coll::ReduceScatter:
        want = tri + static_cast<double>(g) * ((gi * k.block + i) % 3);
        break;
      case Coll::AllToAll: {
        std::int64_t q = i / k.block, e = i % k.block;
        want = static_cast<double>(q * g + gi + (e % 5) * g * g);
        break;
      }
      case Coll::Broadcast:
        want = static_cast<double>(3 + i % 7);
        break;
    }
    if (static_cast<double>(recv[i]) != want) ++wrong;
  }
  return wrong;
}

void fill_p2p(float* buf, std::int64_t n, int src_rank, int tag) {
  for (std::int64_t i = 0; i < n; ++i)
    buf[i] = static_cast<float>((src_rank % 2048) * 4096 + (tag % 2048) * 2 + i % 2);
}

std::int64_t verify_p2p(const float* buf, std::int64_t n, int src_rank, int tag) {
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i)
    if (buf[i] != static_cast<float>((src_rank % 2048) * 4096 + (tag % 2048) * 2 + i % 2)) ++wrong;
  return wrong;
}

std::int64_t attention_repeats(const Op& op) {
  double pair =
      4.0 * static_cast<double>(op.m) * static_cast<double>(op.n) * static_cast<double>(op.k);
  if (pair <= 0) return 0;
  if (op.flops <= 0) return std::max<std::int64_t>(op.batch, 1);
  return std::max<std::int64_t>(static_cast<std::int64_t>(std::llround(op.flops / pair)), 1);
}

const RankClass& class_of_stage(const Program& p, int stage) {
  for (const auto& c : p.classes)
    if (c.stage == stage) return c;
  throw InternalError("replay: the Program has no class for pipeline stage " +
                      std::to_string(stage));
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

void finish_result(const Session& s, const RankTimings& mine, ReplayResult& res) {
  // Serialize: stage, n_ops, (time, start)*n, n_iter, iter*n_iter as doubles.
  std::vector<double> flat;
  flat.push_back(mine.stage);
  flat.push_back(static_cast<double>(mine.ops.size()));
  for (const auto& o : mine.ops) {
    flat.push_back(o.time_s);
    flat.push_back(o.start_s);
  }
  flat.push_back(static_cast<double>(mine.iteration_s.size()));
  for (double t : mine.iteration_s) flat.push_back(t);
  std::string bytes(reinterpret_cast<const char*>(flat.data()), flat.size() * sizeof(double));
  auto all = s.gather_strings(bytes);
  res.ranks.clear();
  for (std::size_t r = 0; r < all.size(); ++r) {
    std::vector<double> f(all[r].size() / sizeof(double));
    std::memcpy(f.data(), all[r].data(), f.size() * sizeof(double));
    RankTimings t;
    std::size_t at = 0;
    t.rank = static_cast<int>(r);
    t.stage = static_cast<int>(f[at++]);
    std::size_t n = static_cast<std::size_t>(f[at++]);
    t.ops.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      t.ops[i].time_s = f[at++];
      t.ops[i].start_s = f[at++];
    }
    std::size_t ni = static_cast<std::size_t>(f[at++]);
    for (std::size_t i = 0; i < ni; ++i) t.iteration_s.push_back(f[at++]);
    res.ranks.push_back(std::move(t));
  }
  res.iteration_time_s = median_of(res.iteration_times_s);
  res.iteration_min_s =
      res.iteration_times_s.empty()
          ? 0
          : *std::min_element(res.iteration_times_s.begin(), res.iteration_times_s.end());
  res.iteration_max_s =
      res.iteration_times_s.empty()
          ? 0
          : *std::max_element(res.iteration_times_s.begin(), res.iteration_times_s.end());
}

std::vector<std::pair<std::string, double>> measured_by_kind(const ReplayResult& r,
                                                             const Program& p) {
  // Per class: average over its ranks of the per-kind sums; then the class with the largest total.
  std::map<int, std::map<std::string, double>> per_stage;
  std::map<int, int> count;
  for (const auto& rt : r.ranks) {
    const RankClass& c = class_of_stage(p, rt.stage);
    auto& m = per_stage[rt.stage];
    for (std::size_t i = 0; i < c.ops.size() && i < rt.ops.size(); ++i)
      m[kind_key(c.ops[i])] += rt.ops[i].time_s;
    ++count[rt.stage];
  }
  int best = -1;
  double best_total = -1;
  for (auto& [stage, m] : per_stage) {
    double total = 0;
    for (auto& [k, v] : m) {
      v /= count[stage];
      total += v;
    }
    if (total > best_total) {
      best_total = total;
      best = stage;
    }
  }
  std::vector<std::pair<std::string, double>> out;
  if (best >= 0)
    for (const auto& kv : per_stage[best]) out.push_back(kv);
  return out;
}

void to_json(nlohmann::json& j, const ReplayResult& r, const Program& p) {
  j = nlohmann::json::object();
  j["device"] = r.device;
  j["compute_library"] = r.compute_library;
  j["comm_library"] = r.comm_library;
  j["world"] = r.world;
  j["warmup"] = r.warmup;
  j["iterations"] = r.iterations;
  j["iteration_time_s"] = r.iteration_time_s;
  j["iteration_min_s"] = r.iteration_min_s;
  j["iteration_max_s"] = r.iteration_max_s;
  j["iteration_times_s"] = r.iteration_times_s;
  j["check"] = {{"ops", r.checked_ops}, {"wrong_elements", r.wrong_elements}};
  nlohmann::json bk = nlohmann::json::object();
  for (const auto& [k, v] : measured_by_kind(r, p)) bk[k] = v;
  j["by_kind_s"] = bk;
  auto& classes = j["classes"] = nlohmann::json::array();
  for (const auto& c : p.classes) {
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& op : c.ops) {
      nlohmann::json o = {{"name", p.names[op.name]},
                          {"kind", to_string(op.kind)},
                          {"stream", to_string(op.stream)}};
      if (op.kind == OpKind::Collective) {
        o["coll"] = to_string(op.coll);
        o["group"] = to_string(op.group);
        o["group_size"] = op.group_size;
      }
      if (op.kind == OpKind::Gemm || op.kind == OpKind::Attention)
        o["shape"] = {op.m, op.n, op.k, op.batch};
      if (op.bytes > 0) o["bytes"] = op.bytes;
      if (op.flops > 0) o["flops"] = op.flops;
      ops.push_back(o);
    }
    classes.push_back({{"stage", c.stage}, {"multiplicity", c.multiplicity}, {"ops", ops}});
  }
  auto& ranks = j["ranks"] = nlohmann::json::array();
  for (const auto& rt : r.ranks) {
    nlohmann::json t = nlohmann::json::array(), s = nlohmann::json::array();
    for (const auto& o : rt.ops) {
      t.push_back(o.time_s);
      s.push_back(o.start_s);
    }
    ranks.push_back({{"rank", rt.rank},
                     {"stage", rt.stage},
                     {"iteration_s", rt.iteration_s},
                     {"op_time_s", t},
                     {"op_start_s", s}});
  }
}

void timed_iterations(const Session& s, int stage, const std::function<double()>& iterate,
                      const std::vector<double>& start, const std::vector<double>& end,
                      const std::int64_t& checked, const std::int64_t& wrong, ReplayResult& res) {
  const std::size_t n = start.size();
  RankTimings mine;
  mine.rank = s.rank();
  mine.stage = stage;
  std::vector<std::vector<double>> dur(n), st(n);
  for (int it = 0; it < res.iterations; ++it) {
    s.barrier();
    double mine_s = iterate();
    mine.iteration_s.push_back(mine_s);
    res.iteration_times_s.push_back(s.max(mine_s));
    for (std::size_t i = 0; i < n; ++i) {
      dur[i].push_back(end[i] - start[i]);
      st[i].push_back(start[i]);
    }
  }
  mine.ops.resize(n);
  for (std::size_t i = 0; i < n; ++i) mine.ops[i] = {median_of(dur[i]), median_of(st[i])};
  res.checked_ops = static_cast<std::int64_t>(s.sum(static_cast<double>(checked)));
  res.wrong_elements = static_cast<std::int64_t>(s.sum(static_cast<double>(wrong)));
  finish_result(s, mine, res);
}

CollBenchResult coll_bench_result(const Session& s, const CollBenchOptions& o,
                                  const char* backend) {
  if (o.min_bytes < 1 || o.max_bytes < o.min_bytes)
    throw InputError("-b/-e", "", std::to_string(o.min_bytes) + ".." + std::to_string(o.max_bytes),
                     "1 <= min size <= max size");
  if (o.factor <= 1 && o.step_bytes <= 0)
    throw InputError("-f/-i", "", "no step", "a factor > 1 or a step > 0");
  CollBenchResult res;
  res.op = to_string(o.op);
  res.backend = backend;
  res.ranks = s.size();
  res.warmup = o.warmup;
  res.iters = o.iters;
  auto hosts = s.hosts();
  res.hosts = static_cast<int>(std::set<std::string>(hosts.begin(), hosts.end()).size());
  res.tier = res.hosts == 1 ? "intra_node" : "inter_node";
  return res;
}

void finish_coll_point(const Session& s, const CollBenchOptions& o, double per_iter_s,
                       std::int64_t wrong, CollPoint& p) {
  const int n = s.size();
  p.time_s = s.sum(per_iter_s) / n;
  p.time_max_s = s.max(per_iter_s);
  p.algbw_Bps = p.time_s > 0 ? p.size_bytes / p.time_s : 0;
  p.busbw_Bps = p.algbw_Bps * bus_factor(o.op, n);
  p.wrong = o.check ? static_cast<std::int64_t>(s.sum(static_cast<double>(wrong))) : -1;
}

}  // namespace tutti::exec
