#include "tutti/reports/format.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

namespace tutti::reports {

namespace {
// Report ladders: 3 significant digits (sig()), see core/format.hpp.
constexpr Rung kSeconds[] = {{2 * 86400, 1, 86400, sig(), "d"}, {2 * 3600, 1, 3600, sig(), "h"},
                             {120, 1, 60, sig(), "min"},        {1, 1, 1, sig(), "s"},
                             {1e-3, 1e3, 1, sig(), "ms"},       {1e-6, 1e6, 1, sig(), "µs"},
                             {0, 1e9, 1, sig(), "ns"}};
constexpr Rung kUsd[] = {{1e9, 1, 1e9, sig(), "B"},
                         {1e6, 1, 1e6, sig(), "M"},
                         {1e3, 1, 1e3, sig(), "k"},
                         {1, 1, 1, fixed(2), ""},
                         {0, 1, 1, sig(), ""}};
}  // namespace

std::string format_value(double v, Unit u) {
  if (!std::isfinite(v)) return "n/a";
  switch (u) {
    case Unit::Text:
    case Unit::Number:
      return format_sig(v);
    case Unit::Count:
      return std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15 ? format_thousands(v)
                                                                        : format_sig(v);
    case Unit::Seconds:
      if (v == 0) return "0 s";
      return format_si(v, {kSeconds});
    case Unit::Usd:
      return format_si(v, {.rungs = kUsd, .prefix = "$", .sep = "", .sign_first = true});
    case Unit::Watts:
      return ladders::si_prefixed(v, "W", sig());
    case Unit::Joules: {
      double wh = v / 3600.0;
      if (std::fabs(wh) >= 1e3) return ladders::si_prefixed(wh, "Wh", sig());
      return ladders::si_prefixed(v, "J", sig());
    }
    case Unit::Bytes:
      return ladders::binary_bytes(v, sig());
    case Unit::Bps:
      return ladders::si_prefixed(v * 8, "b/s", sig());
    case Unit::Fraction:
      return format_sig(v * 100) + "%";
    case Unit::Percent:
      return format_sig(v) + "%";
  }
  return format_sig(v);
}

const char* unit_suffix(Unit u) {
  switch (u) {
    case Unit::Text:
      return "";
    case Unit::Count:
      return "";
    case Unit::Number:
      return "";
    case Unit::Seconds:
      return "s";
    case Unit::Usd:
      return "usd";
    case Unit::Watts:
      return "W";
    case Unit::Joules:
      return "J";
    case Unit::Bytes:
      return "B";
    case Unit::Bps:
      return "Bps";
    case Unit::Fraction:
      return "fraction";
    case Unit::Percent:
      return "%";
  }
  return "";
}

std::string dim_label(GroupDim d) {
  if (d == GroupDim::DPxCP) return "DP×CP";
  std::string s = to_string(d);
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

const char* unit_name(Unit u) {
  switch (u) {
    case Unit::Text:
      return "text";
    case Unit::Count:
      return "count";
    case Unit::Number:
      return "number";
    case Unit::Seconds:
      return "seconds";
    case Unit::Usd:
      return "usd";
    case Unit::Watts:
      return "watts";
    case Unit::Joules:
      return "joules";
    case Unit::Bytes:
      return "bytes";
    case Unit::Bps:
      return "bytes_per_second";
    case Unit::Fraction:
      return "fraction";
    case Unit::Percent:
      return "percent";
  }
  return "text";
}

double percent_diff(double a, double b) {
  return b == 0 ? NAN : (a - b) / b * 100.0;
}

}  // namespace tutti::reports
