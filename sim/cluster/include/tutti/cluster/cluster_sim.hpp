#pragma once
// `tutti cluster simulate`: many jobs sharing one cluster, as a discrete-event simulation.
//
// Events: submit, start, finish, node failure (from the cluster's reliability profile), node
// repair, restart from the last checkpoint, preemption. After every batch of events at one
// instant the scheduler runs one pass over the queue.
//
// Schedulers (SchedulerKind), each an ordering of the queue plus a start rule:
//   fifo          submit order; the head blocks everything behind it.
//   easy          EASY backfill (Lifka 1995): the head gets a reservation at the earliest time
//                 enough GPUs free up (running jobs' limits); later jobs start now when they
//                 end before it or fit in the GPUs it leaves over.
//   conservative  conservative backfill (Mu'alem & Feitelson 2001): every queued job (up to the
//                 backfill depth) holds a reservation; a job starts early only if it delays none.
//   fair-share    queue ordered by decayed past usage of the user (or team), then EASY.
//   gang          priority order; a head that does not fit preempts lower-priority running jobs
//                 (latest started first), which requeue and resume from their last checkpoint.
// Placement (PlacementKind): packed (lowest free GPU/node ids), spread (round-robin over leaf
// groups, emptiest node first), topology (best-fit NVLink domain, then best-fit leaf group, then
// the fewest groups: rail/leaf locality). Allocation by whole nodes or by GPUs.
//
// Elastic jobs (option `elastic`, fixed-duration jobs with a GPU range): queued for their
// minimum; before a pass, running elastic jobs give back GPUs above their minimum (widest surplus
// first) when that lets the queue head fit; after a pass they grow into the free GPUs (start
// order) up to their maximum. A job on g GPUs runs at g / gpus of its nominal throughput (linear
// scaling: the GPU-seconds of work are conserved); progress is kept across resizes.
// Job runtimes: fixed durations from the trace, or a workload + layout timed by tutti's engine
// (analytic or native) on the GPUs the job got, cached per (workload, GPUs, nodes, NVLink domains,
// leaf groups spanned). Interference: every running job that spans leaf groups loads the fabric
// links its ring traffic crosses (routed on the real topology) with a demand per flow = its solo
// fabric busy fraction; each link is shared by water-filling (max-min with demands) and a job's
// communication stretches by its share on its most loaded link:
//   T = max(T_solo (1 + e (s - 1)), f T_solo s)   (e: exposed comm share, f: fabric busy share).
// Complexity per scheduling pass: O(queue depth scanned + running jobs log running jobs) for
// EASY; O(depth x running) for conservative; placement O(nodes). The event loop allocates only
// when vectors grow.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tutti/cluster/jobs.hpp"
#include "tutti/core/enum.hpp"
#include "tutti/core/progress.hpp"

namespace tutti {

struct Cluster;

// clang-format off
#define TUTTI_SCHEDULER_KIND_VALUES(X)                                                       \
  X(Fifo, "fifo") X(Easy, "easy-backfill") X(Conservative, "conservative-backfill")         \
  X(FairShare, "fair-share") X(Gang, "gang")
// clang-format on
TUTTI_ENUM(SchedulerKind, std::uint8_t, TUTTI_SCHEDULER_KIND_VALUES);
// clang-format off
#define TUTTI_PLACEMENT_KIND_VALUES(X) X(Packed, "packed") X(Spread, "spread") X(Topology, "topology")
// clang-format on
TUTTI_ENUM(PlacementKind, std::uint8_t, TUTTI_PLACEMENT_KIND_VALUES);
// clang-format off
#define TUTTI_ALLOC_UNIT_VALUES(X) X(Node, "node") X(Gpu, "gpu")
// clang-format on
TUTTI_ENUM(AllocUnit, std::uint8_t, TUTTI_ALLOC_UNIT_VALUES);
/// Parse the CLI spellings (also "easy", "conservative"); InputError (file `flag`) listing them.
SchedulerKind parse_scheduler(const std::string& s, const std::string& flag = "--scheduler");
PlacementKind parse_placement(const std::string& s, const std::string& flag = "--placement");
AllocUnit parse_alloc(const std::string& s, const std::string& flag = "--alloc");

struct ClusterSimOptions {
  SchedulerKind scheduler = SchedulerKind::Easy;
  PlacementKind placement = PlacementKind::Topology;
  AllocUnit alloc = AllocUnit::Node;
  std::string engine = "analytic";  ///< Engine timing workload jobs: "analytic" or "native".
  std::string calibration;          ///< Profile path for the engine ("" = default).
  bool failures = true;             ///< Node failures from the reliability profile.
  std::string reliability_profile = "llama3";  ///< topologies/catalog/reliability.json id.
  double repair_s = 4 * 3600.0;                ///< A failed node's time out of service (estimate).
  double restart_s = -1;                       ///< Per restart; < 0: the profile's restart time.
  double checkpoint_write_s = 60;    ///< Per checkpoint (estimate when the trace has no workload).
  double checkpoint_interval_s = 0;  ///< 0: Young's sqrt(2 C M) with M the job's own MTBF.
  bool interference = true;
  bool fair_share_by_team = false;  ///< fair-share: by team (Slurm account) instead of user.
  double fair_share_half_life_s = 7 * 86400.0;  ///< Slurm PriorityDecayHalfLife default (7 days).
  /// Elastic jobs (JobSpec min_gpus/max_gpus) grow and shrink; off: every job runs on `gpus`.
  bool elastic = false;
  int backfill_depth = 500;   ///< Jobs scanned per pass (Slurm bf_max_job_test default 500).
  int timeline_points = 200;  ///< Utilisation samples over the makespan.
  std::uint64_t seed = 1;
  ProgressFn progress;  ///< (jobs finished, jobs) as they finish; empty = silent.
};

/// What happened to one job.
struct JobOutcome {
  std::string id;
  int user = 0, team = 0, gpus = 0;
  double submit_s = 0, start_s = -1, end_s = -1;  ///< First start; -1 = never.
  double wait_s = 0;                              ///< First start - submit.
  double jct_s = 0;                               ///< End - submit.
  double solo_s = 0;    ///< Run time alone on the cluster (placement of its last run).
  double slowdown = 1;  ///< Mean iteration-time stretch from link sharing while it ran.
  int restarts = 0, preemptions = 0;
  int nodes = 0, domains = 0, groups = 0;    ///< Spanned by its last placement.
  int min_gpus_used = 0, max_gpus_used = 0;  ///< Elastic jobs: range of GPUs worked on (0: rigid).
  int resizes = 0;                           ///< Elastic grow/shrink steps.
};

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;
};

