#include "tutti/core/units.hpp"

#include <doctest/doctest.h>

using namespace tutti;

TEST_CASE("units: every dimension parses into SI") {
  CHECK(*parse_quantity("80GiB", Dim::Bytes) == doctest::Approx(80.0 * 1073741824.0));
  CHECK(*parse_quantity("80GB", Dim::Bytes) == doctest::Approx(80e9));
  CHECK(*parse_quantity("400Gbps", Dim::Bandwidth) == doctest::Approx(50e9));
  CHECK(*parse_quantity("3.35TB/s", Dim::Bandwidth) == doctest::Approx(3.35e12));
  CHECK(*parse_quantity("900GB/s", Dim::Bandwidth) == doctest::Approx(900e9));
  CHECK(*parse_quantity("1.2us", Dim::Time) == doctest::Approx(1.2e-6));
  CHECK(*parse_quantity("936ns", Dim::Time) == doctest::Approx(936e-9));
  CHECK(*parse_quantity("30d", Dim::Time) == doctest::Approx(30 * 86400.0));
  CHECK(*parse_quantity("700W", Dim::Power) == doctest::Approx(700));
  CHECK(*parse_quantity("1.2kW", Dim::Power) == doctest::Approx(1200));
  CHECK(*parse_quantity("989.4TFLOPS", Dim::FlopRate) == doctest::Approx(989.4e12));
  CHECK(*parse_quantity("2T", Dim::Count) == doctest::Approx(2e12));
  CHECK(*parse_quantity("$0.08/kWh", Dim::EnergyPrice) == doctest::Approx(0.08 / 3.6e6));
  CHECK(*parse_quantity("$25000", Dim::Money) == doctest::Approx(25000));
  CHECK(*parse_quantity("$2.5/h", Dim::MoneyRate) == doctest::Approx(2.5 / 3600));
  CHECK(*parse_quantity("90%", Dim::Ratio) == doctest::Approx(0.9));
  CHECK(*parse_quantity(" 5 ms ", Dim::Time) == doctest::Approx(5e-3));
}

TEST_CASE("units: malformed or wrong-dimension text is rejected") {
  CHECK_FALSE(parse_quantity("400", Dim::Bandwidth));
  CHECK_FALSE(parse_quantity("400Gbps", Dim::Bytes));
  CHECK_FALSE(parse_quantity("fast", Dim::Time));
  CHECK_FALSE(parse_quantity("700 Watts", Dim::Power));
  CHECK_FALSE(parse_quantity("0.08/kWh", Dim::EnergyPrice));
  CHECK_FALSE(parse_quantity("", Dim::Count));
}
