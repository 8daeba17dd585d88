// Report model and writers: formatting, digests, CSV/Markdown/HTML/JSON, and the builders'
// handling of one architecture, failed simulations and plans where nothing fits.
#include "tutti/reports/writers.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/reports/assets.hpp"
#include "tutti/reports/compare.hpp"
#include "tutti/reports/format.hpp"
#include "tutti/reports/plan_report.hpp"
#include "tutti/reports/sha256.hpp"

using namespace tutti::reports;
using nlohmann::json;

namespace {
json fixture(const std::string& name) {
  std::ifstream in(tutti::testing::src("tests/reports/fixtures/" + name));
  REQUIRE(in);
  return json::parse(in);
}

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

std::size_t col(const Table& t, const std::string& key) {
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == key) return i;
  FAIL("no column " << key);
  return 0;
}

bool any_notice_contains(const Report& r, const std::string& text) {
  for (const auto& n : r.notices)
    if ((n.title + n.text).find(text) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("sha256 matches FIPS 180-4 test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Padding edge: 55, 56 and 64 bytes.
  CHECK(sha256_hex(std::string(55, 'x')).size() == 64);
  CHECK(sha256_hex(std::string(56, 'x')) != sha256_hex(std::string(57, 'x')));
}

TEST_CASE("human formatting of SI values") {
  CHECK(format_value(0.8123, Unit::Seconds) == "812 ms");
  CHECK(format_value(41.5 * 86400, Unit::Seconds) == "41.5 d");
  CHECK(format_value(3.2 * 3600, Unit::Seconds) == "3.20 h");
  CHECK(format_value(1.234e6, Unit::Usd) == "$1.23M");
  CHECK(format_value(2.5, Unit::Usd) == "$2.50");
  CHECK(format_value(1.2e6, Unit::Watts) == "1.20 MW");
  CHECK(format_value(3.6e12, Unit::Joules) == "1.00 GWh");
  CHECK(format_value(80.0 * 1073741824.0, Unit::Bytes) == "80.0 GiB");
  CHECK(format_value(50e9, Unit::Bps) == "400 Gb/s");
  CHECK(format_value(0.431, Unit::Fraction) == "43.1%");
  CHECK(format_value(1024, Unit::Count) == "1,024");
  CHECK(format_value(NAN, Unit::Usd) == "n/a");
  CHECK(format_short(2.0) == "2");
  CHECK(format_short(2.5) == "2.5");
  CHECK(format_exact(0.1) == "0.1");
  CHECK(percent_diff(110, 100) == doctest::Approx(10));
}

TEST_CASE("CSV has unit-suffixed keys, raw values at full precision and RFC 4180 quoting") {
  Report r;
  r.primary_table = "t";
  Table t;
  t.id = "t";
  t.columns = {{"name", "Name", Unit::Text, ""}, {"time_s", "Time", Unit::Seconds, ""}};
  t.rows.push_back({Cell::str("a,\"b\""), Cell::num(0.1 + 0.2)});
  t.rows.push_back({Cell::str("c"), Cell::none()});
  r.sections.push_back(Section{"s", "S", {t}});
  std::string csv = write_csv(r);
  CHECK(csv == "name,time_s\n\"a,\"\"b\"\"\",0.30000000000000004\nc,\n");
  CHECK_THROWS_AS(write_csv(r, "nope"), tutti::InputError);
}

TEST_CASE("Markdown carries the same tables as the HTML") {
  Report r = build_compare_report(fixture("compare-two.json"));
  r.tool_version = "tutti test";
  std::string md = write_markdown(r);
  std::string html = has_chart_library() ? write_html(r) : std::string();
  for (const Table* t : r.tables()) {
    CHECK_MESSAGE(md.find("**" + t->title + "**") != std::string::npos, t->title);
    for (const auto& row : t->rows)
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (row[i].kind != Cell::Kind::Number) continue;
        std::string shown = format_value(row[i].number, t->columns[i].unit);
        CHECK_MESSAGE(md.find(shown) != std::string::npos, t->id << ": " << shown);
        if (!html.empty())
          CHECK_MESSAGE(html.find(">" + shown + "<") != std::string::npos, t->id << ": " << shown);
      }
  }
  // Every chart is in the Markdown as a table of its data.
  for (const Chart* c : r.charts())
    CHECK(md.find("**Chart: " + c->title + "**") != std::string::npos);
}

TEST_CASE("HTML is one self-contained, deterministic file") {
  if (!has_chart_library()) {
    MESSAGE("tutti-skip: this build has no Chart.js bundle (run scripts/setup.sh)");
    return;
  }
  Report r = build_compare_report(fixture("compare-two.json"));
  r.tool_version = "tutti test";
  r.command = "tutti report compare --workload w.json --cluster a.json --cluster b.json";
  r.inputs.push_back({"workload", "w.json", sha256_hex("{}"), "{\"x\": \"</script><b>\"}"});
  std::string html = write_html(r);
  CHECK(html == write_html(r));
  CHECK(html.find("Chart.js v4") != std::string::npos);  // the library's banner: inlined
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  // The only https:// is the library banner's project URL in a comment.
  CHECK(count(html, "https://") == count(std::string(chart_library_js()), "https://"));
  CHECK(count(html, "</script>") == 4);  // data, chart specs, library, renderer
  CHECK(html.find("&lt;/script&gt;&lt;b&gt;") != std::string::npos);  // the echoed input, escaped
  CHECK(html.find("tutti test") != std::string::npos);
  CHECK(html.find(r.command) != std::string::npos);
  CHECK(count(html, "<canvas") == r.charts().size());
  // The embedded data is the report's JSON.
  auto a = html.find("id=\"tutti-report-data\">") + 23;
  auto b = html.find("</script>", a);
  json embedded = json::parse(html.substr(a, b - a));
  json expected = to_json(r);
  for (auto& i : expected["inputs"]) i.erase("content");  // shown verbatim on the page instead
  CHECK(embedded == expected);
  CHECK(embedded.at("data") == fixture("compare-two.json"));
}

TEST_CASE("compare verdict names winners and margins") {
  Report r = build_compare_report(fixture("compare-two.json"));
  REQUIRE(r.verdict.size() == 4);
  CHECK(r.verdict[0].winner == "rail-1to1");
  // 1192092.5 s vs 1335143.6 s: (b - a) / b.
  CHECK(r.verdict[0].margin_pct == doctest::Approx((1335143.6 - 1192092.5) / 1335143.6 * 100));
  CHECK(r.verdict[0].detail.find("faster than roce-2to1") != std::string::npos);
  CHECK(r.verdict[1].winner == "roce-2to1");
  CHECK(r.verdict[1].margin_pct == doctest::Approx((1.6e6 - 1.55e6) / 1.6e6 * 100));
  CHECK(r.verdict[2].winner == "roce-2to1");
  CHECK(r.verdict[3].winner == "rail-1to1");  // network capex from the bill of materials
  // The summary table holds the simulation's numbers unchanged.
  const Table* t = r.find_table("summary");
  REQUIRE(t);
  CHECK(t->rows[0][col(*t, "iteration_time_s")].number == 2.5);
  CHECK(t->rows[1][col(*t, "time_to_train_s")].number == 1335143.6);
  CHECK(r.find_table("oversubscription") != nullptr);
}

TEST_CASE("a failed simulation is reported, not drawn") {
  Report r = build_compare_report(fixture("compare-one-failed.json"));
  CHECK(any_notice_contains(r, "Simulation failed on torus-3d"));
  CHECK(any_notice_contains(r, "does not fit"));
  CHECK(any_notice_contains(r, "Only one architecture"));
  for (const Chart* c : r.charts()) {
    CHECK(c->has_data());
    if (c->id == "network-capex") continue;  // the bill of materials needs no simulation
    for (const auto& cat : c->categories) CHECK(cat != "torus-3d");
    for (const auto& s : c->series) CHECK(s.name != "torus-3d");
  }
  // The verdict does not pretend there was a contest.
  CHECK(r.verdict[0].winner == "rail-1to1");
  CHECK(r.verdict[0].detail.find("nothing to compare") != std::string::npos);
  CHECK(std::isnan(r.verdict[0].margin_pct));
  const Table* t = r.find_table("summary");
  REQUIRE(t);
  CHECK(t->rows[1][col(*t, "status")].text == "failed");
}

TEST_CASE("every architecture failing gives no charts and says why") {
  json d = fixture("compare-one-failed.json");
  d["architectures"][0]["ok"] = false;
  d["architectures"][0]["error"] = "cluster has 64 GPUs, layout needs 256";
  Report r = build_compare_report(d);
  CHECK(r.charts().empty() == false);  // network capex is known without a simulation...
  for (const Chart* c : r.charts())
    CHECK(c->id == "network-capex");  // ...and nothing else is drawn
  CHECK(any_notice_contains(r, "No architecture could be simulated"));
  CHECK(any_notice_contains(r, "layout needs 256"));
  CHECK(r.verdict.empty());
  d["architectures"][0].erase("topology");
  d["architectures"][1].erase("topology");
  Report bare = build_compare_report(d);
  CHECK(bare.charts().empty());
  CHECK_THROWS_AS(build_compare_report(json::object()), tutti::InputError);
}

TEST_CASE("one architecture alone says there is nothing to compare") {
  json d = fixture("compare-two.json");
  d["architectures"].erase(1);
  Report r = build_compare_report(d);
  CHECK(any_notice_contains(r, "Only one architecture"));
  CHECK(any_notice_contains(r, "described alone"));
  for (const auto& v : r.verdict) CHECK(std::isnan(v.margin_pct));
}

TEST_CASE("a missing cost model is shown as missing, never estimated") {
  json d = fixture("compare-two.json");
  // No cost model: the facility's cost object holds no figures (what a run without prices writes).
  for (auto& a : d["architectures"]) a["simulation"]["facility"]["cost"] = json::object();
  Report r = build_compare_report(d);
  CHECK(r.verdict[1].winner.empty());
  CHECK(r.verdict[1].detail == "no cost model in the results");
  const Table* t = r.find_table("summary");
  REQUIRE(t);
  CHECK(t->rows[0][col(*t, "cost_per_run_usd")].kind == Cell::Kind::Empty);
}

TEST_CASE("plan report has the frontier, the recommendation and the runners-up") {
  json p = fixture("plan.json");
  Report r = build_plan_report(p);
  REQUIRE(r.charts().size() == 1);
  const Chart& c = *r.charts()[0];
  CHECK(c.kind == ChartKind::Bubble);
  std::size_t points = 0;
  for (const auto& s : c.point_series)
    if (!s.line) points += s.points.size();
  CHECK(points == p["pareto"].size());
  CHECK(r.verdict.at(0).criterion == "Recommended");
  CHECK(r.verdict.at(0).winner.find("h200") != std::string::npos);
  const Table* ru = r.find_table("runners-up");
  REQUIRE(ru);
  CHECK(ru->rows.size() == p["finalists"].size() - 1);
  const Table* pt = r.find_table("pareto");
  REQUIRE(pt);
  CHECK(pt->rows.size() == p["pareto"].size());
  std::string csv = write_csv(r);
  CHECK_MESSAGE(csv.rfind("point,configuration,gpus,layout,time_to_train_s,total_cost_usd", 0) == 0,
                csv.substr(0, 200));
}

TEST_CASE("a plan where nothing fits says so and draws nothing") {
  Report r = build_plan_report(fixture("plan-nothing-fits.json"));
  CHECK(r.charts().empty());
  CHECK(any_notice_contains(r, "Nothing fits"));
  CHECK(any_notice_contains(r, "deadline"));
  CHECK(r.find_table("nearest") != nullptr);
  CHECK_THROWS_AS(build_plan_report(json::array()), tutti::InputError);
}

TEST_CASE("JSON output round-trips through render") {
  Report r = build_plan_report(fixture("plan.json"));
  json j = to_json(r);
  CHECK(j.at("schema_version") == 1);
  CHECK(j.at("kind") == "plan");
  Report again = build_plan_report(j.at("data"));
  CHECK(to_json(again) == j);
}
