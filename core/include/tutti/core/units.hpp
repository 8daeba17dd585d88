#pragma once
// Quantities with units, parsed in one place into SI (docs/design.md "Units").
//   bytes      "80GiB" "80GB" "512MB" "4KiB" "100B"           (GB = 1e9 B, GiB = 2^30 B)
//   bandwidth  "400Gbps" "3.35TB/s" "900GB/s" "50GBps" "25Gb/s"   -> bytes per second
//   time       "1.2us" "936ns" "5ms" "2s" "30min" "4h" "30d" "1y"  -> seconds
//   power      "700W" "1.2kW" "35MW"                              -> watts
//   energy     "1kWh" "3.6MJ" "1J"                                -> joules
//   flop rate  "989.4TFLOPS" "2.5PFLOPS"                          -> FLOP/s
//   count      "2T" "15.6T" "1.5B" "300M" "4k" (tokens, samples)   -> plain number
//   price      "$0.08/kWh"                                          -> USD per joule
//   money      "$25000" "$1.2M"                                     -> USD
//   rate       "$2.5/h"                                             -> USD per second
// Plain JSON numbers are accepted only where a key names its unit (`bandwidth_GBps`).
#include <optional>
#include <string>
#include <string_view>

namespace tutti {

enum class Dim {
  Bytes,
  Bandwidth,
  Time,
  Power,
  Energy,
  FlopRate,
  Count,
  EnergyPrice,
  Money,
  MoneyRate,
  Ratio
};

/// Human name of a dimension with an example, for error messages ("a bandwidth such as
/// \"400Gbps\"").
std::string dim_expectation(Dim d);

/// Parses `text` as a quantity of dimension `d` into SI. Returns nullopt when the text is not
/// a well-formed quantity of that dimension (the caller turns that into an InputError).
std::optional<double> parse_quantity(std::string_view text, Dim d);

/// Formats an SI value for people with 4 significant digits and the largest unit it reaches
/// ("50 GB/s", "1.2 MW", "3 d"); one of format.hpp's ladders.
std::string format_quantity(double si_value, Dim d);

constexpr double kGB = 1e9;
constexpr double kGiB = 1073741824.0;
constexpr double kHour = 3600.0;
constexpr double kDay = 86400.0;
constexpr double kYear = 365.0 * kDay;
constexpr double kJoulePerKWh = 3.6e6;

}  // namespace tutti
