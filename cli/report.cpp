// tutti report: reports people can forward.
//   tutti report compare --workload W --cluster A --cluster B [--parallel ...] -o report.html
//   tutti report plan PLAN.json -o plan.html
//   tutti report render REPORT.json -o report.html   (re-render a --format json report)
// Format: --format html|md|csv|json, else from the -o extension, else html.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common.hpp"
#include "report_compare.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/reports/compare.hpp"
#include "tutti/reports/plan_report.hpp"
#include "tutti/reports/sha256.hpp"
#include "tutti/reports/writers.hpp"

namespace tutti::cli {

namespace {

struct ReportOptions {
  std::string format;  ///< Empty: from the -o extension.
  std::string table;   ///< CSV: which table.
  std::string file;    ///< plan / render input.
  CompareOptions compare;
};

nlohmann::json read_json(const std::string& path) {
  std::string text = read_text(path);
  return parse_json_text(text, path);  // depth, duplicate keys and number range checked
}

reports::Format pick_format(const Globals& g, const ReportOptions& o) {
  if (!o.format.empty()) return reports::parse_format(o.format);
  return g.output.empty() ? reports::Format::Html : reports::format_for_path(g.output);
}

int emit_report(const Globals& g, const ReportOptions& o, const reports::Report& r) {
  reports::Format f = pick_format(g, o);
  std::string text =
      f == reports::Format::Csv ? reports::write_csv(r, o.table) : reports::write(r, f);
  emit(g, text);
  if (!g.output.empty()) note(g, "tutti: wrote " + g.output);
  return kOk;
}

// A report built from the one input file o.file by `tutti report SUB`: stamps the tool, the
// command that re-makes it and the input (as `role`), then writes it.
int emit_file_report(const Globals& g, const ReportOptions& o, reports::Report r, const char* sub,
                     const char* role) {
  r.tool_version = std::string("tutti ") + TUTTI_VERSION;
  r.command = std::string("tutti report ") + sub + " " + shell_quote(o.file);
  std::string text = read_text(o.file);
  r.inputs.push_back({role, o.file, reports::sha256_hex(text), text});
  return emit_report(g, o, r);
}

int run_render_unchecked(const Globals& g, const ReportOptions& o);

// Reading a result document: a wrong type or a missing member anywhere is bad input naming the
// file (exit 2); reports' own errors, which cannot know the file, get its name in front.
template <class F>
int reading(const std::string& file, F body) {
  try {
    return body();
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    auto close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
    throw InputError(file, "(document)", what, "a document as tutti writes it");
  } catch (const InputError& e) {
    if (e.file().empty() && !e.key_path().empty())
      throw InputError(file, e.key_path(), e.found(), e.expected());
    throw;
  }
}

int run_plan(const Globals& g, const ReportOptions& o) {
  return reading(o.file, [&] {
    nlohmann::json plan = read_json(o.file);
    return emit_file_report(g, o, reports::build_plan_report(plan), "plan", "plan");
  });
}

int run_render(const Globals& g, const ReportOptions& o) {
  return reading(o.file, [&] { return run_render_unchecked(g, o); });
}

int run_render_unchecked(const Globals& g, const ReportOptions& o) {
  nlohmann::json doc = read_json(o.file);
  if (doc.is_object() && doc.value("kind", "") == "compare" && doc.contains("architectures")) {
    // A bare comparison document (the "data" of a compare report).
    return emit_file_report(g, o, reports::build_compare_report(doc), "render", "comparison");
  }
  if (!doc.is_object() || !doc.contains("kind") || !doc.contains("data"))
    throw InputError(o.file, "kind", doc.is_object() ? "missing" : "not an object",
                     "a report written by `tutti report ... --format json`");
  const std::string kind = doc.value("kind", "");
  reports::Report r;
  if (kind == "compare")
    r = reports::build_compare_report(doc.at("data"));
  else if (kind == "plan")
    r = reports::build_plan_report(doc.at("data"));
  else
    throw InputError(o.file, "kind", "\"" + kind + "\"", "\"compare\" or \"plan\"");
  r.tool_version = doc.value("tool_version", std::string("tutti ") + TUTTI_VERSION);
  r.command = doc.value("command", "");
  if (doc.contains("inputs") && doc.at("inputs").is_array())
    for (const auto& i : doc.at("inputs"))
      r.inputs.push_back({i.value("role", ""), i.value("path", ""), i.value("sha256", ""),
                          i.value("content", "")});
  return emit_report(g, o, r);
}

}  // namespace

void setup_report(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand(
      "report", "Write reports comparing network architectures or rendering a plan");
  sub->require_subcommand(1);
  auto opts = std::make_shared<ReportOptions>();
  auto add_common = [&](CLI::App* s) {
    s->add_option("--format", opts->format,
                  "html | md | csv | json (default: from the -o extension, else html)")
        ->check(CLI::IsMember({"html", "md", "markdown", "csv", "json"}));
    s->add_option("--table", opts->table, "CSV: id of the table to write (default: the summary)");
  };

  auto* cmp = sub->add_subcommand(
      "compare",
      "The same workload on each cluster architecture (native engine): "
      "iteration time and breakdown, exposed "
      "communication, link hot spots, time to train, network bill of "
      "materials, cost per run, sensitivity to "
      "oversubscription, and a verdict. --set KEY=VALUE applies to every cluster");
  cmp->add_option("--workload", opts->compare.workload, "Workload file (models/*.json)")
      ->required()
      ->check(CLI::ExistingFile);
  cmp->add_option("--cluster", opts->compare.clusters,
                  "Cluster file (repeat for each architecture)")
      ->required()
      ->check(CLI::ExistingFile);
  cmp->add_option("--parallel", opts->compare.parallel,
                  "Parallel layout, e.g. tp=8,pp=4,dp=8 (default: the workload's)");
  cmp->add_option("--oversubscription", opts->compare.oversubscription,
                  "Oversubscription ratios to sweep where the fabric supports it (default 1 2 4; 0 "
                  "= no sweep)")
      ->expected(1, -1);
  cmp->add_option("--prices", opts->compare.prices,
                  "Your own prices (schemas/prices.schema.json) on every cluster");
  cmp->add_option(
      "--variant", opts->compare.variants,
      "Each cluster again with other settings, side by side (repeatable): \"LABEL: --set KEY=VALUE "
      "--fail link=...|switch=... --fail-rate links=P\", e.g. \"spray: --set "
      "fabric.routing=spray\", "
      "\"spine0 down: --fail switch=spine0\"");
  cmp->add_option("--engine", opts->compare.engine, "Simulation engine (native)")
      ->check(CLI::IsMember({"native", "analytic", "simgrid"}));
  add_common(cmp);
  cmp->callback([&g, opts] {
    g.run = [&g, opts] {
      ReportOptions o = *opts;
      return run_compare(g, o.compare,
                         [&](const reports::Report& r) { return emit_report(g, o, r); });
    };
  });

  auto* pl = sub->add_subcommand(
      "plan", "Render a plan (tutti plan --json): Pareto frontier, recommendation, runners-up");
  pl->add_option("PLAN", opts->file, "The plan JSON")->required()->check(CLI::ExistingFile);
  add_common(pl);
  pl->callback([&g, opts] { g.run = [&g, opts] { return run_plan(g, *opts); }; });

  auto* rd = sub->add_subcommand("render",
                                 "Re-render a report saved with --format json (or a bare "
                                 "comparison document) in another format");
  rd->add_option("REPORT", opts->file, "A report written with --format json")
      ->required()
      ->check(CLI::ExistingFile);
  add_common(rd);
  rd->callback([&g, opts] { g.run = [&g, opts] { return run_render(g, *opts); }; });
}

}  // namespace tutti::cli
