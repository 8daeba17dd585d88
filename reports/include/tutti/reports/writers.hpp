#pragma once
// Writers: render a Report (document.hpp) as one self-contained HTML file, Markdown, CSV or JSON.
// All are deterministic (no timestamps): the same Report gives the same bytes.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "tutti/reports/document.hpp"

namespace tutti::reports {

enum class Format { Html, Markdown, Csv, Json };

/// "html" | "md" | "markdown" | "csv" | "json". Throws InputError (flag "--format") otherwise.
Format parse_format(std::string_view text);
/// The format implied by an output file's extension (.html/.htm, .md, .csv, .json), else Html.
Format format_for_path(std::string_view path);

/// One HTML file that opens offline: inline CSS, the charting library inlined (assets.hpp),
/// chart specs and the report's data as inline JSON, hover text on cells and chart points, the
/// inputs echoed (with SHA-256) and the tool version. Throws InputError when the report has
/// charts and this build has no charting library bundled (run scripts/setup.sh, rebuild).
std::string write_html(const Report& r);

/// GitHub-flavoured Markdown with the same tables; each chart appears as a table of its data.
std::string write_markdown(const Report& r);

/// RFC 4180 CSV of one table: a header row of column keys (units in the keys), one row per
/// record, raw SI numbers at full precision. `table_id` empty = the report's primary table.
/// Throws InputError when no table has that id (the message lists the ids).
std::string write_csv(const Report& r, const std::string& table_id = {});

/// The whole report as JSON: schema_version, kind, title, tool_version, command, verdict,
/// notices, sections (tables with raw values and units, charts with their data), inputs, data.
nlohmann::json to_json(const Report& r);
/// to_json(r) pretty-printed (2 spaces) with a trailing newline.
std::string write_json(const Report& r);

/// Renders `r` in `f` (for CSV, the primary table).
std::string write(const Report& r, Format f);

}  // namespace tutti::reports
