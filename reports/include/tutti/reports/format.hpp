#pragma once
// Human formatting of SI values for reports. Deterministic (no locale), 3 significant digits
// unless stated. CSV and JSON never use these: they carry the raw value.
#include <string>

#include "tutti/core/format.hpp"
#include "tutti/models/program.hpp"
#include "tutti/reports/document.hpp"

namespace tutti::reports {

/// Formats `v` (SI) for people according to `u`: Seconds -> "812 ms" / "3.20 h" / "41.5 d",
/// Usd -> "$1.23M", Watts -> "1.20 MW", Joules -> "3.40 GWh", Bytes -> "80.0 GiB",
/// Bps -> "400 Gb/s", Fraction -> "43.1%", Percent -> "12.4%", Count -> "1,024".
/// Non-finite values give "n/a".
std::string format_value(double v, Unit u);

// The number formats live in core (one formatter for every human-facing value); reports code
// calls them as reports::format_sig etc. as before.
using tutti::format_exact;
using tutti::format_short;
using tutti::format_sig;

/// The unit's short name for axis titles and CSV keys ("s", "usd", "W", "J", "B", "Bps", "%").
const char* unit_suffix(Unit u);
/// Machine name of a unit ("seconds", "usd", ...), used in JSON output.
const char* unit_name(Unit u);

/// Label of a parallel dimension in reports: its table name upper-cased, "DP×CP" for DPxCP
/// ("TP", "EDP"). The JSON key is to_string(d).
std::string dim_label(GroupDim d);

/// Signed relative difference of `a` against `b` in percent: (a - b) / b * 100.
double percent_diff(double a, double b);

}  // namespace tutti::reports
