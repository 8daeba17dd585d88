// Chrome / Perfetto traces (trace.hpp). Why it is written this way:
//  * selection happens before the simulation (check_trace): a 1,024-GPU trace of every timeline is
//    ~180 MB, too large for the browser tools, and refusing it after minutes of simulation helps no
//    one;
//  * lanes: the engine lets a stream go on after issuing a send or a receive (NCCL group calls), so
//    several transfers of one rank can be in flight at once; on one track they would overlap
//    without nesting, which Perfetto rejects. Greedy interval partitioning over start times puts
//    each slice on the first lane of its track that is free, the fewest lanes possible;
//  * integer nanoseconds: formatting ts and dur separately from doubles can make a slice end 1 ns
//    after the next one on its track starts.
#include "tutti/sim/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <tuple>

#include "tutti/core/error.hpp"
#include "tutti/sim/attribution.hpp"

namespace tutti {

namespace {

constexpr const char* kRanksFlag = "--trace-ranks";
constexpr const char* kOpsFlag = "--trace-ops";
constexpr const char* kIterationsFlag = "--trace-iterations";

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = text.find(',', at);
    out.push_back(
        trim(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

/// Sorted, merged copy of inclusive ranges.
std::vector<std::pair<long long, long long>> merged(
    std::vector<std::pair<long long, long long>> r) {
  std::sort(r.begin(), r.end());
  std::vector<std::pair<long long, long long>> out;
  for (const auto& x : r) {
    if (!out.empty() && x.first <= out.back().second + 1)
      out.back().second = std::max(out.back().second, x.second);
    else
      out.push_back(x);
  }
  return out;
}

bool name_matches(const std::string& pattern, const std::string& name) {
  if (!pattern.empty() && pattern.back() == '*')
    return name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return pattern == name;
}

/// Per Program name: whether the filter keeps ops of that name, whatever their kind.
std::vector<char> names_kept(const Program& p, const TraceFilter& f) {
  std::vector<char> keep(p.names.size(), 0);
  for (const std::string& pat : f.names) {
    bool any = false;
    for (std::size_t i = 0; i < p.names.size(); ++i)
      if (name_matches(pat, p.names[i])) keep[i] = any = true;
    if (!any)
      throw InputError(
          kOpsFlag, "", "\"" + pat + "\"",
          "an op kind (gemm, attention, membound, collective, send, recv, compute, p2p) or an op "
          "name of this workload's program (attn.qkv, moe.*, ...)");
  }
  return keep;
}

struct Selection {
  std::vector<std::pair<int, std::size_t>> ranks;  // (rank, timeline index), ascending rank
  std::vector<char> kind_kept;                     // per OpKind
  std::vector<char> name_kept;                     // per Program name
  bool all_ops = true;
  std::vector<std::pair<long long, long long>> iterations;  // merged
  std::uint64_t iteration_count = 0;

  bool keeps(const Op& op) const {
    return all_ops || kind_kept[static_cast<std::size_t>(op.kind)] || name_kept[op.name];
  }
};

Selection select(const Program& p, const std::vector<TraceTimeline>& tls, const TraceFilter& f) {
  Selection s;
  if (f.ranks.empty()) {
    for (std::size_t t = 0; t < tls.size(); ++t) s.ranks.push_back({tls[t].first_rank, t});
    std::sort(s.ranks.begin(), s.ranks.end());
  } else {
    std::vector<std::size_t> order(tls.size());  // timelines by first rank
    for (std::size_t t = 0; t < order.size(); ++t) order[t] = t;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return tls[a].first_rank < tls[b].first_rank; });
    for (const auto& [lo, hi] : merged(f.ranks)) {
      if (hi >= p.world)
        throw InputError(kRanksFlag, "", std::to_string(hi),
                         fmt::format("ranks 0 to {} (the job has {} GPUs)", p.world - 1, p.world));
      for (long long r = lo; r <= hi; ++r) {
        auto it = std::upper_bound(order.begin(), order.end(), r, [&](long long x, std::size_t t) {
          return x < tls[t].first_rank;
        });
        check_internal(it != order.begin(), "trace: a rank before the first timeline");
        const std::size_t t = *(it - 1);
        check_internal(r < tls[t].first_rank + tls[t].nranks,
                       "trace: a rank that no timeline covers");
        s.ranks.push_back({static_cast<int>(r), t});
      }
    }
  }
  s.kind_kept.assign(enum_count<OpKind>, 0);
  for (OpKind k : f.kinds) s.kind_kept[static_cast<std::size_t>(k)] = 1;
  s.name_kept = names_kept(p, f);
  s.all_ops = f.kinds.empty() && f.names.empty();
  s.iterations = f.iterations.empty() ? std::vector<std::pair<long long, long long>>{{0, 0}}
                                      : merged(f.iterations);
  for (const auto& [lo, hi] : s.iterations)
    s.iteration_count += static_cast<std::uint64_t>(hi - lo + 1);
  return s;
}

// Track of a slice before lanes: streams first, then sends and receives per peer stage.
enum TrackGroup : int { kStream = 0, kSend = 1, kRecv = 2 };
struct TrackKey {
  int group = kStream, sub = 0, lane = 0;  // sub: the stream, or the peer stage
  bool operator<(const TrackKey& o) const {
    return std::tie(group, sub, lane) < std::tie(o.group, o.sub, o.lane);
  }
};

struct Slice {
  std::uint32_t op;
  std::int64_t start_ns, end_ns;
  TrackKey track;
  int tid = 0;
};

/// The slices of one timeline that the filter keeps, with lanes and per-track ids (tid = 1 + the
/// track's place in TrackKey order).
struct TimelineSlices {
  std::vector<Slice> slices;
  std::map<TrackKey, int> tids;
};

std::int64_t to_ns(double s) {
  return std::llround(s * 1e9);
}

TimelineSlices slices_of(const TraceTimeline& tl, const Selection& sel) {
  TimelineSlices out;
  const auto& ops = tl.rc->ops;
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (!sel.keeps(op)) continue;
    const double a =
        is_compute(op.kind) ? tl.start_s[i] : std::max(tl.start_s[i], tl.rendezvous_s[i]);
    Slice s{i, to_ns(a), 0, {}};
    s.end_ns = std::max(s.start_ns, to_ns(tl.end_s[i]));
    if (op.kind == OpKind::Send)
      s.track = {kSend, tl.rc->stage + op.peer_delta, 0};
    else if (op.kind == OpKind::Recv)
      s.track = {kRecv, tl.rc->stage + op.peer_delta, 0};
    else
      s.track = {kStream, static_cast<int>(op.stream), 0};
    out.slices.push_back(s);
  }
  std::stable_sort(out.slices.begin(), out.slices.end(), [](const Slice& x, const Slice& y) {
    return std::tie(x.track.group, x.track.sub, x.start_ns) <
           std::tie(y.track.group, y.track.sub, y.start_ns);
  });
  std::map<std::pair<int, int>, std::vector<std::int64_t>>
      lane_end;  // per track: each lane's last end
  for (Slice& s : out.slices) {
    auto& ends = lane_end[{s.track.group, s.track.sub}];
    std::size_t lane = 0;
    while (lane < ends.size() && ends[lane] > s.start_ns) ++lane;
    if (lane == ends.size()) ends.push_back(0);
    ends[lane] = s.end_ns;
    s.track.lane = static_cast<int>(lane);
    out.tids.emplace(s.track, 0);
  }
  int tid = 1;
  for (auto& [key, id] : out.tids) id = tid++;
  for (Slice& s : out.slices) s.tid = out.tids.at(s.track);
  // Program order within a track reads best in the file; viewers sort by time anyway.
  std::sort(out.slices.begin(), out.slices.end(),
            [](const Slice& x, const Slice& y) { return x.op < y.op; });
  return out;
}

std::string track_name(const TrackKey& k) {
  std::string n = k.group == kStream ? std::string(to_string(static_cast<Stream>(k.sub)))
                  : k.group == kSend ? fmt::format("send to stage {}", k.sub)
                                     : fmt::format("recv from stage {}", k.sub);
  if (k.lane > 0) n += fmt::format(" ({})", k.lane + 1);
  return n;
}

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump();
}

