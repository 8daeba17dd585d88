// Self-contained HTML: inline CSS, the Chart.js bundle inlined, chart specs and the report's data
// as inline JSON, and a small renderer that turns the neutral chart specs into Chart.js configs.
#include <nlohmann/json.hpp>

#include "internal.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/reports/assets.hpp"
#include "tutti/reports/escape.hpp"
#include "tutti/reports/writers.hpp"

namespace tutti::reports {

nlohmann::json chart_json(const Chart& c);  // json_writer.cpp

namespace {

constexpr const char* kCss = R"css(
:root{--fg:#1d2430;--muted:#5b6573;--line:#d8dde5;--bg:#ffffff;--soft:#f5f7fa;--accent:#1f6feb;
--good:#1a7f37;--good-bg:#e9f6ec;--warn:#9a6700;--warn-bg:#fff6dd;--err:#b42318;--err-bg:#fdecea;--info-bg:#eef4ff}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:28px 28px 60px}
header h1{font-size:26px;margin:0 0 4px}
header .sub{color:var(--muted);margin:0 0 6px}
header .meta{color:var(--muted);font-size:13px;margin:0}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--soft);padding:8px 10px;border-radius:6px}
table.data td{overflow-wrap:break-word}table.data td.name{min-width:14em}
h2{font-size:20px;margin:36px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:16px;margin:22px 0 8px}
nav.toc{margin:18px 0 0;font-size:13px;color:var(--muted)}
nav.toc a{color:var(--accent);text-decoration:none;margin-right:14px}
.verdict{display:grid;grid-template-columns:repeat(auto-fit,minmax(230px,1fr));gap:12px;margin:20px 0 6px}
.card{border:1px solid var(--line);border-radius:10px;padding:12px 14px;background:var(--soft)}
.card .crit{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.card .win{font-size:19px;font-weight:650;margin:2px 0}
.card .det{font-size:13px;color:var(--fg);overflow-wrap:anywhere}
.callout{border-radius:8px;padding:10px 14px;margin:12px 0;border-left:4px solid var(--accent);background:var(--info-bg)}
.callout.good{border-color:var(--good);background:var(--good-bg)}
.callout.warning{border-color:var(--warn);background:var(--warn-bg)}
.callout.error{border-color:var(--err);background:var(--err-bg)}
.callout b{margin-right:6px}
.table-wrap{overflow-x:auto;margin:8px 0 4px}
table.data{border-collapse:collapse;width:100%;font-size:13.5px}
table.data caption{caption-side:top;text-align:left;font-weight:600;padding:0 0 6px}
table.data th,table.data td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
table.data th,table.data td.num,table.data td.nowrap{white-space:nowrap}
table.data th{background:var(--soft);font-weight:600}
table.data th[title]{cursor:help;text-decoration:underline dotted var(--muted)}
table.data td.num,table.data th.num{text-align:right;font-variant-numeric:tabular-nums}
table.data td[title]{cursor:help}
table.data td.best{font-weight:700;color:var(--good)}
table.data tr:hover td{background:#fafbfd}
.note{color:var(--muted);font-size:13px;margin:4px 0 10px}
figure.chart{margin:14px 0 18px;border:1px solid var(--line);border-radius:10px;padding:12px 14px 8px}
figure.chart figcaption{font-weight:600;margin-bottom:6px}
.canvas-box{position:relative;height:340px;width:100%}
details{margin:8px 0;border:1px solid var(--line);border-radius:8px;padding:6px 12px;background:var(--soft)}
details summary{cursor:pointer;font-size:13.5px}
details pre{white-space:pre-wrap;word-break:break-word;max-height:420px;overflow:auto;margin:8px 0}
footer{margin-top:40px;color:var(--muted);font-size:12px}
@media print{.canvas-box{height:280px}details{display:none}}
)css";

// Turns the neutral chart specs (see chart_json) into Chart.js configurations. Units are formatted
// like format.cpp does, for axis ticks and tooltips; point tooltips use the builder's own lines.
constexpr const char* kRenderer = R"js(
(function () {
  'use strict';
  var specs = JSON.parse(document.getElementById('tutti-charts').textContent);
  var palette = ['#1f6feb', '#e8590c', '#2f9e44', '#9c36b5', '#d6336c', '#0c8599', '#f59f00', '#495057', '#5c940d', '#862e9c'];
  function sig(v) {
    if (!isFinite(v)) return 'n/a';
    if (v === 0) return '0';
    var a = Math.abs(v);
    if (a < 1e-3 || a >= 1e6) return v.toExponential(2);
    var mag = Math.floor(Math.log10(a));
    return v.toFixed(Math.max(0, 2 - mag));
  }
  function pre(v, u) {
    var ps = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (var i = 0; i < ps.length; i++) if (Math.abs(v) >= ps[i][0]) return sig(v / ps[i][0]) + ' ' + ps[i][1] + u;
    return sig(v) + ' ' + u;
  }
  function fmt(v, unit) {
    if (v === null || v === undefined || !isFinite(v)) return 'n/a';
    var a = Math.abs(v);
    switch (unit) {
      case 'seconds':
        if (a === 0) return '0 s';
        if (a < 1e-6) return sig(v * 1e9) + ' ns';
        if (a < 1e-3) return sig(v * 1e6) + ' \u00b5s';
        if (a < 1) return sig(v * 1e3) + ' ms';
        if (a < 120) return sig(v) + ' s';
        if (a < 7200) return sig(v / 60) + ' min';
        if (a < 172800) return sig(v / 3600) + ' h';
        return sig(v / 86400) + ' d';
      case 'usd':
        if (a >= 1e9) return '$' + sig(v / 1e9) + 'B';
        if (a >= 1e6) return '$' + sig(v / 1e6) + 'M';
        if (a >= 1e3) return '$' + sig(v / 1e3) + 'k';
        return '$' + sig(v);
      case 'watts': return pre(v, 'W');
      case 'joules': return Math.abs(v / 3600) >= 1e3 ? pre(v / 3600, 'Wh') : pre(v, 'J');
      case 'bytes': return pre(v, 'B');
      case 'bytes_per_second': return pre(v * 8, 'b/s');
      case 'fraction': return sig(v * 100) + '%';
      case 'percent': return sig(v) + '%';
      default: return sig(v);
    }
  }
  function viridis(t) {
    var s = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
    t = Math.min(1, Math.max(0, isFinite(t) ? t : 0.5)) * (s.length - 1);
    var i = Math.min(s.length - 2, Math.floor(t)), f = t - i, c = [0, 1, 2].map(function (k) {
      return Math.round(s[i][k] + (s[i + 1][k] - s[i][k]) * f);
    });
    return 'rgba(' + c[0] + ',' + c[1] + ',' + c[2] + ',0.78)';
  }
  // Plot in a display unit picked from the largest value, so that ticks fall on round numbers
  // ("0, 5, 10, 15 d" rather than "2.31 d, 4.63 d").
  function scaleFor(unit, values) {
    var m = 0;
    values.forEach(function (v) { if (v !== null && isFinite(v)) m = Math.max(m, Math.abs(v)); });
    function pick(list) { for (var i = 0; i < list.length; i++) if (m >= list[i][0] * (list[i][2] || 1)) return { f: list[i][0], s: list[i][1] }; return { f: 1, s: '' }; }
    switch (unit) {
      case 'seconds': return pick([[86400, ' d', 2], [3600, ' h', 2], [60, ' min', 2], [1, ' s'], [1e-3, ' ms'], [1e-6, ' \u00b5s'], [1e-9, ' ns']]);
      case 'usd': var u = pick([[1e9, 'B'], [1e6, 'M'], [1e3, 'k']]); return { f: u.f, s: u.s, p: '$' };
      case 'watts': return pick([[1e9, ' GW'], [1e6, ' MW'], [1e3, ' kW'], [1, ' W']]);
      case 'joules': return pick([[3.6e12, ' GWh'], [3.6e9, ' MWh'], [3.6e6, ' kWh'], [1, ' J']]);
      case 'bytes': return pick([[1099511627776, ' TiB'], [1073741824, ' GiB'], [1048576, ' MiB'], [1024, ' KiB'], [1, ' B']]);
      case 'bytes_per_second': return { f: 1.25e8, s: ' Gb/s' };
      case 'fraction': return { f: 0.01, s: '%' };
      case 'percent': return { f: 1, s: '%' };
      default: return { f: 1, s: '' };
    }
  }
  function scaled(v, sc) { return v === null || !isFinite(v) ? null : v / sc.f; }
  function axis(label, unit, sc, stacked) {
    return { stacked: !!stacked, beginAtZero: true,
             title: { display: !!label, text: label + (sc.s ? ' (' + (sc.p || '') + sc.s.trim() + ')' : '') },
             ticks: { callback: function (v) { return (sc.p || '') + (+v.toPrecision(6)) + sc.s; } } };
  }
  function barConfig(s) {
    var stacked = s.kind === 'stacked_bar';
    var all = [];
    s.series.forEach(function (se) {
      se.values.forEach(function (v, i) { all.push(stacked ? s.series.reduce(function (a, x) { return a + (isFinite(x.values[i]) ? x.values[i] : 0); }, 0) : v); });
    });
    var sc = scaleFor(s.y_unit, all);
    var datasets = s.series.map(function (se, i) {
      // One series over architectures: one colour per architecture, as in the other charts.
      var c = s.series.length === 1 && s.kind !== 'line'
        ? s.categories.map(function (_, k) { return palette[k % palette.length]; }) : palette[i % palette.length];
      // Lines: each series its own dash and marker as well as colour, so a series that lies on
      // another (two fabrics equally insensitive to oversubscription) stays visible.
      var dashes = [[], [6, 4], [2, 3], [10, 3, 2, 3]], marks = ['circle', 'rectRot', 'triangle', 'rect', 'star'];
      return { label: se.name, data: se.values.map(function (v) { return scaled(v, sc); }), backgroundColor: c, borderColor: c,
               fill: false, tension: 0, pointRadius: s.kind === 'line' ? 4 + 2 * (i % 3) : 4,
               pointStyle: s.kind === 'line' ? marks[i % marks.length] : 'circle',
               borderDash: s.kind === 'line' ? dashes[i % dashes.length] : [],
               borderWidth: s.kind === 'line' ? 2 : 0 };
    });
    var valueAxis = axis(s.y_label, s.y_unit, sc, stacked);
    // A sweep is read for its changes: let the value axis fit the data rather than start at zero.
    if (s.kind === 'line') valueAxis.beginAtZero = false;
    var catAxis = { stacked: stacked, title: { display: !!s.x_label, text: s.x_label } };
    var scales = s.horizontal ? { x: valueAxis, y: catAxis } : { x: catAxis, y: valueAxis };
    return {
      type: s.kind === 'line' ? 'line' : 'bar',
      data: { labels: s.categories, datasets: datasets },
      options: {
        indexAxis: s.horizontal ? 'y' : 'x', animation: false, responsive: true, maintainAspectRatio: false,
        interaction: { mode: 'nearest', intersect: false },
        plugins: { legend: { display: s.series.length > 1 || stacked },
          tooltip: { callbacks: { label: function (ctx) {
            var v = s.horizontal ? ctx.parsed.x : ctx.parsed.y;
            return ctx.dataset.label + ': ' + fmt(v * sc.f, s.y_unit);
          } } } },
        scales: scales
      }
    };
  }
  function bubbleConfig(s) {
    var xs = [], ys = [];
    s.point_series.forEach(function (ps) { ps.points.forEach(function (p) { xs.push(p.x); ys.push(p.y); }); });
    var sx = scaleFor(s.x_unit, xs), sy = scaleFor(s.y_unit, ys);
    var datasets = s.point_series.map(function (ps, i) {
      return {
        label: ps.name, showLine: !!ps.line, borderColor: ps.highlight ? '#d6336c' : '#5b6573',
        borderWidth: ps.highlight ? 3 : 1, order: ps.highlight ? 0 : 1, type: ps.line ? 'line' : 'bubble',
        pointStyle: ps.highlight ? 'star' : 'circle', fill: false, tension: 0,
        data: ps.points.map(function (p) { return { x: scaled(p.x, sx), y: scaled(p.y, sy), r: ps.line ? 0 : 4 + 14 * p.size, _p: p }; }),
        backgroundColor: ps.points.map(function (p) { return ps.highlight ? 'rgba(214,51,108,0.85)' : viridis(p.color); }),
        pointRadius: ps.line ? 0 : undefined, pointHitRadius: ps.line ? 0 : undefined
      };
    });
    // Each point's tag ("#3", the row of its table) drawn beside it, so a printed chart names its points.
    var tags = { id: 'tuttiTags', afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      ctx.save();
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillStyle = '#1f2630';
      ctx.textBaseline = 'middle';
      chart.data.datasets.forEach(function (ds, i) {
        if (s.point_series[i].line) return;
        chart.getDatasetMeta(i).data.forEach(function (el, j) {
          var p = ds.data[j]._p;
          if (p.tag) ctx.fillText(p.tag, el.x + (ds.data[j].r || 4) + 3, el.y);
        });
      });
      ctx.restore();
    } };
    return {
      type: 'bubble',
      plugins: [tags],
      data: { datasets: datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { legend: { display: true, labels: {
            filter: function (item) { return !s.point_series[item.datasetIndex].line; },
            generateLabels: function (chart) {
              return Chart.defaults.plugins.legend.labels.generateLabels(chart).map(function (l) {
                var ps = s.point_series[l.datasetIndex];
                if (ps && !ps.highlight && !ps.line) { l.fillStyle = viridis(0.5); l.strokeStyle = '#5b6573'; }
                return l;
              });
            } } },
          tooltip: { filter: function (item) { return !s.point_series[item.datasetIndex].line; }, callbacks: {
            title: function (items) { return items.length ? items[0].raw._p.label : ''; },
            label: function (ctx) {
              var p = ctx.raw._p;
              return [s.x_label + ': ' + fmt(p.x, s.x_unit), s.y_label + ': ' + fmt(p.y, s.y_unit)].concat(p.details);
            } } } },
        scales: { x: Object.assign(axis(s.x_label, s.x_unit, sx), { beginAtZero: false }),
                  y: Object.assign(axis(s.y_label, s.y_unit, sy), { beginAtZero: false }) }
      }
    };
  }
  window.tuttiCharts = [];
  specs.forEach(function (s) {
    var el = document.getElementById('chart-' + s.id);
    if (!el) return;
    var cfg = s.kind === 'bubble' ? bubbleConfig(s) : barConfig(s);
    window.tuttiCharts.push(new Chart(el, cfg));
  });
  document.documentElement.setAttribute('data-charts-rendered', String(window.tuttiCharts.length));
})();
)js";

