#include "tutti/reports/assets.hpp"

#include <string>

namespace tutti::reports {
namespace detail {
extern const bool kHaveChartLibrary;
extern const char* const kChartLibraryVersion;
extern const char* const kChartLibraryParts[];
}  // namespace detail

bool has_chart_library() {
  return detail::kHaveChartLibrary;
}

std::string_view chart_library_js() {
  static const std::string js = [] {
    std::string s;
    for (const char* const* p = detail::kChartLibraryParts; *p; ++p) s += *p;
    return s;
  }();
  return js;
}

std::string_view chart_library_version() {
  return detail::kChartLibraryVersion;
}

}  // namespace tutti::reports