// Bytes of one slice's line without its name, pid and numbers (see write_trace's format).
constexpr double kSliceOverhead =
    sizeof(R"({"ph":"X","pid":,"tid":,"name":"","cat":"","ts":,"dur":,"args":{"mb":,"iter":}},)") -
    1 + 1;
constexpr double kNumberDigits = 11 + 8 + 2 + 2 + 1;  // ts, dur, tid, mb, iteration (typical)

}  // namespace

std::vector<std::pair<long long, long long>> parse_index_ranges(const std::string& text,
                                                                const std::string& flag) {
  std::vector<std::pair<long long, long long>> out;
  const std::string expected =
      "a comma list of non-negative indices and inclusive ranges, e.g. 0-7,64";
  if (trim(text).empty()) throw InputError(flag, "", "an empty list", expected);
  auto number = [&](const std::string& s, const std::string& item) {
    if (s.empty() || s.size() > 15 || s.find_first_not_of("0123456789") != std::string::npos)
      throw InputError(flag, "", "\"" + item + "\"", expected);
    return std::stoll(s);
  };
  for (const std::string& item : split_commas(text)) {
    const std::size_t dash = item.find('-');
    if (dash == std::string::npos) {
      const long long v = number(item, item);
      out.push_back({v, v});
      continue;
    }
    const long long lo = number(trim(item.substr(0, dash)), item),
                    hi = number(trim(item.substr(dash + 1)), item);
    if (hi < lo)
      throw InputError(flag, "", "\"" + item + "\"", "a range whose end is not before its start");
    out.push_back({lo, hi});
  }
  return out;
}

