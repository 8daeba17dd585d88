#pragma once
// One progress bar for long commands (`tutti plan`, `report compare`, `--engine simgrid`, the
// cooling fixed point, `cluster simulate`): on stderr, only when stderr is a terminal and the
// user did not pass -q, with a rate and an ETA. Silent otherwise, so pipes and logs stay clean.
//
//   ProgressBar bar("screening", g.verbosity >= 0);
//   for (...) bar.update(done, total);   // cheap: redraws at most every 0.1 s, after 0.5 s
//   bar.finish();                        // clears the line (also on destruction)
//
// Code that must not depend on the CLI takes a ProgressFn (bar.callback()) instead.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace tutti {

/// Progress callback: (work done, total work), any unit; total 0 = unknown.
using ProgressFn = std::function<void(std::uint64_t done, std::uint64_t total)>;

/// The bar's text for `done` of `total` after `elapsed_s` seconds (no carriage return):
/// "  screening [#########.....................]  30%  300/1000  150/s  ETA 0:04".
/// The ETA is what is left at the rate so far ("ETA -:--" before any work is done).
std::string format_progress(const std::string& label, std::uint64_t done, std::uint64_t total,
                            double elapsed_s);

class ProgressBar {
 public:
  /// Shown only when `enabled` (e.g. not -q) and `out` is a terminal.
  explicit ProgressBar(std::string label, bool enabled, std::FILE* out = stderr);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// Redraws when due (at most every 0.1 s, from 0.5 s after the start); clears the line once
  /// `done` reaches `total` (work that runs in a forked child ends its bar itself).
  void update(std::uint64_t done, std::uint64_t total);
  /// Clears the bar's line if it was drawn. Idempotent.
  void finish();
  /// A callback that updates this bar (valid while the bar lives).
  ProgressFn callback();
  bool active() const { return enabled_; }
  /// Whether anything was written (for tests of the silent path).
  bool shown() const { return shown_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  std::FILE* out_;
  bool enabled_;
  bool shown_ = false;
  std::size_t width_ = 0;
  Clock::time_point start_, last_;
};

}  // namespace tutti
