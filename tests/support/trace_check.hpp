#pragma once
// Test support: a strict check of a Chrome / Perfetto JSON trace (the trace-event format), stricter
// than the viewers: what they drop or mis-draw without a word is an error here.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tutti::testing {

/// "" when `doc` is a well-formed trace, else the first problem found:
///  * a top-level object with a non-empty "traceEvents" array of objects;
///  * every event has "ph" (one of X B E M i I C), "name" (a string), "ts" (a number >= 0),
///    "pid" and "tid" (integers);
///  * "X" slices have "dur" >= 0; "B"/"E" pairs balance per track, an "E" closing the last "B";
///  * metadata: process_name / thread_name carry args.name (a string), at most one per process or
///    track; every process with events has a process_name and every track a thread_name;
///  * slices on one track nest or are disjoint (compared in whole nanoseconds).
inline std::string check_chrome_trace(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    return "no traceEvents array";
  const auto& evs = doc["traceEvents"];
  if (evs.empty()) return "no events";
  using Track = std::pair<long long, long long>;
  std::set<long long> named_pids, used_pids;
  std::set<Track> named_tracks, used_tracks;
  std::map<Track, std::vector<std::pair<long long, long long>>> slices;  // (start, end) ns
  std::map<Track, std::vector<long long>> open;                          // B stacks
  const std::set<std::string> phases = {"X", "B", "E", "M", "i", "I", "C"};
  for (std::size_t i = 0; i < evs.size(); ++i) {
    const auto& e = evs[i];
    const std::string at = "event " + std::to_string(i) + ": ";
    if (!e.is_object()) return at + "not an object";
    for (const char* k : {"ph", "name", "ts", "pid", "tid"})
      if (!e.contains(k)) return at + "no \"" + k + "\"";
    if (!e["ph"].is_string() || !phases.count(e["ph"].get<std::string>())) return at + "bad ph";
    if (!e["name"].is_string()) return at + "name is not a string";
    if (!e["ts"].is_number() || e["ts"].get<double>() < 0) return at + "ts is not a number >= 0";
    if (!e["pid"].is_number_integer() || !e["tid"].is_number_integer())
      return at + "pid/tid not integers";
    const std::string ph = e["ph"];
    const Track tr{e["pid"].get<long long>(), e["tid"].get<long long>()};
    const long long ts_ns = std::llround(e["ts"].get<double>() * 1000);
    if (ph == "M") {
      const std::string n = e["name"];
      if (n == "process_name" || n == "thread_name") {
        if (!e.contains("args") || !e["args"].contains("name") || !e["args"]["name"].is_string())
          return at + n + " without args.name";
        if (n == "process_name" && !named_pids.insert(tr.first).second)
          return at + "second process_name";
        if (n == "thread_name" && !named_tracks.insert(tr).second) return at + "second thread_name";
      }
      continue;
    }
    used_pids.insert(tr.first);
    used_tracks.insert(tr);
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0)
        return at + "X without dur >= 0";
      slices[tr].push_back({ts_ns, ts_ns + std::llround(e["dur"].get<double>() * 1000)});
    } else if (ph == "B") {
      open[tr].push_back(ts_ns);
    } else if (ph == "E") {
      if (open[tr].empty()) return at + "E without B";
      if (open[tr].back() > ts_ns) return at + "E before its B";
      slices[tr].push_back({open[tr].back(), ts_ns});
      open[tr].pop_back();
    }
  }
  for (const auto& [tr, st] : open)
    if (!st.empty())
      return "unclosed B on pid " + std::to_string(tr.first) + " tid " + std::to_string(tr.second);
  for (long long pid : used_pids)
    if (!named_pids.count(pid)) return "pid " + std::to_string(pid) + " has no process_name";
  for (const Track& tr : used_tracks)
    if (!named_tracks.count(tr))
      return "pid " + std::to_string(tr.first) + " tid " + std::to_string(tr.second) +
             " has no thread_name";
  for (auto& [tr, v] : slices) {
    // Longer first at equal starts, so that a parent precedes its children.
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<long long> ends;
    for (const auto& [s, e] : v) {
      while (!ends.empty() && ends.back() <= s) ends.pop_back();
      if (!ends.empty() && e > ends.back())
        return "pid " + std::to_string(tr.first) + " tid " + std::to_string(tr.second) +
               ": slices overlap at " + std::to_string(s) + " ns without nesting";
      ends.push_back(e);
    }
  }
  return "";
}

}  // namespace tutti::testing
