// The progress bar (core/progress.hpp): its text, and silence off a terminal.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "tutti/core/progress.hpp"

using namespace tutti;

TEST_CASE("progress: the bar's text shows the fraction, counts, rate and ETA") {
  CHECK(format_progress("screening", 300, 1000, 2.0) ==
        "  screening [#########.....................]  30%  300/1000  150/s  ETA 0:05");
  CHECK(format_progress("x", 0, 10, 1.0).find("ETA -:--") != std::string::npos);  // no rate yet
  CHECK(format_progress("x", 10, 10, 1.0).find("100%") != std::string::npos);
  CHECK(format_progress("x", 10, 10, 1.0).find("ETA 0:00") != std::string::npos);
  CHECK(format_progress("x", 1, 7201, 1.0).find("ETA 2:00:00") != std::string::npos);
  CHECK(format_progress("x", 20, 10, 1.0).find("100%") != std::string::npos);  // clamped
}

TEST_CASE("progress: off a terminal (a file, a pipe) or with -q it writes nothing") {
  for (bool enabled : {true, false}) {
    std::FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    {
      ProgressBar bar("work", enabled, f);
      CHECK_FALSE(bar.active());
      std::this_thread::sleep_for(std::chrono::milliseconds(600));  // past the 0.5 s start delay
      auto cb = bar.callback();
      for (int i = 0; i <= 10; ++i) cb(static_cast<std::uint64_t>(i), 10);
      CHECK_FALSE(bar.shown());
      bar.finish();
    }
    CHECK(std::ftell(f) == 0);
    std::fclose(f);
  }
}
