#pragma once
// The charting library inlined into HTML reports: Chart.js (MIT), installed from npm into
// reports/assets/node_modules by scripts/setup.sh and embedded into the binary at build time,
// so reports open offline and the installed binary needs no data files.
#include <string_view>

namespace tutti::reports {

/// True when the build found reports/assets/node_modules/chart.js and embedded it.
bool has_chart_library();
/// The minified library (with its licence banner, without the source-map comment); empty when
/// has_chart_library() is false.
std::string_view chart_library_js();
/// "chart.js 4.6.1" (or "none").
std::string_view chart_library_version();

}  // namespace tutti::reports
