#pragma once
// Job runtimes from tutti's own engines, cached per equivalent placement (private).
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tutti/cluster/jobs.hpp"

namespace tutti {
struct Cluster;
struct Workload;
namespace cluster_detail {

struct Shape;

/// Solo timing of a job on one placement.
struct SoloTime {
  double unit_s = 1;       ///< Seconds per work unit (an iteration; 1 for fixed durations).
  double units = 0;        ///< Work units to run.
  double exposed = 0;      ///< Share of the unit the job waits on fabric communication.
  double fabric_busy = 0;  ///< Share of the unit its fabric flows are transferring.
  double checkpoint_bytes = 0;
};

class JobTimer {
 public:
  JobTimer(const Cluster& c, const Shape& s, const JobList& jobs, std::string engine,
           std::string calibration);
  ~JobTimer();
  /// Timing of `job` on `gpus` (GPU ids, rank order). Workload jobs are simulated once per
  /// (workload, GPU count, nodes, domains, groups spanned).
  SoloTime time(const JobSpec& job, const std::vector<int>& gpus);
  /// GPUs a job asks for (a workload job with gpus 0: its layout's).
  int job_gpus(const JobSpec& job);
  int cache_entries() const { return static_cast<int>(cache_.size()); }
  double wall_s() const { return wall_s_; }

 private:
  struct Loaded;
  const Loaded& loaded(int workload);
  const Cluster& c_;
  const Shape& s_;
  const JobList& jobs_;
  std::string engine_, calibration_;
  std::vector<std::unique_ptr<Loaded>> loaded_;
  std::map<std::tuple<int, int, int, int, int>, SoloTime> cache_;
  double wall_s_ = 0;
};

}  // namespace cluster_detail
}  // namespace tutti
