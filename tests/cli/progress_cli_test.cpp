// Progress bars (core/progress.hpp) stay off when stderr is not a terminal: the golden tests'
// pipes, CI logs and `2> file` see no carriage returns (the bar's drawing is tested on a
// pseudo-terminal in tests/core/progress_test.cpp).
#include <doctest/doctest.h>

#include <string>

#include "../support/run.hpp"

using tutti::testing::run_tutti;

TEST_CASE("cluster simulate and simulate draw no progress bar off a terminal") {
  const auto c =
      run_tutti({"cluster", "simulate", "--cluster", "topologies/dgx-h100-superpod-1su.json",
                 "--jobs", "tests/data/cluster/jobs-small.json"});
  REQUIRE(c.rc == 0);
  CHECK(c.err.find("simulated") != std::string::npos);  // its notes do reach stderr
  CHECK(c.err.find('\r') == std::string::npos);
  const auto s = run_tutti({"simulate", "-w", "models/tiny-gpt.json", "-c",
                            "topologies/dgx-h100-single.json", "--facility", "power_cap=300W"});
  REQUIRE(s.rc == 0);
  CHECK(s.err.find('\r') == std::string::npos);
  CHECK(s.err.find("cooling fixed point") == std::string::npos);
}
