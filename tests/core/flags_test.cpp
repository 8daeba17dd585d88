// KEY=VALUE flag splitting shared by --parallel, --facility and --scale-down.
#include "tutti/core/flags.hpp"

#include <doctest/doctest.h>

#include "tutti/core/error.hpp"

using namespace tutti;

TEST_CASE("flags: lists split on commas, empty items skipped") {
  CHECK(split_list("") == std::vector<std::string>{});
  CHECK(split_list("a") == std::vector<std::string>{"a"});
  CHECK(split_list("a,,b,") == std::vector<std::string>{"a", "b"});
}

TEST_CASE("flags: KEY=VALUE items keep order, values may contain '='") {
  auto items = split_flag_items("tp=8,pp=2,,x=a=b", "--parallel", "KEY=VALUE");
  REQUIRE(items.size() == 3);
  CHECK(items[0].key == "tp");
  CHECK(items[0].value == "8");
  CHECK(items[1].key == "pp");
  CHECK(items[2].key == "x");
  CHECK(items[2].value == "a=b");
}

TEST_CASE("flags: an item without '=' names the flag and the item") {
  try {
    split_flag_items("tp=8,oops", "--parallel", "KEY=VALUE");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == "--parallel");
    CHECK(e.key_path() == "oops");
    CHECK(e.expected() == "KEY=VALUE");
  }
}

TEST_CASE("flags: typed values are range-checked and whole") {
  FlagItem i{"tp", "8"};
  CHECK(flag_integer(i, "--parallel", 1, 16) == 8);
  CHECK_THROWS_AS(flag_integer(i, "--parallel", 1, 4), InputError);
  for (const char* bad : {"", "8x", "x", "1.5", " 8"}) {
    FlagItem b{"tp", bad};
    CHECK_THROWS_AS(flag_integer(b, "--parallel", 1, 16), InputError);
  }
  for (const char* bad : {"", "0.5x", "x", "1.5.2", "inf"})
    CHECK_THROWS_AS(flag_number(FlagItem{"u", bad}, "--facility", 0, 10), InputError);
  CHECK(flag_number(FlagItem{"u", "0.5"}, "--facility", 0, 1) == doctest::Approx(0.5));
  CHECK_THROWS_AS(flag_number(FlagItem{"u", "nan"}, "--facility", 0, 1), InputError);
  CHECK_THROWS_AS(flag_number(FlagItem{"u", "2"}, "--facility", 0, 1), InputError);
  try {
    flag_integer(FlagItem{"zero", "5"}, "--parallel", 0, 3);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.key_path() == "zero");
    CHECK(e.found() == "\"5\"");
    CHECK(e.expected() == "an integer in [0, 3]");
  }
}

TEST_CASE("flags: a key given twice is refused, naming both values (--parallel tp=2,tp=4)") {
  try {
    split_flag_items("tp=2,pp=1,tp=4", "--parallel", "KEY=VALUE");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "--parallel: tp: got \"tp\" twice (tp=2, tp=4), expected each key at most once");
  }
}
