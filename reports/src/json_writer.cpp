#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "internal.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/reports/writers.hpp"

namespace tutti::reports {

namespace detail {
const char* level_name(Callout::Level l) {
  switch (l) {
    case Callout::Level::Info:
      return "info";
    case Callout::Level::Good:
      return "good";
    case Callout::Level::Warning:
      return "warning";
    case Callout::Level::Error:
      return "error";
  }
  return "info";
}
const char* chart_kind_name(ChartKind k) {
  switch (k) {
    case ChartKind::Bar:
      return "bar";
    case ChartKind::StackedBar:
      return "stacked_bar";
    case ChartKind::Line:
      return "line";
    case ChartKind::Bubble:
      return "bubble";
  }
  return "bar";
}
}  // namespace detail

namespace {
using nlohmann::json;

json num_or_null(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json table_json(const Table& t) {
  json cols = json::array();
  for (const auto& c : t.columns)
    cols.push_back(
        {{"key", c.key}, {"label", c.label}, {"unit", unit_name(c.unit)}, {"help", c.help}});
  json rows = json::array();
  for (const auto& row : t.rows) {
    json r = json::object();
    for (std::size_t i = 0; i < t.columns.size() && i < row.size(); ++i) {
      const Cell& c = row[i];
      switch (c.kind) {
        case Cell::Kind::Empty:
          r[t.columns[i].key] = nullptr;
          break;
        case Cell::Kind::Number:
          r[t.columns[i].key] = num_or_null(c.number);
          break;
        case Cell::Kind::Text:
          r[t.columns[i].key] = c.text;
          break;
      }
    }
    rows.push_back(std::move(r));
  }
  return {{"type", "table"},      {"id", t.id},      {"title", t.title},
          {"caption", t.caption}, {"columns", cols}, {"rows", rows}};
}

json callout_json(const Callout& c) {
  return {{"level", detail::level_name(c.level)}, {"title", c.title}, {"text", c.text}};
}
}  // namespace

/// Also used by the HTML writer for the chart specs its inline renderer draws.
nlohmann::json chart_json(const Chart& c) {
  json series = json::array();
  for (const auto& s : c.series) {
    json vals = json::array();
    for (double v : s.values) vals.push_back(num_or_null(v));
    series.push_back({{"name", s.name}, {"values", vals}});
  }
  json ps = json::array();
  for (const auto& s : c.point_series) {
    json pts = json::array();
    for (const auto& p : s.points) {
      pts.push_back({{"x", num_or_null(p.x)},
                     {"y", num_or_null(p.y)},
                     {"size", num_or_null(p.size)},
                     {"color", num_or_null(p.color)},
                     {"label", p.label},
                     {"details", p.details}});
      if (!p.tag.empty()) pts.back()["tag"] = p.tag;
    }
    ps.push_back({{"name", s.name}, {"highlight", s.highlight}, {"line", s.line}, {"points", pts}});
  }
  return {{"type", "chart"},
          {"id", c.id},
          {"title", c.title},
          {"caption", c.caption},
          {"kind", detail::chart_kind_name(c.kind)},
          {"x_label", c.x_label},
          {"y_label", c.y_label},
          {"x_unit", unit_name(c.x_unit)},
          {"y_unit", unit_name(c.y_unit)},
          {"categories", c.categories},
          {"series", series},
          {"point_series", ps},
          {"size_label", c.size_label},
          {"color_label", c.color_label},
          {"horizontal", c.horizontal}};
}

nlohmann::json to_json(const Report& r) {
  json verdict = json::array();
  for (const auto& v : r.verdict)
    verdict.push_back({{"criterion", v.criterion},
                       {"winner", v.winner},
                       {"detail", v.detail},
                       {"margin_pct", num_or_null(v.margin_pct)}});
  json notices = json::array();
  for (const auto& n : r.notices) notices.push_back(callout_json(n));
  json sections = json::array();
  for (const auto& s : r.sections) {
    json blocks = json::array();
    for (const auto& b : s.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&b))
        blocks.push_back({{"type", "paragraph"}, {"text", p->text}});
      else if (const auto* c = std::get_if<Callout>(&b)) {
        json j = callout_json(*c);
        j["type"] = "callout";
        blocks.push_back(j);
      } else if (const auto* t = std::get_if<Table>(&b))
        blocks.push_back(table_json(*t));
      else if (const auto* ch = std::get_if<Chart>(&b))
        blocks.push_back(chart_json(*ch));
      else if (const auto* d = std::get_if<Details>(&b))
        blocks.push_back({{"type", "details"}, {"summary", d->summary}, {"text", d->text}});
    }
    sections.push_back({{"id", s.id}, {"title", s.title}, {"blocks", blocks}});
  }
  json inputs = json::array();
  for (const auto& i : r.inputs)
    inputs.push_back(
        {{"role", i.role}, {"path", i.path}, {"sha256", i.sha256}, {"content", i.content}});
  json data = nullptr;
  if (!r.data_json.empty()) data = json::parse(r.data_json);
  return {{"schema_version", 1},
          {"kind", r.kind},
          {"title", r.title},
          {"subtitle", r.subtitle},
          {"tool_version", r.tool_version},
          {"command", r.command},
          {"verdict", verdict},
          {"notices", notices},
          {"sections", sections},
          {"inputs", inputs},
          {"primary_table", r.primary_table},
          {"data", data}};
}

std::string write_json(const Report& r) {
  return write_json_text(to_json(r), 2) + "\n";  // refuses NaN/inf (a bug upstream)
}

Format parse_format(std::string_view text) {
  if (text == "html") return Format::Html;
  if (text == "md" || text == "markdown") return Format::Markdown;
  if (text == "csv") return Format::Csv;
  if (text == "json") return Format::Json;
  throw InputError("", "--format", "\"" + std::string(text) + "\"", "one of html, md, csv, json");
}

Format format_for_path(std::string_view path) {
  auto ends = [&](std::string_view s) {
    return path.size() >= s.size() && path.substr(path.size() - s.size()) == s;
  };
  if (ends(".md") || ends(".markdown")) return Format::Markdown;
  if (ends(".csv")) return Format::Csv;
  if (ends(".json")) return Format::Json;
  return Format::Html;
}

std::string write(const Report& r, Format f) {
  switch (f) {
    case Format::Html:
      return write_html(r);
    case Format::Markdown:
      return write_markdown(r);
    case Format::Csv:
      return write_csv(r);
    case Format::Json:
      return write_json(r);
  }
  return {};
}

}  // namespace tutti::reports