TraceFilter parse_trace_filter(const std::string& ranks, const std::string& ops,
                               const std::string& iterations) {
  TraceFilter f;
  if (!ranks.empty()) f.ranks = parse_index_ranges(ranks, kRanksFlag);
  if (!iterations.empty()) f.iterations = parse_index_ranges(iterations, kIterationsFlag);
  if (!ops.empty()) {
    if (trim(ops).empty()) throw InputError(kOpsFlag, "", "an empty list", "op kinds or names");
    for (const std::string& tok : split_commas(ops)) {
      if (tok.empty())
        throw InputError(kOpsFlag, "", "\"" + ops + "\"",
                         "op kinds or names separated by single commas");
      if (tok == "compute") {
        f.kinds.insert(f.kinds.end(), {OpKind::Gemm, OpKind::Attention, OpKind::MemBound});
      } else if (tok == "p2p") {
        f.kinds.insert(f.kinds.end(), {OpKind::Send, OpKind::Recv});
      } else if (auto k = parse_enum<OpKind>(tok)) {
        f.kinds.push_back(*k);
      } else {
        if (tok.find_first_of(" \"\\") != std::string::npos || tok == "*")
          throw InputError(kOpsFlag, "", "\"" + tok + "\"",
                           "an op kind, an op name or a name prefix ending in *");
        f.names.push_back(tok);
      }
    }
  }
  return f;
}

TraceEstimate estimate_trace(const Program& p, const std::vector<TraceTimeline>& tls,
                             const TraceFilter& f, double run_iterations) {
  const Selection sel = select(p, tls, f);
  if (run_iterations >= 1 && static_cast<double>(sel.iterations.back().second) >= run_iterations)
    throw InputError(kIterationsFlag, "", std::to_string(sel.iterations.back().second),
                     fmt::format("iterations 0 to {:.0f} (the run has {:.0f})", run_iterations - 1,
                                 run_iterations));
  // Per timeline: kept slices and the bytes of their names and kinds.
  std::vector<std::pair<std::uint64_t, double>> per(tls.size(), {0, 0});
  std::vector<char> counted(tls.size(), 0);
  TraceEstimate e;
  e.ranks = sel.ranks.size();
  for (const auto& [rank, t] : sel.ranks) {
    if (!counted[t]) {
      counted[t] = 1;
      for (const Op& op : tls[t].rc->ops)
        if (sel.keeps(op)) {
          ++per[t].first;
          per[t].second += static_cast<double>(p.names[op.name].size() +
                                               std::string_view(to_string(op.kind)).size()) +
                           kSliceOverhead + kNumberDigits;
        }
    }
    const double pid_digits = static_cast<double>(std::to_string(rank).size());
    e.events += per[t].first * sel.iteration_count;
    e.bytes += (per[t].second + pid_digits * static_cast<double>(per[t].first)) *
               static_cast<double>(sel.iteration_count);
    e.bytes += 200 + 80 * (kNumStreams + 4);  // process and track names
  }
  return e;
}

