// Slurm `sacct --parsable2` reader: '|'-separated fields, first line the header
// (https://slurm.schedmd.com/sacct.html: --parsable2 "output will be '|' delimited without a '|'
// at the end"). Times are ISO 8601 ("2024-03-01T12:34:56"), Timelimit [D-]HH:MM:SS.
#include <fmt/format.h>

#include <charconv>
#include <string_view>

#include "tutti/cluster/jobs.hpp"
#include "tutti/core/error.hpp"

namespace tutti {
namespace cluster_detail {
void normalise_jobs(JobList& l);
}

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (true) {
    std::size_t j = s.find(sep, i);
    out.push_back(s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

bool to_int(std::string_view s, long long& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm, public domain description).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// "YYYY-MM-DDTHH:MM:SS" -> seconds since the epoch; false when not of that form.
bool parse_time(std::string_view s, double& out) {
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
    return false;
  long long y, mo, d, h, mi, se;
  if (!to_int(s.substr(0, 4), y) || !to_int(s.substr(5, 2), mo) || !to_int(s.substr(8, 2), d) ||
      !to_int(s.substr(11, 2), h) || !to_int(s.substr(14, 2), mi) || !to_int(s.substr(17, 2), se))
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return false;
  out = static_cast<double>(
      days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 +
      mi * 60 + se);
  return true;
}

// "[D-]HH:MM:SS", "MM:SS", "MM", "UNLIMITED"/"Partition_Limit" (0 = none).
bool parse_limit(std::string_view s, double& out) {
  out = 0;
  if (s.empty() || s == "UNLIMITED" || s == "Partition_Limit" || s == "INVALID") return true;
  long long days = 0;
  if (auto dash = s.find('-'); dash != std::string_view::npos) {
    if (!to_int(s.substr(0, dash), days)) return false;
    s = s.substr(dash + 1);
  }
  auto parts = split(s, ':');
  long long v[3] = {0, 0, 0};
  if (parts.size() > 3) return false;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!to_int(parts[i], v[i])) return false;
  double sec = 0;
  if (parts.size() == 3)
    sec = v[0] * 3600.0 + v[1] * 60.0 + v[2];
  else if (parts.size() == 2)
    sec = days ? v[0] * 3600.0 + v[1] * 60.0 : v[0] * 60.0 + v[1];
  else
    sec = days ? v[0] * 3600.0 : v[0] * 60.0;
  out = days * 86400.0 + sec;
  return true;
}

// GPUs in a TRES string "cpu=8,gres/gpu=4,mem=64G,node=1" or "gres/gpu:a100=4"; -1 when absent.
long long tres_gpus(std::string_view s) {
  for (std::string_view item : split(s, ',')) {
    if (item.rfind("gres/gpu", 0) != 0) continue;
    auto eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = item.substr(0, eq);
    if (key != "gres/gpu" && key.rfind("gres/gpu:", 0) != 0) continue;
    long long v;
    if (to_int(item.substr(eq + 1), v)) return v;
  }
  return -1;
}

}  // namespace

JobList read_sacct(const std::string& text, const std::string& file, int gpus_per_node) {
  JobList out;
  out.file = file;
  std::vector<std::string_view> lines = split(text, '\n');
  if (lines.empty() || lines[0].empty())
    throw InputError(file, "line 1", "an empty file",
                     "a sacct --parsable2 header line (JobID|User|Submit|...)");
  auto strip = [](std::string_view s) {
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
    return s;
  };
  std::vector<std::string_view> header = split(strip(lines[0]), '|');
  auto col = [&](std::string_view name) -> int {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  };
  const int c_id = col("JobID"), c_user = col("User"), c_acct = col("Account"),
            c_submit = col("Submit"), c_start = col("Start"), c_end = col("End"),
            c_alloc = col("AllocTRES"), c_req = col("ReqTRES"), c_nodes = col("NNodes"),
            c_limit = col("Timelimit"), c_state = col("State");
  for (auto [c, name] :
       {std::pair{c_id, "JobID"}, {c_submit, "Submit"}, {c_start, "Start"}, {c_end, "End"}})
    if (c < 0)
      throw InputError(file, "line 1 (header)", fmt::format("no {} column", name),
                       "a sacct --parsable2 header with JobID, Submit, Start, End and AllocTRES, "
                       "ReqTRES or NNodes");
  if (c_alloc < 0 && c_req < 0 && c_nodes < 0)
    throw InputError(file, "line 1 (header)", "no AllocTRES, ReqTRES or NNodes column",
                     "a GPU count source (sacct --format=...,AllocTRES)");
  for (std::size_t ln = 1; ln < lines.size(); ++ln) {
    std::string_view line = strip(lines[ln]);
    if (line.empty()) continue;
    const int line_no = static_cast<int>(ln + 1);
    std::vector<std::string_view> f = split(line, '|');
    if (f.size() != header.size())
      throw InputError(file, fmt::format("line {}", line_no), fmt::format("{} fields", f.size()),
                       fmt::format("{} '|'-separated fields as in the header", header.size()));
    std::string_view id = f[c_id];
    if (id.find('.') != std::string_view::npos) {  // job step (123.batch, 123.0): not a job
      ++out.skipped;
      continue;
    }
    auto field = [&](int c) { return std::string(header[c]); };
    double submit, start, end;
    if (!parse_time(f[c_submit], submit))
      throw InputError(file, fmt::format("line {}, {}", line_no, field(c_submit)),
                       fmt::format("\"{}\"", f[c_submit]), "a time such as 2024-03-01T12:34:56");
    if (f[c_start] == "Unknown" || f[c_start] == "None" || f[c_end] == "Unknown" ||
        f[c_end] == "None") {
      ++out.skipped;  // never started, or still running when dumped
      continue;
    }
    for (auto [c, v] : {std::pair{c_start, &start}, {c_end, &end}})
      if (!parse_time(f[c], *v))
        throw InputError(file, fmt::format("line {}, {}", line_no, field(c)),
                         fmt::format("\"{}\"", f[c]),
                         "a time such as 2024-03-01T12:34:56, or Unknown");
    if (end < start)
      throw InputError(file, fmt::format("line {}, End", line_no),
                       fmt::format("\"{}\" before Start", f[c_end]), "End >= Start");
    long long gpus = -1;
    if (c_alloc >= 0) gpus = tres_gpus(f[c_alloc]);
    if (gpus < 0 && c_req >= 0) gpus = tres_gpus(f[c_req]);
    if (gpus < 0 && c_nodes >= 0 && !f[c_nodes].empty()) {
      long long n;
      if (!to_int(f[c_nodes], n) || n < 0 || n > kMaxJobGpus)
        throw InputError(file, fmt::format("line {}, NNodes", line_no),
                         fmt::format("\"{}\"", f[c_nodes]), "a node count");
      gpus = n * gpus_per_node;
    }
    if (gpus < 0)
      throw InputError(file, fmt::format("line {}", line_no),
                       "no gres/gpu in AllocTRES/ReqTRES and no NNodes",
                       "a GPU count (gres/gpu=N)");
    if (gpus > kMaxJobGpus)  // also no int overflow below
      throw InputError(file, fmt::format("line {}", line_no), fmt::format("{} GPUs", gpus),
                       fmt::format("at most {} GPUs", kMaxJobGpus));
    if (gpus == 0 || end <= start) {  // CPU-only job, or ran for no time
      ++out.skipped;
      continue;
    }
    JobSpec j;
    j.id = std::string(id);
    j.submit_s = submit;
    j.gpus = static_cast<int>(gpus);
    j.work.duration_s = end - start;
    if (c_limit >= 0 && !parse_limit(f[c_limit], j.walltime_s))
      throw InputError(file, fmt::format("line {}, Timelimit", line_no),
                       fmt::format("\"{}\"", f[c_limit]), "[D-]HH:MM:SS, MM:SS or UNLIMITED");
    j.user =
        intern(out.users, c_user >= 0 && !f[c_user].empty() ? std::string(f[c_user]) : "unknown");
    j.team =
        intern(out.teams, c_acct >= 0 && !f[c_acct].empty() ? std::string(f[c_acct]) : "unknown");
    j.line = line_no;
    (void)c_state;  // State is informational: failed and cancelled jobs still held their GPUs.
    out.jobs.push_back(std::move(j));
  }
  cluster_detail::normalise_jobs(out);
  return out;
}

}  // namespace tutti
