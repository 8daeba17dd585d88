#include "tutti/exec/session.hpp"

#include <malloc.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
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
    std::string msg = "this run needs " + std::to_string(needed) +
                      " MPI ranks (one per GPU of the layout) but the world has " +
                      std::to_string(mpi_world);
    if (mpi_world == 1 && launcher.world == 0)
      msg +=
          ": no MPI launcher was found (no OMPI_COMM_WORLD_SIZE, PMI_SIZE or "
          "SLURM_STEP_NUM_TASKS); start it as "
          "`mpirun -np " +
          std::to_string(needed) + " " + command_hint + "` or `srun -n " + std::to_string(needed) +
          " " + command_hint + "`";
    else
      msg += "; start it with -np " + std::to_string(needed) + " or choose a layout with " +
             std::to_string(mpi_world) + " GPUs (--parallel)";
    return msg;
  }
  return "";
}

// ---- Watchdog ----

namespace {
constexpr int kTagAsk = 1, kTagState = 2;
constexpr int kWhereLen = 96;
// One rank's state as sent between watchdog threads (plain bytes on the private communicator).
struct WireState {
  long long kicks = 0;
  long long idle_ns = 0;
  char where[kWhereLen] = {};
};
}  // namespace

struct Watchdog::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
};

Watchdog::Watchdog(const Session& session, double timeout_s)
    : timeout_s_(timeout_s),
      rank_(session.rank()),
      size_(session.size()),
      session_(&session),
      impl_(std::make_unique<Impl>()) {
  last_ns_ = now_ns();
  if (timeout_s_ <= 0) return;
  hosts_ = session.hosts();  // collective: known up front, so a dead rank's host can be named
  MPI_Comm_dup(MPI_COMM_WORLD, &impl_->comm);
  session.watch(this);  // the session's collectives now record where each rank waits
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  if (session_) session_->watch(nullptr);
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  // The private communicator is not freed: MPI_Comm_free is collective in effect on some MPIs, and
  // a rank leaving by an exception must not wait for its peers here. MPI_Finalize releases it.
}

void Watchdog::kick(const char* where) {
  where_.store(where, std::memory_order_relaxed);
  kicks_.fetch_add(1, std::memory_order_relaxed);
  last_ns_.store(now_ns(), std::memory_order_relaxed);
}

