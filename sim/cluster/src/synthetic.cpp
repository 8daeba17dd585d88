// Seeded synthetic traces: Poisson arrivals, power-of-two sizes log-uniform in [min, max],
// lognormal durations (the shape reported for GPU cluster job durations, e.g. Jeon et al.,
// "Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads", ATC'19), users
// drawn Zipf(1) (a few heavy users).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "rng.hpp"
#include "tutti/cluster/jobs.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"

namespace tutti {

SyntheticSpec parse_synthetic(const std::string& text) {
  SyntheticSpec s;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) continue;
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InputError("--synthetic", std::string(item), "no '='", "KEY=VALUE");
    const std::string key(item.substr(0, eq)), val(item.substr(eq + 1));
    auto num = [&](double lo, double hi) {
      auto v = parse_quantity(val, Dim::Count);
      if (!v || *v < lo || *v > hi)
        throw InputError("--synthetic", key, "\"" + val + "\"",
                         fmt::format("a number in [{}, {}]", lo, hi));
      return *v;
    };
    auto time = [&]() {
      auto v = parse_quantity(val, Dim::Time);
      if (!v || *v <= 0)
        throw InputError("--synthetic", key, "\"" + val + "\"",
                         dim_expectation(Dim::Time) + ", > 0");
      return *v;
    };
    if (key == "jobs")
      s.jobs = static_cast<int>(num(1, 1e7));
    else if (key == "span")
      s.span_s = time();
    else if (key == "min_gpus")
      s.min_gpus = static_cast<int>(num(1, kMaxJobGpus));
    else if (key == "max_gpus")
      s.max_gpus = static_cast<int>(num(1, kMaxJobGpus));
    else if (key == "median")
      s.median_s = time();
    else if (key == "sigma")
      s.sigma = num(0, 5);
    else if (key == "max_duration")
      s.max_duration_s = time();
    else if (key == "users")
      s.users = static_cast<int>(num(1, 1e6));
    else if (key == "comm")
      s.comm_fraction = num(0, 1);
    else if (key == "walltime_factor")
      s.walltime_factor = num(1, 100);
    else
      throw InputError("--synthetic", key, "an unknown key",
                       "jobs, span, min_gpus, max_gpus, median, sigma, max_duration, users, comm "
                       "or walltime_factor");
  }
  if (s.min_gpus > s.max_gpus)
    throw InputError("--synthetic", "min_gpus", std::to_string(s.min_gpus),
                     "<= max_gpus (" + std::to_string(s.max_gpus) + ")");
  return s;
}

JobList synthetic_jobs(const SyntheticSpec& s, std::uint64_t seed) {
  cluster_detail::Rng rng(seed);
  JobList out;
  out.file = "--synthetic";
  out.teams.push_back("default");
  for (int u = 0; u < s.users; ++u) out.users.push_back(fmt::format("user{}", u));
  // Zipf(1) cumulative weights over users.
  std::vector<double> cdf(static_cast<std::size_t>(s.users));
  double acc = 0;
  for (int u = 0; u < s.users; ++u) cdf[u] = acc += 1.0 / (u + 1);
  const double lo = std::log2(s.min_gpus), hi = std::log2(s.max_gpus);
  const double mean_gap = s.span_s / s.jobs;
  double t = 0;
  out.jobs.reserve(static_cast<std::size_t>(s.jobs));
  for (int i = 0; i < s.jobs; ++i) {
    JobSpec j;
    j.id = fmt::format("s{}", i);
    j.submit_s = t;
    t += rng.exponential(mean_gap);
    const int e = static_cast<int>(std::floor(
        lo + rng.uniform() * (std::floor(hi) - std::ceil(lo) + 1 - 1e-12) + (std::ceil(lo) - lo)));
    j.gpus = std::clamp(1 << std::clamp(e, 0, 30), s.min_gpus, s.max_gpus);
    j.work.duration_s = std::min(s.max_duration_s, s.median_s * std::exp(s.sigma * rng.normal()));
    j.work.comm_fraction = s.comm_fraction;
    j.walltime_s = j.work.duration_s * s.walltime_factor;
    const double r = rng.uniform() * acc;
    j.user = static_cast<int>(std::lower_bound(cdf.begin(), cdf.end(), r) - cdf.begin());
    j.user = std::min(j.user, s.users - 1);
    out.jobs.push_back(std::move(j));
  }
  return out;
}

}  // namespace tutti
