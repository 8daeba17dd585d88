// The progress bar (core/progress.hpp): its text, silence off a terminal, drawing on one.
#include "tutti/core/progress.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

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

TEST_CASE(
    "progress: on a terminal (a pseudo-terminal here) the bar is drawn, then cleared when the work "
    "is done") {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(grantpt(master) == 0);
  REQUIRE(unlockpt(master) == 0);
  const int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  REQUIRE(slave >= 0);
  std::FILE* f = fdopen(slave, "w");
  REQUIRE(f != nullptr);
  std::string text;
  {
    ProgressBar bar("work", true, f);
    CHECK(bar.active());
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    bar.update(3, 10);
    CHECK(bar.shown());
    bar.update(10, 10);  // done: the line is cleared without a call to finish()
    CHECK_FALSE(bar.shown());
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    char buf[4096];
    for (ssize_t n; (n = read(master, buf, sizeof buf)) > 0;)
      text.append(buf, static_cast<std::size_t>(n));
  }
  std::fclose(f);
  close(master);
  CHECK(text.find("work [") != std::string::npos);
  CHECK(text.find("30%") != std::string::npos);
  CHECK(text.find("ETA") != std::string::npos);
  REQUIRE_FALSE(text.empty());
  CHECK(text.back() == '\r');  // ends with the clearing: blanks, then back to the line start
  CHECK(text.find("100%") == std::string::npos);
}