std::string Watchdog::describe_fault(const std::vector<RankState>& states,
                                     const std::vector<std::string>& hosts, int reporter,
                                     double timeout_s) {
  auto host = [&](int r) {
    return r >= 0 && static_cast<std::size_t>(r) < hosts.size() ? hosts[static_cast<std::size_t>(r)]
                                                                : std::string("?");
  };
  auto line = [&](const RankState& st) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "rank %d (host %s): no progress for %.1f s, last op \"%s\" (#%lld)", st.rank,
                  host(st.rank).c_str(), st.idle_s, st.where.c_str(), st.kicks);
    return std::string(buf);
  };
  std::vector<const RankState*> dead, answered;
  for (const auto& st : states) (st.answered ? answered : dead).push_back(&st);
  std::string culprit;
  if (!dead.empty()) {
    for (const auto* st : dead)
      culprit += (culprit.empty() ? "" : "; ") + std::string("rank ") + std::to_string(st->rank) +
                 " (host " + host(st->rank) + ") did not answer: it died or its process is stuck";
  } else {
    long long lo = answered.empty() ? 0 : answered.front()->kicks, hi = lo;
    for (const auto* st : answered) {
      lo = std::min(lo, st->kicks);
      hi = std::max(hi, st->kicks);
    }
    std::vector<const RankState*> behind;
    for (const auto* st : answered)
      if (st->kicks == lo) behind.push_back(st);
    if (lo < hi) {
      for (const auto* st : behind) culprit += (culprit.empty() ? "" : "; ") + line(*st);
      culprit +=
          behind.size() == 1 ? " (the rank behind the others)" : " (the ranks behind the others)";
    } else {
      culprit = "every rank stalled at the same point; " + line(*answered.front());
      for (std::size_t i = 1; i < answered.size(); ++i) culprit += "; " + line(*answered[i]);
    }
  }
  char head[160];
  std::snprintf(head, sizeof head,
                "watchdog on rank %d: no progress within the timeout (%.1f s); stuck: ", reporter,
                timeout_s);
  return std::string(head) + culprit + "; aborting the whole job (exit " +
         std::to_string(kExitRankFault) + ")";
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
  MPI_Comm comm = impl_->comm;
  auto my_state = [&] {
    WireState w;
    w.kicks = kicks_.load(std::memory_order_relaxed);
    w.idle_ns = now_ns() - last_ns_.load(std::memory_order_relaxed);
    std::snprintf(w.where, sizeof w.where, "%s", where_.load());
    return w;
  };
  // Answers every pending question from a peer's watchdog (this thread stays responsive even
  // when the main thread is blocked in an MPI call or hung).
  auto answer = [&] {
    for (;;) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagAsk, comm, &flag, &st);
      if (!flag) return;
      char dummy = 0;
      MPI_Recv(&dummy, 1, MPI_CHAR, st.MPI_SOURCE, kTagAsk, comm, MPI_STATUS_IGNORE);
      WireState w = my_state();
      MPI_Send(&w, sizeof w, MPI_BYTE, st.MPI_SOURCE, kTagState, comm);
    }
  };
  const long long limit = static_cast<long long>(timeout_s_ * 1e9);
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (size_ > 1) answer();
    long long idle = now_ns() - last_ns_.load(std::memory_order_relaxed);
    if (idle <= limit || stop_) continue;
    // Fired: ask every peer for its state, answering peers that ask us meanwhile.
    std::vector<RankState> states(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) states[static_cast<std::size_t>(r)].rank = r;
    WireState mine = my_state();
    RankState& me = states[static_cast<std::size_t>(rank_)];
    me.answered = true;
    me.kicks = mine.kicks;
    me.idle_s = mine.idle_ns * 1e-9;
    me.where = mine.where;
    std::vector<MPI_Request> asks;
    char ask = 1;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      asks.emplace_back();
      MPI_Isend(&ask, 1, MPI_CHAR, r, kTagAsk, comm, &asks.back());
    }
    int pending = size_ - 1;
    const long long grace_end = now_ns() + 2'000'000'000LL;  // 2 s for peers to answer
    while (pending > 0 && now_ns() < grace_end) {
      answer();
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagState, comm, &flag, &st);
      if (!flag) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      WireState w;
      MPI_Recv(&w, sizeof w, MPI_BYTE, st.MPI_SOURCE, kTagState, comm, MPI_STATUS_IGNORE);
      RankState& rs = states[static_cast<std::size_t>(st.MPI_SOURCE)];
      if (!rs.answered) --pending;
      rs.answered = true;
      rs.kicks = w.kicks;
      rs.idle_s = w.idle_ns * 1e-9;
      w.where[kWhereLen - 1] = '\0';
      rs.where = w.where;
    }
    std::string msg = describe_fault(states, hosts_, rank_, timeout_s_);
    std::fprintf(stderr, "tutti: error: %s\n", msg.c_str());
    std::fflush(stderr);
    // MPI_Abort normally ends every rank; if the runtime itself is wedged, leave anyway.
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::seconds(10));
      std::_Exit(kExitRankFault);
    }).detach();
    MPI_Abort(MPI_COMM_WORLD, kExitRankFault);
    std::_Exit(kExitRankFault);
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
  if (std::uncaught_exceptions() > 0 && size_ > 1)
    return;  // peers may wait: main reports, mpirun ends the job
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void Session::waiting(const char* where) const {
  if (watchdog_) watchdog_->kick(where);
}

void Session::require_world(int needed, const std::string& command_hint) const {
  std::string msg = check_world(launcher_from_env(), size_, needed, command_hint);
  if (!msg.empty()) throw InputError(msg);
}

std::vector<std::string> Session::hosts() const {
  waiting("waiting in a host-name exchange (all ranks)");
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(size_) * (MPI_MAX_PROCESSOR_NAME + 1));
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME + 1,
                MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r)
    out.emplace_back(all.data() + static_cast<std::size_t>(r) * (MPI_MAX_PROCESSOR_NAME + 1));
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

void Session::barrier() const {
  waiting("waiting in a barrier (all ranks)");
  MPI_Barrier(MPI_COMM_WORLD);
}

double Session::max(double v) const {
  waiting("waiting in a result reduction (all ranks)");
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}
double Session::min(double v) const {
  waiting("waiting in a result reduction (all ranks)");
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return out;
}
double Session::sum(double v) const {
  waiting("waiting in a result reduction (all ranks)");
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return out;
}
std::vector<double> Session::allgather(double v) const {
  waiting("waiting in a result gather (all ranks)");
  std::vector<double> out(static_cast<std::size_t>(size_));
  MPI_Allgather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
  return out;
}

std::vector<std::string> Session::gather_strings(const std::string& s) const {
  waiting("waiting in a result gather (all ranks)");
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
  MPI_Gatherv(s.data(), len, MPI_CHAR, buf.data(), lens.data(), displs.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank_ == 0)
    for (int r = 0; r < size_; ++r)
      out.emplace_back(buf.data() + displs[r], static_cast<std::size_t>(lens[r]));
  return out;
}

void Session::abort(int code, const std::string& message) const {
  std::fprintf(stderr, "tutti: error: rank %d: %s\n", rank_, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace tutti::exec
