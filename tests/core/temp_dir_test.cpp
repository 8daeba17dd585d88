// The test support's temporary folders are removed when a test process exits, so a suite run
// leaves nothing behind in $TMPDIR (issue 23).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "../support/run.hpp"

using tutti::testing::run_shell;
using tutti::testing::temp_dir;

TEST_CASE("support: a temporary folder with files in it (helper, prints its path)") {
  std::string dir = temp_dir();
  std::filesystem::create_directories(dir + "/nested/deeper");
  std::ofstream(dir + "/nested/deeper/file.txt") << "x";
  std::ofstream(dir + "/top.json") << "{}";
  CHECK(std::filesystem::exists(dir + "/top.json"));
  std::cout << "tutti-temp-dir=" << dir << "\n";
}

TEST_CASE("support: temporary folders are removed when the test process exits") {
  auto r =
      run_shell(std::string("'") + TUTTI_BINARY_DIR +
                "/tests/test_core' --test-case='support: a temporary folder with files in it*'");
  REQUIRE_MESSAGE(r.rc == 0, r.out << r.err);
  auto at = r.out.find("tutti-temp-dir=");
  REQUIRE(at != std::string::npos);
  std::string dir = r.out.substr(at + 15, r.out.find('\n', at) - at - 15);
  CHECK(dir.find("tutti-test-") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir));

  // TUTTI_KEEP_TEST_TMP=1 keeps it (for debugging a failing test).
  auto kept =
      run_shell(std::string("TUTTI_KEEP_TEST_TMP=1 '") + TUTTI_BINARY_DIR +
                "/tests/test_core' --test-case='support: a temporary folder with files in it*'");
  REQUIRE(kept.rc == 0);
  at = kept.out.find("tutti-temp-dir=");
  REQUIRE(at != std::string::npos);
  std::string kdir = kept.out.substr(at + 15, kept.out.find('\n', at) - at - 15);
  CHECK(std::filesystem::exists(kdir + "/nested/deeper/file.txt"));
  std::filesystem::remove_all(kdir);
}
