// The exec watchdog's fault report (which rank, host, last op) and the --timeout range.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../support/run.hpp"
#include "tutti/exec/session.hpp"

using tutti::exec::Watchdog;
using tutti::testing::run_tutti;

namespace {
Watchdog::RankState state(int rank, bool answered, long long kicks, double idle_s,
                          const char* where) {
  Watchdog::RankState s;
  s.rank = rank;
  s.answered = answered;
  s.kicks = kicks;
  s.idle_s = idle_s;
  s.where = where;
  return s;
}
bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("watchdog: a rank that does not answer is named dead, with its host") {
  std::vector<std::string> hosts = {"n0", "n1", "n2"};
  std::vector<Watchdog::RankState> st = {state(0, true, 7, 3.2, "collective bench"),
                                         state(1, true, 7, 3.1, "collective bench"),
                                         state(2, false, 0, 0, "")};
  std::string m = Watchdog::describe_fault(st, hosts, 0, 3.0);
  CHECK(has(m, "rank 2 (host n2) did not answer: it died or its process is stuck"));
  CHECK(!has(m, "rank 1 (host n1)"));
  CHECK(has(m, "exit 3"));
}

TEST_CASE("watchdog: the rank behind the others is named with host and last op") {
  std::vector<std::string> hosts = {"a", "b", "c"};
  std::vector<Watchdog::RankState> st = {state(0, true, 12, 3.0, "collective bench"),
                                         state(1, true, 1, 3.4, "start"),
                                         state(2, true, 12, 3.0, "collective bench")};
  std::string m = Watchdog::describe_fault(st, hosts, 2, 3.0);
  CHECK(has(m, "watchdog on rank 2: no progress within the timeout (3.0 s)"));
  CHECK(has(m,
            "rank 1 (host b): no progress for 3.4 s, last op \"start\" (#1) (the rank behind the "
            "others)"));
  CHECK(!has(m, "rank 0 (host a)"));
}

TEST_CASE("watchdog: when every rank stalled at the same point, every rank is listed") {
  std::vector<Watchdog::RankState> st = {state(0, true, 5, 3.0, "replay"),
                                         state(1, true, 5, 3.0, "replay")};
  std::string m = Watchdog::describe_fault(st, {"h0", "h1"}, 0, 3.0);
  CHECK(has(m, "every rank stalled at the same point"));
  CHECK(has(m, "rank 0 (host h0)"));
  CHECK(has(m, "rank 1 (host h1)"));
}

TEST_CASE("exec --timeout: nonsensical durations are refused with exit 2 before MPI starts") {
  for (const char* t : {"1ns", "0", "-5s", "0s", "999999d", "1e308s", "abc", "0.5s"}) {
    auto r = run_tutti({"exec", "bench", "-b", "8", "-e", "8", "--timeout", t});
    CHECK_MESSAGE(r.rc == 2, t, " ", r.err);
    CHECK_MESSAGE(has(r.err, "--timeout"), t, " ", r.err);
    CHECK_MESSAGE(has(r.err, "from 1s to 7d"), t, " ", r.err);
  }
  auto r = run_tutti({"exec", "replay", "--workload", "models/tiny-gpt.json", "--cluster",
                      "topologies/cpu-local.json", "--timeout", "1ns"});
  CHECK(r.rc == 2);
  CHECK(has(r.err, "--timeout"));
}

TEST_CASE("exec --help states the watchdog's exit code") {
  auto r = run_tutti({"exec", "--help"});
  CHECK(r.rc == 0);
  CHECK(has(r.out, "3 the watchdog ended the job because a rank hung or"));
}
