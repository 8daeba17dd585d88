#include "tutti/core/enum.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

namespace tutti {
// clang-format off
#define TUTTI_TEST_COLOR_VALUES(X) X(Red, "red") X(Green, "green") X(Blue, "blue")
// clang-format on
TUTTI_ENUM(TestColor, std::uint8_t, TUTTI_TEST_COLOR_VALUES);
}  // namespace tutti

using namespace tutti;

TEST_CASE("enum table: count, names and values come from one list") {
  static_assert(enum_count<TestColor> == 3);
  static_assert(EnumArray<TestColor, double>::size() == 3);
  static_assert(enum_values<TestColor>()[2] == TestColor::Blue);
  CHECK(std::string(to_string(TestColor::Green)) == "green");
  CHECK(std::string(EnumTable<TestColor>::type_name) == "TestColor");
  CHECK(enum_names<TestColor>() == "red|green|blue");
  CHECK(enum_names<TestColor>(", ") == "red, green, blue");
  // A value outside the table (only a bug produces one) prints "?" instead of reading past it.
  CHECK(std::string(to_string(static_cast<TestColor>(7))) == "?");
}

TEST_CASE("enum table: parse_enum round-trips every name and rejects others") {
  for (TestColor c : enum_values<TestColor>()) CHECK(parse_enum<TestColor>(to_string(c)) == c);
  CHECK_FALSE(parse_enum<TestColor>("Red").has_value());  // case-sensitive
  CHECK_FALSE(parse_enum<TestColor>("").has_value());
  CHECK_FALSE(parse_enum<TestColor>("purple").has_value());
}

TEST_CASE("EnumArray: one zeroed slot per enumerator, indexed by the enum") {
  EnumArray<TestColor, double> a{};
  for (double x : a) CHECK(x == 0);
  a[TestColor::Blue] += 2.5;
  a[TestColor::Red] = 1;
  CHECK(a[TestColor::Blue] == 2.5);
  CHECK(a.values[0] == 1);
  double sum = 0;
  for (double x : a) sum += x;
  CHECK(sum == 3.5);
  EnumArray<TestColor, double> b = a;
  CHECK(a == b);
  b[TestColor::Green] = 1;
  CHECK_FALSE(a == b);
}