void check_trace(const Program& p, const std::vector<TraceTimeline>& tls, const TraceOptions& o,
                 double run_iterations) {
  const TraceEstimate e = estimate_trace(p, tls, o.filter, run_iterations);
  const bool over = e.bytes > o.max_bytes;
  if (o.note)
    o.note(fmt::format(
        "trace: about {:.1f} MB ({} slices on {} ranks){}", e.bytes / 1e6, e.events, e.ranks,
        over && o.force
            ? fmt::format(", over the {:.0f} MB limit (--trace-force)", o.max_bytes / 1e6)
            : std::string()));
  if (over && !o.force)
    throw InputError(
        "--trace", "",
        fmt::format("a trace of about {:.0f} MB ({} slices on {} ranks)", e.bytes / 1e6, e.events,
                    e.ranks),
        fmt::format("at most {:.0f} MB, which trace viewers open comfortably: choose ranks "
                    "(--trace-ranks 0-7), ops (--trace-ops compute,collective) or iterations "
                    "(--trace-iterations), or pass --trace-force",
                    o.max_bytes / 1e6));
}

void write_trace(const std::string& path, const Program& p, const std::vector<TraceTimeline>& tls,
                 const TraceFilter& f, double iteration_s) {
  const Selection sel = select(p, tls, f);
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(path + ": cannot write the trace file");
  std::vector<std::string> names(p.names.size());
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = json_string(p.names[i]);
  std::vector<std::unique_ptr<TimelineSlices>> cache(tls.size());
  const std::int64_t iter_ns = to_ns(iteration_s);
  fmt::memory_buffer buf;
  auto us = [](std::int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); };
  buf.append(std::string_view("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"));
  bool first = true;
  auto sep = [&] {
    if (!first) buf.append(std::string_view(",\n"));
    first = false;
  };
  for (const auto& [rank, t] : sel.ranks) {
    const TraceTimeline& tl = tls[t];
    if (!cache[t]) cache[t] = std::make_unique<TimelineSlices>(slices_of(tl, sel));
    const TimelineSlices& ts = *cache[t];
    const RankCoords rc = coords_of(p.layout, rank);
    const std::string lockstep = tl.nranks > 1
                                     ? fmt::format("; ranks {}-{} run in lock-step", tl.first_rank,
                                                   tl.first_rank + tl.nranks - 1)
                                     : "";
    sep();
    fmt::format_to(
        std::back_inserter(buf),
        R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"ts":0,"args":{{"name":{}}}}})", rank,
        json_string(fmt::format("rank {}: stage {}, tp {} cp {} dp {}{}", rank, rc.pp, rc.tp, rc.cp,
                                rc.dp, lockstep)));
    sep();
    fmt::format_to(
        std::back_inserter(buf),
        R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"ts":0,"args":{{"sort_index":{}}}}})",
        rank, rank);
    for (const auto& [key, tid] : ts.tids) {
      sep();
      fmt::format_to(
          std::back_inserter(buf),
          R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"ts":0,"args":{{"name":{}}}}})",
          rank, tid, json_string(track_name(key)));
      sep();
      fmt::format_to(
          std::back_inserter(buf),
          R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"ts":0,"args":{{"sort_index":{}}}}})",
          rank, tid, tid);
    }
    for (const auto& [lo, hi] : sel.iterations)
      for (long long k = lo; k <= hi; ++k) {
        const std::int64_t shift = iter_ns * k;
        for (const Slice& s : ts.slices) {
          const Op& op = tl.rc->ops[s.op];
          sep();
          fmt::format_to(
              std::back_inserter(buf),
              R"({{"ph":"X","pid":{},"tid":{},"name":{},"cat":"{}","ts":{},"dur":{},"args":{{"mb":{},"iter":{}}}}})",
              rank, s.tid, names[op.name], to_string(op.kind), us(s.start_ns + shift),
              us(s.end_ns - s.start_ns), op.microbatch, k);
          if (buf.size() > (1u << 20)) {
            out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
            buf.clear();
          }
        }
      }
  }
  buf.append(std::string_view("\n]}\n"));
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  if (!out) throw InputError(path + ": write failed");
}

}  // namespace tutti
