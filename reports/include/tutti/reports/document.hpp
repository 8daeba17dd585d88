#pragma once
// The report model: a neutral document (sections of paragraphs, call-outs, tables and charts)
// that every writer renders (writers.hpp: HTML, Markdown, CSV, JSON). Builders (compare.hpp,
// plan_report.hpp) fill it from simulation and plan results; writers never compute numbers.
//
// Numbers are stored in SI (seconds, USD, watts, joules, bytes, bytes per second, fractions)
// with a Unit that says how to show them; the display text is derived by format.hpp, so the
// HTML, the Markdown and the CSV/JSON show the same value (CSV/JSON at full precision).
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tutti::reports {

/// How a number is shown. CSV and JSON always carry the raw SI value.
enum class Unit {
  Text,      ///< Not a number.
  Count,     ///< Plain count (GPUs, switches): "1,024".
  Number,    ///< Dimensionless value: 3 significant digits.
  Seconds,   ///< Duration: "812 ms", "3.2 h", "41.5 d".
  Usd,       ///< Money: "$1.23M".
  Watts,     ///< Power: "1.2 MW".
  Joules,    ///< Energy: shown in MWh/GWh.
  Bytes,     ///< Size: "80 GiB".
  Bps,       ///< Bandwidth in bytes per second: shown in Gb/s.
  Fraction,  ///< 0..1 shown as a percentage: "43.1%".
  Percent,   ///< Already a percentage (signed): "+12.4%".
};

/// A table column. `key` is the machine name used as CSV header and JSON key; it carries the
/// unit (`iteration_time_s`, `network_capex_usd`). `help` becomes the header's hover text.
struct Column {
  std::string key;
  std::string label;
  Unit unit = Unit::Text;
  std::string help;
};

/// One table cell: empty, a number (SI, shown per the column's unit) or text. `hint` is shown
/// on hover (HTML title) and as a footnote-free remark elsewhere.
struct Cell {
  enum class Kind { Empty, Number, Text };
  Kind kind = Kind::Empty;
  double number = 0;
  std::string text;
  std::string hint;
  bool emphasis = false;  ///< Best value of its column, or the recommended row.

  static Cell num(double v, std::string hint = {}, bool emphasis = false);
  static Cell str(std::string s, std::string hint = {}, bool emphasis = false);
  static Cell none(std::string hint = {});
};

struct Table {
  std::string id;  ///< Unique in the report; CSV picks a table by id.
  std::string title;
  std::string caption;
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;  ///< Each row has columns.size() cells.
};

/// A series of values over the chart's categories (bar charts).
struct Series {
  std::string name;
  std::vector<double> values;  ///< One per category, in the chart's y unit.
};

/// A point of a scatter/bubble chart. `size` and `color` are normalised to 0..1 by the builder;
/// `details` are the hover lines, already formatted.
struct Point {
  double x = 0, y = 0;
  double size = 0.5;
  double color = 0.5;
  std::string label;
  std::string
      tag;  ///< Short text drawn next to the point ("#3": the row of its table); may be empty.
  std::vector<std::string> details;
};

struct PointSeries {
  std::string name;
  std::vector<Point> points;
  bool highlight = false;  ///< Drawn on top with a distinct style (the recommendation).
  bool line = false;       ///< Join the points (a frontier).
};

enum class ChartKind {
  Bar,         ///< Grouped bars: categories on x, one bar per series.
  StackedBar,  ///< Stacked bars (a breakdown): categories on x, series stacked.
  Line,        ///< Lines over categories (a sensitivity sweep).
  Bubble,      ///< Scatter/bubble of PointSeries (a Pareto frontier).
};

struct Chart {
  std::string id;  ///< Unique in the report (HTML element id).
  std::string title;
  std::string caption;
  ChartKind kind = ChartKind::Bar;
  std::string x_label, y_label;
  Unit x_unit = Unit::Text, y_unit = Unit::Number;
  std::vector<std::string> categories;    ///< Bar/StackedBar/Line.
  std::vector<Series> series;             ///< Bar/StackedBar/Line.
  std::vector<PointSeries> point_series;  ///< Bubble.
  std::string size_label, color_label;    ///< Bubble: what the size and colour encode.
  bool horizontal = false;                ///< Bars drawn horizontally.

  /// True when there is at least one finite value to draw.
  bool has_data() const;
};

/// A highlighted message: verdicts, warnings ("only one architecture"), failures.
struct Callout {
  enum class Level { Info, Good, Warning, Error };
  Level level = Level::Info;
  std::string title;
  std::string text;
};

struct Paragraph {
  std::string text;
};

/// Preformatted text shown folded (HTML <details>), e.g. an input file echoed verbatim.
struct Details {
  std::string summary;
  std::string text;
};

using Block = std::variant<Paragraph, Callout, Table, Chart, Details>;

struct Section {
  std::string id;
  std::string title;
  std::vector<Block> blocks;
};

/// One line of the verdict at the top: who wins on a criterion and by how much.
struct VerdictItem {
  std::string criterion;  ///< "Time to train", "Cost per run", "Cost per token".
  std::string winner;     ///< Empty when nobody can be named (e.g. missing data).
  std::string detail;     ///< "12.3% faster than rail-2to1 (30.2 d vs 34.4 d)".
  double margin_pct = 0;  ///< Winner's advantage over the runner-up, in percent.
};

/// An input echoed so the report can be reproduced.
struct InputEcho {
  std::string role;     ///< "workload", "cluster", "plan".
  std::string path;     ///< As given on the command line.
  std::string sha256;   ///< Hex digest of the file's bytes.
  std::string content;  ///< The file's text, verbatim.
};

struct Report {
  std::string kind;  ///< "compare" or "plan".
  std::string title;
  std::string subtitle;
  std::string tool_version;  ///< "tutti 0.1.0".
  std::string command;       ///< The command line that reproduces this report.
  std::vector<VerdictItem> verdict;
  std::vector<Callout> notices;  ///< Shown under the verdict (one architecture, failures).
  std::vector<Section> sections;
  std::vector<InputEcho> inputs;
  std::string primary_table;  ///< Id of the table the CSV writer emits by default.
  std::string data_json;      ///< The raw data the report was built from (JSON text), echoed.

  /// The table with this id, or nullptr.
  const Table* find_table(const std::string& id) const;
  /// Every table, in document order.
  std::vector<const Table*> tables() const;
  /// Every chart, in document order.
  std::vector<const Chart*> charts() const;
};

}  // namespace tutti::reports
