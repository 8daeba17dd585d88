#include "tutti/exec/session.hpp"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "tutti/core/error.hpp"

namespace tutti::exec {

namespace {
long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

LauncherInfo launcher_from_env() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    const char* v = std::getenv(var);
    if (v && *v) {
      LauncherInfo info;
      info.world = std::atoi(v);
      info.variable = var;
      return info;
    }
  }
  return {};
}

std::string check_world(const LauncherInfo& launcher, int mpi_world, int needed,
                        const std::string& command_hint) {
  if (launcher.world > 1 && mpi_world == 1)
    return "the launcher started " + std::to_string(launcher.world) + " processes (" +
           launcher.variable + "=" + std::to_string(launcher.world) +
           ") but MPI sees a world of 1: every process is rank 0 of 1. The tutti binary's MPI "
           "library does not match the launcher (e.g. an MPICH mpiexec running an Open MPI "
           "build, or srun without --mpi=pmix/pmi2); launch it with the mpirun of the MPI that "
           "tutti was built with";
  if (needed > 0 && mpi_world != needed) {
    std::string msg = "this run needs " + std::to_string(needed) + " MPI ranks (one per GPU of the layout) but the world has " +
                      std::to_string(mpi_world);
    if (mpi_world == 1 && launcher.world == 0)
      msg += ": no MPI launcher was found (no OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_STEP_NUM_TASKS); start it as "
             "`mpirun -np " + std::to_string(needed) + " " + command_hint + "` or `srun -n " +
             std::to_string(needed) + " " + command_hint + "`";
    else
      msg += "; start it with -np " + std::to_string(needed) + " or choose a layout with " +
             std::to_string(mpi_world) + " GPUs (--parallel)";
    return msg;
  }
  return "";
}

// ---- Watchdog ----

Watchdog::Watchdog(double timeout_s, int rank, int abort_code)
    : timeout_s_(timeout_s), rank_(rank), abort_code_(abort_code) {
  last_ns_ = now_ns();
  if (timeout_s_ > 0) thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void Watchdog::kick(const char* where) {
  where_.store(where, std::memory_order_relaxed);
  last_ns_.store(now_ns(), std::memory_order_relaxed);
}

void Watchdog::loop() {
  // Under a real-time policy (ranks started with `chrt -f`), a busy-polling main thread of the
  // same priority would never let this thread run: take the highest priority of the policy.
  int policy = sched_getscheduler(0);
  if (policy == SCHED_FIFO || policy == SCHED_RR) {
    sched_param sp{};
    sp.sched_priority = sched_get_priority_max(policy);
    pthread_setschedparam(pthread_self(), policy, &sp);
  }
  const long long limit = static_cast<long long>(timeout_s_ * 1e9);
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    long long idle = now_ns() - last_ns_.load(std::memory_order_relaxed);
    if (idle > limit && !stop_) {
      std::fprintf(stderr,
                   "tutti: error: rank %d: no progress for %.1f s (timeout %.1f s) in %s: a peer "
                   "rank died or hangs; aborting the whole job\n",
                   rank_, idle * 1e-9, timeout_s_, where_.load());
      std::fflush(stderr);
      // MPI_Abort normally ends every rank; if the runtime itself is wedged, leave anyway.
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(10));
        std::_Exit(70);
      }).detach();
      MPI_Abort(MPI_COMM_WORLD, abort_code_);
      std::_Exit(abort_code_);
    }
  }
}

// ---- Session ----

Session::Session() {
  // Keep freed memory in the process (no munmap/trim): page faults would pollute timings.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, -1);
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    we_initialized_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Session::~Session() {
  if (!we_initialized_) return;
  if (std::uncaught_exceptions() > 0 && size_ > 1) return;  // peers may wait: main reports, mpirun ends the job
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void Session::require_world(int needed, const std::string& command_hint) const {
  std::string msg = check_world(launcher_from_env(), size_, needed, command_hint);
  if (!msg.empty()) throw InputError(msg);
}

std::vector<std::string> Session::hosts() const {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(size_) * (MPI_MAX_PROCESSOR_NAME + 1));
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME + 1,
                MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r) out.emplace_back(all.data() + static_cast<std::size_t>(r) * (MPI_MAX_PROCESSOR_NAME + 1));
  return out;
}

std::string Session::mpi_library_version() {
  char v[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v);
  auto nl = s.find_first_of("\r\n,");
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

void Session::barrier() const { MPI_Barrier(MPI_COMM_WORLD); }

double Session::max(double v) const {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}
double Session::min(double v) const {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return out;
}
double Session::sum(double v) const {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return out;
}
std::vector<double> Session::allgather(double v) const {
  std::vector<double> out(static_cast<std::size_t>(size_));
  MPI_Allgather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
  return out;
}

std::vector<std::string> Session::gather_strings(const std::string& s) const {
  int len = static_cast<int>(s.size());
  std::vector<int> lens(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  if (rank_ == 0)
    for (int r = 0; r < size_; ++r) {
      displs[r] = total;
      total += lens[r];
    }
  std::vector<char> buf(static_cast<std::size_t>(total) + 1);
  MPI_Gatherv(s.data(), len, MPI_CHAR, buf.data(), lens.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank_ == 0)
    for (int r = 0; r < size_; ++r) out.emplace_back(buf.data() + displs[r], static_cast<std::size_t>(lens[r]));
  return out;
}

void Session::abort(int code, const std::string& message) const {
  std::fprintf(stderr, "tutti: error: rank %d: %s\n", rank_, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace tutti::exec
