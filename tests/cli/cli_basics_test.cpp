#include <doctest/doctest.h>

#include "../support/run.hpp"

using namespace tutti::testing;

TEST_CASE("cli: --help lists every subcommand") {
  auto r = run_tutti({"--help"});
  CHECK(r.rc == 0);
  for (const char* s : {"simulate", "plan", "report", "topo", "workload", "exec", "calibrate",
                        "validate", "catalog"})
    CHECK_MESSAGE(r.out.find(s) != std::string::npos, s);
}

TEST_CASE("cli: --version and usage errors") {
  auto v = run_tutti({"--version"});
  CHECK(v.rc == 0);
  CHECK(v.out.find("tutti ") == 0);
  CHECK(run_tutti({}).rc == 2);
  CHECK(run_tutti({"no-such-command"}).rc == 2);
}
