// The progress bar (see progress.hpp).
#include "tutti/core/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace tutti {

std::string format_progress(const std::string& label, std::uint64_t done, std::uint64_t total,
                            double elapsed_s) {
  constexpr int kWidth = 30;
  const double frac =
      total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 0.0;
  const int filled = static_cast<int>(frac * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0;
  char eta[32] = "ETA -:--";
  if (rate > 0 && total >= done) {
    const long long left = std::llround(static_cast<double>(total - done) / rate);
    if (left >= 3600)
      std::snprintf(eta, sizeof eta, "ETA %lld:%02lld:%02lld", left / 3600, left / 60 % 60,
                    left % 60);
    else
      std::snprintf(eta, sizeof eta, "ETA %lld:%02lld", left / 60, left % 60);
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %s [%s] %3.0f%%  %llu/%llu  %.3g/s  %s", label.c_str(),
                bar.c_str(), frac * 100, static_cast<unsigned long long>(done),
                static_cast<unsigned long long>(total), rate, eta);
  return buf;
}

ProgressBar::ProgressBar(std::string label, bool enabled, std::FILE* out)
    : label_(std::move(label)),
      out_(out),
      enabled_(enabled && out != nullptr && isatty(fileno(out)) == 1),
      start_(Clock::now()),
      last_(start_) {}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::update(std::uint64_t done, std::uint64_t total) {
  if (!enabled_ || total == 0) return;
  if (done >= total) {  // the work is done: clear the line (the caller may print results next)
    finish();
    return;
  }
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 0.5 || std::chrono::duration<double>(now - last_).count() < 0.1) return;
  last_ = now;
  const std::string text = format_progress(label_, done, total, elapsed);
  width_ = std::max(width_, text.size());
  std::fprintf(out_, "\r%-*s", static_cast<int>(width_), text.c_str());
  std::fflush(out_);
  shown_ = true;
}

void ProgressBar::finish() {
  if (!shown_) return;
  std::fprintf(out_, "\r%*s\r", static_cast<int>(width_), "");
  std::fflush(out_);
  shown_ = false;
}

ProgressFn ProgressBar::callback() {
  return [this](std::uint64_t done, std::uint64_t total) { update(done, total); };
}

}  // namespace tutti