struct UserSummary {
  std::string name;
  int jobs = 0;
  double gpu_hours = 0;
  Percentiles wait_s, jct_s;
};

/// GPU-hours no job turned into work, by cause (allocated or not).
struct IdleHours {
  double fragmentation =
      0;  ///< Free GPUs while the queue head would fit by count but not by shape.
  double head_blocking = 0;  ///< Free GPUs while the queue head waits for more GPUs to free up.
  double no_demand = 0;      ///< Free GPUs with an empty queue.
  double failures = 0;  ///< Down nodes, lost work since the last checkpoint, restarts, checkpoints.
  double preemption = 0;    ///< Work lost by preempted jobs.
  double interference = 0;  ///< Allocated GPUs slowed by link sharing.
  double total() const {
    return fragmentation + head_blocking + no_demand + failures + preemption + interference;
  }
};

struct UtilPoint {
  double t_s = 0;
  double allocated = 0, busy = 0;  ///< Fractions of the cluster's GPUs over the bucket.
};

struct ClusterResult {
  std::string cluster, scheduler, placement, alloc, engine, trace;
  int gpus = 0, nodes = 0, jobs = 0, completed = 0;
  double makespan_s = 0;
  double allocated_utilization = 0, busy_utilization = 0;  ///< Over the makespan.
  double goodput = 0;  ///< Useful GPU-hours / allocated GPU-hours.
  double gpu_hours = 0, allocated_gpu_hours = 0, useful_gpu_hours = 0;
  IdleHours idle;
  Percentiles wait_s, jct_s, slowdown;
  std::vector<UserSummary> users;
  std::vector<UtilPoint> timeline;
  std::vector<JobOutcome> outcomes;
  int failures = 0, restarts = 0, preemptions = 0;
  int resizes = 0;      ///< Elastic grow/shrink steps (all jobs).
  double energy_J = 0;  ///< Facility energy (IT x PUE) over the makespan.
  double cost_usd = 0;  ///< Amortised capex + electricity over the makespan.
  double energy_cost_usd = 0;
  int runtime_cache_entries = 0;      ///< Distinct (workload, placement shape) simulations.
  std::vector<std::string> defaults;  ///< Every default that applied, as "name = value (why)".
  // Wall time (not in the JSON: stdout stays byte-identical).
  double wall_total_s = 0, wall_runtime_s = 0;  ///< Whole run; of which job-runtime simulation.
};

/// Runs the trace on the cluster. Throws InputError for a job larger than the cluster (naming
/// it and its source line), a workload that does not fit, or bad options.
ClusterResult simulate_cluster(const Cluster& cluster, const JobList& jobs,
                               const ClusterSimOptions& o);

/// The `--json` document (schemas/cluster_result.schema.json); `with_jobs` adds every outcome.
nlohmann::json to_json(const ClusterResult& r, bool with_jobs = true);
/// One row per job: id,user,gpus,submit_s,start_s,end_s,wait_s,jct_s,solo_s,slowdown,restarts,...
std::string jobs_csv(const ClusterResult& r);
/// The human table.
std::string cluster_text(const ClusterResult& r);
/// Side-by-side table of several runs of the same trace: compare_header of the first, then one
/// compare_row per run.
std::string compare_text(const std::vector<ClusterResult>& rs);
std::string compare_header(const ClusterResult& r);
std::string compare_row(const ClusterResult& r);

/// p50/p90/p99 (nearest rank) and mean of `v` (sorted in place).
Percentiles percentiles(std::vector<double>& v);

}  // namespace tutti
