#pragma once
// Formatting SI values for people, in one place: every table, report and message that writes "10.3
// d",
// "$465k", "1.20 MW" or "3.4 GB/s" goes through format_si with a unit ladder. Different outputs
// keep their own look (digits, thresholds, unit names) by choosing a ladder and number styles, so
// the wording of each existing output is a parameter here, not a private copy of the algorithm.
// Deterministic: no locale. Machine outputs (JSON, CSV) never use these; they carry the raw value.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace tutti {

/// How the number in front of a unit is written.
struct NumberStyle {
  enum class Kind { Significant, General, Fixed };
  Kind kind;
  int digits;
};

/// `d` significant digits in fixed notation for 1e-3 <= |v| < 1e6, an exponent otherwise
/// ("0.0123", "812", "41.5", "1.20e+07"); 0 is "0" (format_sig).
constexpr NumberStyle sig(int d = 3) {
  return {NumberStyle::Kind::Significant, d};
}
/// printf's "%.<d>g": `d` significant digits, trailing zeros dropped ("1.2", "1e+03").
constexpr NumberStyle general(int d = 6) {
  return {NumberStyle::Kind::General, d};
}
/// printf's "%.<d>f": `d` decimals ("10.3", "465").
constexpr NumberStyle fixed(int d) {
  return {NumberStyle::Kind::Fixed, d};
}

/// `v` written in style `s` (no unit). Non-finite values give "n/a" in the sig style, and
/// printf's "inf"/"nan" otherwise.
std::string format_number(double v, NumberStyle s);

/// `v` with `digits` significant digits, no exponent for 1e-3 <= |v| < 1e6 ("0.0123", "812",
/// "1.20e+07"); "n/a" for non-finite values.
std::string format_sig(double v, int digits = 3);

/// `v` with up to 3 significant digits and no trailing zeros ("2", "2.5", "0.125").
std::string format_short(double v);

/// Shortest text that reads back to the same double ("0.1", "1e+21"); "null" for non-finite.
std::string format_exact(double v);

/// `v` rounded to an integer with a comma every three digits ("1,024", "-12,345").
std::string format_thousands(double v);

/// One rung of a unit ladder: a value whose magnitude reaches `from` is written as
/// v * times / over in `number` style, followed by the ladder's separator and `unit`.
/// (Two factors, one of them 1, so that "ms" may be v * 1e3 and "d" v / 86400 exactly as an
/// output has always computed them.)
struct Rung {
  double from;
  double times;
  double over;
  NumberStyle number;
  std::string_view unit;
};

/// A `from` that every value reaches (the bottom rung of a ladder chosen by signed value).
inline constexpr double kBelowAll = -std::numeric_limits<double>::infinity();

/// A unit ladder, largest rung first. The first rung whose `from` the value reaches is used;
/// a value below every rung takes the last one.
struct Ladder {
  std::span<const Rung> rungs;
  std::string_view prefix = "";  ///< written before the number ("$")
  std::string_view sep = " ";    ///< between the number and the unit
  bool sign_first = false;       ///< "-$5k": the sign before the prefix, the number unsigned
  bool magnitude = true;         ///< rungs are chosen by |v| (false: by v itself)
};

/// `v` (SI) written with ladder `l`: format_si(1.2e6, {watt rungs}) == "1.2 MW".
/// Non-finite values are the caller's to word ("never", "n/a"); here they take the last rung.
std::string format_si(double v, const Ladder& l);

/// Rungs that divide by powers of 1000 with SI prefixes, up to `top` ("P", "T", "G", "M", "k",
/// ""), all in one number style: the usual "1.2 MW", "3.4 GB", "812 kJ". `unit` must outlive
/// the use (a string literal).
namespace ladders {
/// Watts, joules, bytes... with prefixes k..P, `number` style for every rung.
std::string si_prefixed(double v, std::string_view unit, NumberStyle number,
                        std::string_view sep = " ", char top = 'P');
/// Bytes with binary prefixes KiB..PiB ("80.0 GiB"), `number` style for every rung.
std::string binary_bytes(double v, NumberStyle number);
}  // namespace ladders

}  // namespace tutti
