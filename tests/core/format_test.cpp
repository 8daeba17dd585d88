#include "tutti/core/format.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tutti/core/units.hpp"

using namespace tutti;

TEST_CASE("format: number styles") {
  CHECK(format_number(0.012345, sig()) == "0.0123");
  CHECK(format_number(812.4, sig()) == "812");
  CHECK(format_number(41.53, sig()) == "41.5");
  CHECK(format_number(1.2e7, sig()) == "1.20e+07");
  CHECK(format_number(0, sig()) == "0");
  CHECK(format_number(NAN, sig()) == "n/a");
  CHECK(format_number(1.2, general(3)) == "1.2");
  CHECK(format_number(999.9, general(3)) == "1e+03");
  CHECK(format_number(123.456, general()) == "123.456");
  CHECK(format_number(10.25, fixed(1)) == "10.2");
  CHECK(format_number(465.4, fixed(0)) == "465");
  CHECK(format_short(2.50) == "2.5");
  CHECK(format_short(2.0) == "2");
  CHECK(format_short(0.125) == "0.125");
  CHECK(format_exact(0.1) == "0.1");
  CHECK(format_exact(INFINITY) == "null");
  CHECK(format_thousands(1024) == "1,024");
  CHECK(format_thousands(-12345) == "-12,345");
  CHECK(format_thousands(999) == "999");
}

TEST_CASE("format: a ladder takes the first rung the value reaches, else the last") {
  static constexpr Rung kTime[] = {{2 * 86400, 1, 86400, fixed(1), "d"},
                                   {3600, 1, 3600, fixed(1), "h"},
                                   {60, 1, 60, fixed(1), "min"},
                                   {1, 1, 1, fixed(0), "s"},
                                   {1e-3, 1e3, 1, fixed(1), "ms"}};
  CHECK(format_si(10.3 * 86400, {kTime}) == "10.3 d");
  CHECK(format_si(86400, {kTime}) == "24.0 h");
  CHECK(format_si(90, {kTime}) == "1.5 min");
  CHECK(format_si(42, {kTime}) == "42 s");
  CHECK(format_si(0.0123, {kTime}) == "12.3 ms");
  CHECK(format_si(1e-6, {kTime}) == "0.0 ms");   // below every rung: the last one
  CHECK(format_si(-90, {kTime}) == "-1.5 min");  // by magnitude
  CHECK(format_si(-90, {.rungs = kTime, .magnitude = false}) == "-90000.0 ms");
}

TEST_CASE("format: money with a prefix, no separator, and the sign first") {
  static constexpr Rung kUsd[] = {{1e6, 1, 1e6, sig(), "M"},
                                  {1e3, 1, 1e3, sig(), "k"},
                                  {1, 1, 1, fixed(2), ""},
                                  {0, 1, 1, sig(), ""}};
  const Ladder usd{.rungs = kUsd, .prefix = "$", .sep = "", .sign_first = true};
  CHECK(format_si(465e3, usd) == "$465k");
  CHECK(format_si(1.234e6, usd) == "$1.23M");
  CHECK(format_si(2.5, usd) == "$2.50");
  CHECK(format_si(0.05, usd) == "$0.0500");
  CHECK(format_si(-5000, usd) == "-$5.00k");
  CHECK(format_si(-5000, {.rungs = kUsd, .prefix = "$", .sep = ""}) == "$-5.00k");
  static constexpr Rung kBelow[] = {{1e3, 1, 1e3, fixed(0), "k"}, {kBelowAll, 1, 1, fixed(0), ""}};
  CHECK(format_si(-5000, {.rungs = kBelow, .prefix = "$", .sep = "", .magnitude = false}) ==
        "$-5000");
}

TEST_CASE("format: prefixed ladders") {
  CHECK(ladders::si_prefixed(1.2e6, "W", sig()) == "1.20 MW");
  CHECK(ladders::si_prefixed(1.2e6, "W", general(3)) == "1.2 MW");
  CHECK(ladders::si_prefixed(3.4e9, "B/s", general(2)) == "3.4 GB/s");
  CHECK(ladders::si_prefixed(512, "W", sig()) == "512 W");
  CHECK(ladders::si_prefixed(2e15, "W", general(3), " ", 'G') == "2e+06 GW");
  CHECK(ladders::si_prefixed(4e11, "b/s", sig(), "") == "400Gb/s");
  CHECK(ladders::binary_bytes(80.0 * 1073741824.0, sig()) == "80.0 GiB");
  CHECK(ladders::binary_bytes(100, sig()) == "100 B");
  CHECK(ladders::binary_bytes(1536, general(3)) == "1.5 KiB");
}

TEST_CASE("format: format_quantity uses 4 significant digits and the unit each dimension names") {
  CHECK(format_quantity(50e9, Dim::Bandwidth) == "50 GB/s");
  CHECK(format_quantity(1.2e6, Dim::Power) == "1.2 MW");
  CHECK(format_quantity(3 * kDay, Dim::Time) == "3 d");
  CHECK(format_quantity(1.5e-6, Dim::Time) == "1.5 us");
  CHECK(format_quantity(1e-12, Dim::Time) == "0.001 ns");  // below every rung
  CHECK(format_quantity(80e9, Dim::Bytes) == "80 GB");
  CHECK(format_quantity(2e12, Dim::Count) == "2 T");
  CHECK(format_quantity(1.2e6, Dim::Money) == "1.2 M$");
  CHECK(format_quantity(0.08 / kJoulePerKWh, Dim::EnergyPrice) == "$0.08/kWh");
  CHECK(format_quantity(2.5 / kHour, Dim::MoneyRate) == "$2.5/h");
  CHECK(format_quantity(0.25, Dim::Ratio) == "25%");
}
