#include "tutti/reports/format.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

namespace tutti::reports {

std::string format_sig(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  double a = std::fabs(v);
  if (a < 1e-3 || a >= 1e6) return fmt::format("{:.{}e}", v, digits - 1);
  int mag = static_cast<int>(std::floor(std::log10(a)));
  int decimals = std::max(0, digits - 1 - mag);
  std::string s = fmt::format("{:.{}f}", v, decimals);
  // Rounding may add a digit (999.5 -> "1000"); that is still 3-4 significant digits, fine.
  return s;
}

std::string format_short(double v) {
  std::string s = format_sig(v);
  if (s.find('.') == std::string::npos || s.find('e') != std::string::npos) return s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string format_exact(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt::format("{}", v);
}

namespace {
std::string with_prefix(double v, const char* unit, bool space = true) {
  struct P {
    double f;
    const char* p;
  };
  static constexpr P kPrefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  double a = std::fabs(v);
  for (const auto& p : kPrefixes)
    if (a >= p.f) return format_sig(v / p.f) + (space ? " " : "") + p.p + unit;
  return format_sig(v) + (space ? " " : "") + unit;
}

std::string thousands(double v) {
  std::string digits = fmt::format("{:.0f}", std::fabs(v));
  std::string out;
  int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out += digits[i];
    int left = n - 1 - i;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  return (v < 0 ? "-" : "") + out;
}
}  // namespace

std::string format_value(double v, Unit u) {
  if (!std::isfinite(v)) return "n/a";
  switch (u) {
    case Unit::Text:
    case Unit::Number:
      return format_sig(v);
    case Unit::Count:
      return std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15 ? thousands(v)
                                                                        : format_sig(v);
    case Unit::Seconds: {
      double a = std::fabs(v);
      if (a == 0) return "0 s";
      if (a < 1e-6) return format_sig(v * 1e9) + " ns";
      if (a < 1e-3) return format_sig(v * 1e6) + " µs";
      if (a < 1) return format_sig(v * 1e3) + " ms";
      if (a < 120) return format_sig(v) + " s";
      if (a < 2 * 3600) return format_sig(v / 60) + " min";
      if (a < 2 * 86400) return format_sig(v / 3600) + " h";
      return format_sig(v / 86400) + " d";
    }
    case Unit::Usd: {
      double a = std::fabs(v);
      std::string sign = v < 0 ? "-" : "";
      if (a >= 1e9) return sign + "$" + format_sig(a / 1e9) + "B";
      if (a >= 1e6) return sign + "$" + format_sig(a / 1e6) + "M";
      if (a >= 1e3) return sign + "$" + format_sig(a / 1e3) + "k";
      if (a >= 1) return sign + "$" + fmt::format("{:.2f}", a);
      return sign + "$" + format_sig(a);
    }
    case Unit::Watts:
      return with_prefix(v, "W");
    case Unit::Joules: {
      double wh = v / 3600.0;
      if (std::fabs(wh) >= 1e3) return with_prefix(wh, "Wh");
      return with_prefix(v, "J");
    }
    case Unit::Bytes: {
      struct P {
        double f;
        const char* p;
      };
      static constexpr P kBin[] = {{1125899906842624.0, "PiB"},
                                   {1099511627776.0, "TiB"},
                                   {1073741824.0, "GiB"},
                                   {1048576.0, "MiB"},
                                   {1024.0, "KiB"}};
      for (const auto& p : kBin)
        if (std::fabs(v) >= p.f) return format_sig(v / p.f) + " " + p.p;
      return format_sig(v) + " B";
    }
    case Unit::Bps:
      return with_prefix(v * 8, "b/s");
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
