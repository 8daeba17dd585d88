// Job list plumbing shared by the readers: interning, sorting and loading by extension.
#include "tutti/cluster/jobs.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tutti/core/error.hpp"

namespace tutti {

int intern(std::vector<std::string>& names, const std::string& name) {
  // Linear search: user/team lists are short (tens to thousands); readers call this once per job.
  for (std::size_t i = names.size(); i-- > 0;)
    if (names[i] == name) return static_cast<int>(i);
  names.push_back(name);
  return static_cast<int>(names.size() - 1);
}

namespace cluster_detail {
/// Sorts by submit time (stable: ties keep input order) and shifts the first submission to 0.
void normalise_jobs(JobList& l) {
  std::stable_sort(l.jobs.begin(), l.jobs.end(),
                   [](const JobSpec& a, const JobSpec& b) { return a.submit_s < b.submit_s; });
  if (l.jobs.empty()) throw InputError(l.file, "jobs", "no runnable job", "at least one job");
  const double t0 = l.jobs.front().submit_s;
  for (JobSpec& j : l.jobs) j.submit_s -= t0;
}
}  // namespace cluster_detail

JobList load_jobs(const std::string& path, int processors_per_gpu, int gpus_per_node) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read file");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".swf") return read_swf(ss.str(), path, processors_per_gpu);
  if (ext == ".json") return read_job_json(ss.str(), path);
  return read_sacct(ss.str(), path, gpus_per_node);
}

}  // namespace tutti
