#pragma once
// Job traces for `tutti cluster`: what a shared cluster is asked to run.
//
// Four sources, one type (JobList):
//   read_swf      Standard Workload Format (Parallel Workloads Archive, v2.2): 18 whitespace-
//                 separated fields per line, `;` header comments. Used: 1 job number, 2 submit
//                 time (s), 4 run time (s), 5 allocated processors (else 8 requested), 9 requested
//                 time (s, the walltime estimate), 11 status (0 failed, 1 completed, 5 cancelled),
//                 12 user id, 13 group id. `processors_per_gpu` maps processors onto GPUs.
//   read_sacct    Slurm `sacct --parsable2` dumps: `|`-separated with a header line naming the
//                 fields; needs JobID, Submit, Start, End (ISO 8601 local times, or Unknown),
//                 a GPU count from AllocTRES or ReqTRES (`gres/gpu=8`) or NNodes x
//                 --gpus-per-node; optional User, Account (team), Timelimit ([D-]HH:MM:SS,
//                 MM:SS, UNLIMITED), State. Job steps (JobID with a '.') are skipped.
//   read_job_json strict tutti job list (schemas/cluster_jobs.schema.json).
//   synthetic_jobs seeded generator: Poisson arrivals, log-uniform power-of-two sizes,
//                 lognormal durations, users drawn Zipf(1).
// Every reader throws InputError naming the file, the line (or key path), what it found and
// what it expected. Jobs come back sorted by submit time (ties by input order), submit times
// shifted so the first is 0.
#include <cstdint>
#include <string>
#include <vector>

namespace tutti {

/// The largest job any trace reader accepts, in GPUs (2^24): one limit for SWF, sacct, the JSON
/// job list and the synthetic generator, checked before a size reaches an int.
inline constexpr int kMaxJobGpus = 1 << 24;

/// A job's runtime source: a workload + layout trained for a number of iterations (timed by
/// tutti's own simulator for the placement it gets), or a fixed solo duration from a trace.
struct JobWork {
  int workload = -1;      ///< Index into JobList::workloads; -1 = fixed duration.
  double iterations = 0;  ///< With a workload: iterations to run (from iterations or tokens).
  double tokens = 0;      ///< With a workload: tokens to train (0 = use iterations).
  double duration_s = 0;  ///< Fixed duration: solo run time, seconds.
  /// Fixed duration only: share of the run the job's fabric traffic is exposed (0..1); sets how
  /// much link sharing slows it. 0 = no interference (trace jobs whose traffic is unknown).
  double comm_fraction = 0;
};

struct JobSpec {
  std::string id;         ///< As in the trace (SWF job number, Slurm JobID, JSON id).
  int user = 0;           ///< Index into JobList::users.
  int team = 0;           ///< Index into JobList::teams.
  double submit_s = 0;    ///< Since the first submission.
  int gpus = 1;           ///< GPUs requested (>= 1).
  double walltime_s = 0;  ///< Requested time limit (the backfill estimate); 0 = unknown.
  int priority = 0;       ///< Higher runs first under the `gang` scheduler (and may preempt).
  /// Elastic range (fixed-duration jobs; 0 = rigid): with ClusterSimOptions::elastic the job
  /// runs on any GPU count in [min_gpus, max_gpus], growing into free GPUs and shrinking for
  /// queued jobs; `gpus` is the count its `duration` is for. min_gpus <= gpus <= max_gpus.
  int min_gpus = 0, max_gpus = 0;
  bool elastic() const { return max_gpus > 0 && (min_gpus < gpus || max_gpus > gpus); }
  JobWork work;
  int line = 0;  ///< Source line (1-based; JSON: 0).
};

/// A workload a job list names: a workload file and a layout (`--parallel` syntax).
struct JobWorkload {
  std::string path, parallel;
};

struct JobList {
  std::string file;  ///< Source name for messages.
  std::vector<JobSpec> jobs;
  std::vector<std::string> users, teams;
  std::vector<JobWorkload> workloads;
  int skipped = 0;  ///< Trace records left out (zero processors, cancelled before start, steps).
};

/// Interns `name` into `names`, returning its index.
int intern(std::vector<std::string>& names, const std::string& name);

/// SWF reader. `processors_per_gpu`: SWF processors per GPU of the simulated cluster (>= 1).
/// Records with no processors or a run time <= 0 are skipped (counted in `skipped`).
JobList read_swf(const std::string& text, const std::string& file, int processors_per_gpu = 1);
/// Slurm sacct --parsable2 reader. `gpus_per_node` turns NNodes into GPUs when no TRES gives a
/// GPU count.
JobList read_sacct(const std::string& text, const std::string& file, int gpus_per_node = 8);
/// Strict tutti JSON job list (schemas/cluster_jobs.schema.json). Workload paths are taken
/// relative to the list's own folder.
JobList read_job_json(const std::string& text, const std::string& file);
/// Reads `path`, picking the reader by extension (.swf, .json, else sacct: .txt/.psv/.sacct).
JobList load_jobs(const std::string& path, int processors_per_gpu = 1, int gpus_per_node = 8);

/// Synthetic trace parameters (`--synthetic KEY=VALUE,...`; defaults shown in the output).
struct SyntheticSpec {
  int jobs = 1000;
  double span_s = 30 * 86400.0;     ///< Arrivals spread over this window (Poisson rate jobs/span).
  int min_gpus = 1, max_gpus = 64;  ///< Sizes: powers of two, log-uniform in [min, max].
  double median_s = 2 * 3600.0;     ///< Lognormal duration: median and sigma (of ln).
  double sigma = 1.0;
  double max_duration_s = 14 * 86400.0;  ///< Durations are capped here.
  int users = 8;
  double comm_fraction = 0.2;    ///< Exposed fabric share of multi-node jobs.
  double walltime_factor = 1.5;  ///< Requested limit = duration x factor (users over-ask).
};
/// Parses `KEY=VALUE,...` (keys: jobs, span, min_gpus, max_gpus, median, sigma, max_duration,
/// users, comm, walltime_factor; times with units: "30d", "2h"). InputError (file "--synthetic").
SyntheticSpec parse_synthetic(const std::string& text);
/// Deterministic in `seed` on every platform (own PRNG, no <random> distributions).
JobList synthetic_jobs(const SyntheticSpec& spec, std::uint64_t seed);

}  // namespace tutti