// JSON inside <script>: '<' escaped so that no "</script>" or "<!--" can end or confuse the block.
std::string script_json(const nlohmann::json& j) {
  std::string s = write_json_text(j, -1);  // refuses NaN/inf (a bug upstream)
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    if (c == '<')
      o += "\\u003c";
    else
      o += c;
  }
  return o;
}

const char* level_class(Callout::Level l) {
  return detail::level_name(l);
}

void callout(std::string& o, const Callout& c) {
  o += "<div class=\"callout " + std::string(level_class(c.level)) + "\" role=\"note\">";
  if (!c.title.empty()) o += "<b>" + html_escape(c.title) + "</b>";
  o += html_escape(c.text) + "</div>\n";
}

void table(std::string& o, const Table& t) {
  o += "<div class=\"table-wrap\"><table class=\"data\" id=\"table-" + html_escape(t.id) + "\">";
  if (!t.title.empty()) o += "<caption>" + html_escape(t.title) + "</caption>";
  o += "<thead><tr>";
  for (const auto& c : t.columns) {
    o += "<th data-key=\"" + html_escape(c.key) + "\"";
    if (c.unit != Unit::Text) o += " class=\"num\"";
    if (!c.help.empty()) o += " title=\"" + html_escape(c.help) + "\"";
    o += ">" + html_escape(c.label) + "</th>";
  }
  o += "</tr></thead><tbody>\n";
  // The first text column names the row (a configuration, a cluster): it keeps a readable width
  // instead of being squeezed by the numeric columns beside it.
  std::size_t name_col = t.columns.size();
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].unit == Unit::Text && t.columns[i].key != "layout" &&
        t.columns[i].key != "point") {
      name_col = i;
      break;
    }
  for (const auto& row : t.rows) {
    o += "<tr>";
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      const Column& col = t.columns[i];
      const Cell c = i < row.size() ? row[i] : Cell::none();
      // A layout ("tp4 pp4 dp32 cp2 vp4") stays on one line; a wide table scrolls in its wrapper.
      std::string cls = col.unit != Unit::Text ? "num"
                        : col.key == "layout"  ? "nowrap"
                        : i == name_col        ? "name"
                                               : "";
      if (c.emphasis) cls += cls.empty() ? "best" : " best";
      o += "<td";
      if (!cls.empty()) o += " class=\"" + cls + "\"";
      if (c.kind == Cell::Kind::Number) o += " data-value=\"" + format_exact(c.number) + "\"";
      std::string hint = c.hint;
      if (c.kind == Cell::Kind::Number && col.unit != Unit::Count && col.unit != Unit::Text) {
        // Hover shows the exact SI value next to any remark.
        std::string exact =
            format_exact(c.number) +
            (unit_suffix(col.unit)[0] ? std::string(" ") + unit_suffix(col.unit) : "");
        hint = hint.empty() ? exact : hint + " (" + exact + ")";
      }
      if (!hint.empty()) o += " title=\"" + html_escape(hint) + "\"";
      o += ">" + html_escape(detail::cell_text(c, col)) + "</td>";
    }
    o += "</tr>\n";
  }
  o += "</tbody></table></div>\n";
  if (!t.caption.empty()) o += "<p class=\"note\">" + html_escape(t.caption) + "</p>\n";
}

