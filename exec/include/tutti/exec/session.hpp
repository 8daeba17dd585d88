#pragma once
// One MPI job as the execution backend sees it: initialisation with launcher checks, the world
// size and rank, host names, and a watchdog that turns a dead or hung peer into a clear error.
// No MPI types leak out of this header (mpi.h stays in exec/src).
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tutti::exec {

/// What the process launcher announced through the environment (before MPI is asked).
struct LauncherInfo {
  int world = 0;         ///< Ranks the launcher started (0 = no launcher variable found).
  std::string variable;  ///< The variable read: "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                         ///< "SLURM_STEP_NUM_TASKS", or "" when none.
};

/// Reads OMPI_COMM_WORLD_SIZE (mpirun of Open MPI), PMI_SIZE (MPICH/Intel MPI hydra, srun with
/// PMI2), SLURM_STEP_NUM_TASKS (inside an `srun` step, not merely an `sbatch` script): the first
/// one set wins, in that order.
LauncherInfo launcher_from_env();

/// Checks the MPI world size against the launcher and against what the run needs.
/// `mpi_world`: MPI_Comm_size(MPI_COMM_WORLD). `needed`: ranks the layout needs (0 = any).
/// `command_hint`: the subcommand line to suggest ("tutti exec replay ..."). Returns "" when all
/// agree, else the message for the user (never throws; the caller turns it into an InputError).
std::string check_world(const LauncherInfo& launcher, int mpi_world, int needed,
                        const std::string& command_hint);

class Session;

/// The exit code of a job that the watchdog ended because a rank hung or died (distinct from 2,
/// bad input, and 70, a bug in tutti). Documented in `tutti exec --help` and the README.
inline constexpr int kExitRankFault = 3;

/// The accepted `--timeout` range: below one second the watchdog would fire on ordinary MPI
/// start-up jitter; beyond a week it is no watchdog. "off" disables it.
inline constexpr double kMinTimeout_s = 1.0;
inline constexpr double kMaxTimeout_s = 7.0 * 86400.0;

/// A progress watchdog: if kick() is not called for `timeout_s`, it asks every peer's watchdog
/// for its state (last op, ops done, idle time) over a private communicator, names the ranks
/// that are stuck (`rank R (host H): no progress for T s, last op "OP" (#N)`) or dead (no answer)
/// on stderr, and aborts the whole MPI job with kExitRankFault. timeout_s <= 0 disables it.
/// Constructing it is collective (every rank of the session, from the main thread).
class Watchdog {
 public:
  Watchdog(const Session& session, double timeout_s);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  /// Records progress; `where` must be a string literal (kept by pointer).
  void kick(const char* where);
  double timeout_s() const { return timeout_s_; }

  /// One rank's answer to the watchdog's question (for the report).
  struct RankState {
    int rank = 0;
    bool answered = false;  ///< false: the rank did not answer within the grace period.
    long long kicks = 0;    ///< Progress marks recorded so far.
    double idle_s = 0;      ///< Seconds since its last progress mark.
    std::string where;      ///< Its last op.
  };
  /// The error text for `states` (every rank, indexed by rank) and `hosts`: names the dead ranks
  /// (no answer), else the ranks that made the least progress, with host and last op.
  static std::string describe_fault(const std::vector<RankState>& states,
                                    const std::vector<std::string>& hosts, int reporter,
                                    double timeout_s);

 private:
  struct Impl;
  void loop();
  double timeout_s_;
  int rank_, size_;
  const Session* session_ = nullptr;
  std::vector<std::string> hosts_;
  std::unique_ptr<Impl> impl_;
  std::atomic<long long> last_ns_{0};
  std::atomic<long long> kicks_{0};
  std::atomic<const char*> where_{"start"};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// MPI for the lifetime of the object (MPI_Init_thread with MPI_THREAD_MULTIPLE, so that the
/// watchdog may call MPI_Abort). Also sets glibc's malloc so that freed blocks are never
/// returned to the kernel: MPI's per-call temporaries would otherwise page-fault on every call
/// (docs/notes/exec-backend.md section 1.4).
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Throws InputError with check_world's message when the world does not fit `needed` ranks.
  void require_world(int needed, const std::string& command_hint) const;
  /// Host name of every rank, indexed by rank (collective).
  std::vector<std::string> hosts() const;
  /// MPI library version string (MPI_Get_library_version), first line.
  static std::string mpi_library_version();

  // Small collectives over MPI_COMM_WORLD for results (all ranks must call).
  void barrier() const;
  double max(double v) const;
  double min(double v) const;
  double sum(double v) const;
  /// Gathers one value per rank on every rank.
  std::vector<double> allgather(double v) const;
  /// Gathers variable-length strings on rank 0 (others get an empty vector).
  std::vector<std::string> gather_strings(const std::string& s) const;
  /// Aborts the job (all ranks) with `code` after printing `message` to stderr.
  [[noreturn]] void abort(int code, const std::string& message) const;
  /// Every collective above records on `wd` that this rank is waiting in it (kick), so that a
  /// watchdog report tells the ranks that reached a collective from the one that never did.
  /// Set by the Watchdog itself; nullptr detaches.
  void watch(Watchdog* wd) const { watchdog_ = wd; }

 private:
  void waiting(const char* where) const;
  mutable Watchdog* watchdog_ = nullptr;
  int rank_ = 0, size_ = 1;
  bool we_initialized_ = false;
};

}  // namespace tutti::exec
