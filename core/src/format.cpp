#include "tutti/core/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tutti {

std::string format_sig(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  double a = std::fabs(v);
  if (a < 1e-3 || a >= 1e6) return fmt::format("{:.{}e}", v, digits - 1);
  int mag = static_cast<int>(std::floor(std::log10(a)));
  int decimals = std::max(0, digits - 1 - mag);
  // Rounding may add a digit (999.5 -> "1000"); that is still 3-4 significant digits, fine.
  return fmt::format("{:.{}f}", v, decimals);
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

std::string format_thousands(double v) {
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

std::string format_number(double v, NumberStyle s) {
  switch (s.kind) {
    case NumberStyle::Kind::Significant:
      return format_sig(v, s.digits);
    case NumberStyle::Kind::General:
      return fmt::format("{:.{}g}", v, s.digits);
    case NumberStyle::Kind::Fixed:
      return fmt::format("{:.{}f}", v, s.digits);
  }
  return fmt::format("{}", v);
}

std::string format_si(double v, const Ladder& l) {
  if (l.rungs.empty()) return std::string(l.prefix) + format_number(v, sig());
  double key = l.magnitude ? std::fabs(v) : v;
  const Rung* r = &l.rungs.back();
  for (const Rung& x : l.rungs)
    if (key >= x.from) {
      r = &x;
      break;
    }
  double shown = l.sign_first ? std::fabs(v) : v;
  std::string out = l.sign_first && v < 0 ? "-" : "";
  out += l.prefix;
  out += format_number(shown * r->times / r->over, r->number);
  out += l.sep;
  out += r->unit;
  return out;
}

namespace ladders {

std::string si_prefixed(double v, std::string_view unit, NumberStyle number, std::string_view sep,
                        char top) {
  struct P {
    double f;
    char p;
  };
  static constexpr P kPrefixes[] = {{1e15, 'P'}, {1e12, 'T'}, {1e9, 'G'}, {1e6, 'M'}, {1e3, 'k'}};
  double a = std::fabs(v);
  bool allowed = false;
  for (const auto& p : kPrefixes) {
    allowed = allowed || p.p == top;
    if (allowed && a >= p.f)
      return format_number(v / p.f, number) + std::string(sep) + p.p + std::string(unit);
  }
  return format_number(v, number) + std::string(sep) + std::string(unit);
}

std::string binary_bytes(double v, NumberStyle number) {
  static constexpr Rung kBin[] = {{1125899906842624.0, 1, 1125899906842624.0, sig(), "PiB"},
                                  {1099511627776.0, 1, 1099511627776.0, sig(), "TiB"},
                                  {1073741824.0, 1, 1073741824.0, sig(), "GiB"},
                                  {1048576.0, 1, 1048576.0, sig(), "MiB"},
                                  {1024.0, 1, 1024.0, sig(), "KiB"},
                                  {0, 1, 1, sig(), "B"}};
  Rung rungs[std::size(kBin)];
  std::copy(std::begin(kBin), std::end(kBin), rungs);
  for (Rung& r : rungs) r.number = number;
  return format_si(v, {rungs});
}

}  // namespace ladders

}  // namespace tutti
