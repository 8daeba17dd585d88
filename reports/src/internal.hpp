#pragma once
// Helpers shared by the writers (not public).
#include <string>

#include "tutti/reports/document.hpp"
#include "tutti/reports/format.hpp"

namespace tutti::reports::detail {

/// The text a person sees for a cell: its text, or its number formatted per the column's unit.
inline std::string cell_text(const Cell& c, const Column& col) {
  switch (c.kind) {
    case Cell::Kind::Empty:
      return "—";
    case Cell::Kind::Text:
      return c.text;
    case Cell::Kind::Number:
      return format_value(c.number, col.unit);
  }
  return {};
}

const char* level_name(Callout::Level l);
const char* chart_kind_name(ChartKind k);

}  // namespace tutti::reports::detail