void chart(std::string& o, const Chart& c, nlohmann::json& specs) {
  if (!c.has_data()) {
    callout(o, Callout{Callout::Level::Warning, c.title + ":", "no data to draw."});
    return;
  }
  specs.push_back(chart_json(c));
  o += "<figure class=\"chart\" id=\"figure-" + html_escape(c.id) + "\"><figcaption>" +
       html_escape(c.title) + "</figcaption><div class=\"canvas-box\"><canvas id=\"chart-" +
       html_escape(c.id) + "\" role=\"img\" aria-label=\"" + html_escape(c.title) +
       "\"></canvas></div>";
  if (!c.caption.empty()) o += "<p class=\"note\">" + html_escape(c.caption) + "</p>";
  o += "</figure>\n";
}

}  // namespace

std::string write_html(const Report& r) {
  nlohmann::json specs = nlohmann::json::array();
  std::string body;
  for (const auto& s : r.sections) {
    body += "<section id=\"" + html_escape(s.id) + "\"><h2>" + html_escape(s.title) + "</h2>\n";
    for (const auto& b : s.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&b))
        body += "<p>" + html_escape(p->text) + "</p>\n";
      else if (const auto* c = std::get_if<Callout>(&b))
        callout(body, *c);
      else if (const auto* t = std::get_if<Table>(&b))
        table(body, *t);
      else if (const auto* ch = std::get_if<Chart>(&b))
        chart(body, *ch, specs);
      else if (const auto* d = std::get_if<Details>(&b))
        body += "<details><summary>" + html_escape(d->summary) + "</summary><pre>" +
                html_escape(d->text) + "</pre></details>\n";
    }
    body += "</section>\n";
  }
  if (!specs.empty() && chart_library_js().find("</script") != std::string_view::npos)
    throw InternalError("the embedded charting library contains \"</script\"");
  if (!specs.empty() && !has_chart_library())
    throw InputError(
        "this tutti was built without the charting library (reports/assets/node_modules/chart.js): "
        "run scripts/setup.sh, rebuild, or choose --format md|csv|json");

  std::string o;
  o.reserve(body.size() + chart_library_js().size() + 32768);
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  o += "<meta name=\"generator\" content=\"" + html_escape(r.tool_version) + "\">\n";
  o += "<title>" + html_escape(r.title) + "</title>\n<style>" + std::string(kCss) +
       "</style>\n</head>\n<body>\n<main>\n";
  o += "<header><h1>" + html_escape(r.title) + "</h1>";
  if (!r.subtitle.empty()) o += "<p class=\"sub\">" + html_escape(r.subtitle) + "</p>";
  o += "<p class=\"meta\">Generated by " + html_escape(r.tool_version);
  if (!specs.empty())
    o += " &middot; charts drawn by " + html_escape(std::string(chart_library_version())) +
         " (inlined, works offline)";
  o += "</p>";
  o += "<nav class=\"toc\">";
  for (const auto& s : r.sections)
    o += "<a href=\"#" + html_escape(s.id) + "\">" + html_escape(s.title) + "</a>";
  if (!r.inputs.empty() || !r.command.empty()) o += "<a href=\"#inputs\">Inputs</a>";
  o += "</nav></header>\n";
  if (!r.verdict.empty()) {
    o += "<section id=\"verdict\" aria-label=\"Verdict\"><div class=\"verdict\">\n";
    for (const auto& v : r.verdict) {
      o += "<div class=\"card\"><div class=\"crit\">" + html_escape(v.criterion) +
           "</div><div class=\"win\">" + html_escape(v.winner.empty() ? "—" : v.winner) +
           "</div><div class=\"det\">" + html_escape(v.detail) + "</div></div>\n";
    }
    o += "</div></section>\n";
  }
  for (const auto& n : r.notices) callout(o, n);
  o += body;
  if (!r.inputs.empty() || !r.command.empty()) {
    o += "<section id=\"inputs\"><h2>Inputs</h2>\n";
    if (!r.command.empty())
      o += "<p>Reproduce this report with:</p><pre><code>" + html_escape(r.command) +
           "</code></pre>\n";
    for (const auto& i : r.inputs)
      o += "<details><summary>" + html_escape(i.role) + ": <code>" + html_escape(i.path) +
           "</code> &middot; sha256 <code>" + html_escape(i.sha256) + "</code></summary><pre>" +
           html_escape(i.content) + "</pre></details>\n";
    o += "</section>\n";
  }
  o += "<footer>" + html_escape(r.tool_version) +
       ". The report's data is embedded as JSON (script #tutti-report-data).</footer>\n</main>\n";
  // The report's JSON without the input files' text, which is already on the page verbatim.
  nlohmann::json data = to_json(r);
  for (auto& i : data["inputs"]) i.erase("content");
  o += "<script type=\"application/json\" id=\"tutti-report-data\">" + script_json(data) +
       "</script>\n";
  if (!specs.empty()) {
    o += "<script type=\"application/json\" id=\"tutti-charts\">" + script_json(specs) +
         "</script>\n";
    o += "<script>\n" + std::string(chart_library_js()) + "\n</script>\n";
    o += "<script>" + std::string(kRenderer) + "</script>\n";
  }
  o += "</body>\n</html>\n";
  return o;
}

}  // namespace tutti::reports
