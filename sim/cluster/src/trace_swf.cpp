// Standard Workload Format reader (Parallel Workloads Archive, format v2.2:
// https://www.cs.huji.ac.il/labs/parallel/workload/swf.html). 18 fields, -1 = unknown.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string_view>

#include "tutti/cluster/jobs.hpp"
#include "tutti/core/error.hpp"

namespace tutti {
namespace cluster_detail {
void normalise_jobs(JobList& l);
}

namespace {
constexpr const char* kFieldNames[18] = {"job number",
                                         "submit time",
                                         "wait time",
                                         "run time",
                                         "allocated processors",
                                         "average CPU time",
                                         "used memory",
                                         "requested processors",
                                         "requested time",
                                         "requested memory",
                                         "status",
                                         "user id",
                                         "group id",
                                         "executable number",
                                         "queue number",
                                         "partition number",
                                         "preceding job",
                                         "think time"};

// An SWF id as text: integers print as integers at any magnitude (no cast, so
// 1e116 is "1e+116", never undefined behaviour); fractions keep their digits.
std::string id_text(double v) {
  if (std::fabs(v) < 9.0e15 && v == std::floor(v))
    return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}
}  // namespace

JobList read_swf(const std::string& text, const std::string& file, int processors_per_gpu) {
  if (processors_per_gpu < 1)
    throw InputError("--processors-per-gpu", "processors-per-gpu",
                     std::to_string(processors_per_gpu), ">= 1");
  JobList out;
  out.file = file;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == ';') continue;
    double f[18];
    int n = 0;
    std::size_t i = first;
    while (i < line.size()) {
      std::size_t j = line.find_first_of(" \t", i);
      if (j == std::string_view::npos) j = line.size();
      std::string_view tok = line.substr(i, j - i);
      if (n == 18)
        throw InputError(file, fmt::format("line {}", line_no),
                         fmt::format("more than 18 fields (\"{}\")", tok),
                         "18 whitespace-separated SWF fields");
      double v = 0;
      auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (ec != std::errc() || p != tok.data() + tok.size() || !std::isfinite(v))
        throw InputError(file,
                         fmt::format("line {}, field {} ({})", line_no, n + 1, kFieldNames[n]),
                         fmt::format("\"{}\"", tok), "a number (-1 for unknown)");
      f[n++] = v;
      i = line.find_first_not_of(" \t", j);
      if (i == std::string_view::npos) break;
    }
    if (n != 18)
      throw InputError(file, fmt::format("line {}", line_no), fmt::format("{} fields", n),
                       "18 whitespace-separated SWF fields");
    const double submit = f[1], run = f[3];
    double procs = f[4] > 0 ? f[4] : f[7];
    if (submit < 0)
      throw InputError(file, fmt::format("line {}, field 2 (submit time)", line_no),
                       fmt::format("{}", submit), ">= 0 seconds");
    if (procs <= 0 || run <= 0) {  // never ran (cancelled in queue) or no size: not a load
      ++out.skipped;
      continue;
    }
    const double gpus = std::ceil(procs / processors_per_gpu);
    if (gpus > kMaxJobGpus)
      throw InputError(
          file,
          fmt::format("line {}, field {} ({})", line_no, f[4] > 0 ? 5 : 8,
                      kFieldNames[f[4] > 0 ? 4 : 7]),
          fmt::format("{} processors ({} GPUs)", procs, gpus),
          fmt::format("at most {} GPUs at {} processors per GPU", kMaxJobGpus, processors_per_gpu));
    JobSpec j;
    j.id = id_text(f[0]);
    j.submit_s = submit;
    j.gpus = static_cast<int>(gpus);
    j.work.duration_s = run;
    j.walltime_s = f[8] > 0 ? f[8] : 0;
    j.user = intern(out.users, f[11] >= 0 ? "u" + id_text(f[11]) : "unknown");
    j.team = intern(out.teams, f[12] >= 0 ? "g" + id_text(f[12]) : "unknown");
    j.line = line_no;
    out.jobs.push_back(std::move(j));
  }
  cluster_detail::normalise_jobs(out);
  return out;
}

}  // namespace tutti
