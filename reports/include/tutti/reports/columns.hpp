#pragma once
// Report columns declared once: each key (the CSV header and JSON key, carrying its unit) has one
// header and one Unit (which picks its human formatter, format_value). compare.cpp and
// plan_report.cpp build their tables from this registry, so the same figure cannot get two units or
// two headers by accident. The hover text says what the figure means in its table and is given
// where the table is built.
#include <span>
#include <string>
#include <string_view>

#include "tutti/reports/document.hpp"

namespace tutti::reports {

/// One registered column: key, header, unit.
struct ColumnDef {
  std::string_view key;
  std::string_view label;
  Unit unit;
};

/// Every registered column, each key once (in no particular order).
std::span<const ColumnDef> column_registry();

/// The column registered under `key` with this table's hover text `help`.
/// Throws InternalError for an unregistered key (a bug in the report builder).
Column column(std::string_view key, std::string help = {});

/// The same column under another header, for a table that words it differently ("Cluster capex"
/// in a table where capex alone would be ambiguous). The key and unit are the registered ones.
Column column_as(std::string_view key, std::string label, std::string help = {});

}  // namespace tutti::reports
