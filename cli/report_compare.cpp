// tutti report compare: the same workload on each cluster, simulated with the real engine, plus
// an oversubscription sweep of each fabric that has one (the cluster re-loaded with
// `--set fabric.oversubscription=R`, exactly as a user would).
#include "report_compare.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "simulate.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/progress.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/reports/compare.hpp"
#include "tutti/reports/format.hpp"
#include "tutti/reports/sha256.hpp"
#include "tutti/topologies/cluster.hpp"
#include "tutti/topologies/failures.hpp"

namespace tutti::cli {

namespace {
using nlohmann::json;

json simulate_doc(const Workload& w, const Cluster& c, const Layout& l, const CompareOptions& o,
                  const Globals& g) {
  SimOptions so;
  so.engine = o.engine;
  so.seed = g.seed;
  json j = to_json(run_simulation(w, c, l, so));
  j.erase("wall_s");  // the engine's own run time: not reproducible, not a result
  return j;
}

bool has_oversubscription(FabricKind k) {
  return k == FabricKind::FatTree || k == FabricKind::RailOptimized || k == FabricKind::DualPlane ||
         k == FabricKind::RailOnly;
}

/// Layout for this cluster, as `tutti simulate` resolves it (simulate() checks that it fits).
Layout layout_for(const Workload& w, const Cluster& c, const CompareOptions& o) {
  try {
    return resolve_layout(w, o.parallel, c.gpus());
  } catch (const InputError& e) {
    // The GPU count came from the cluster file, not from a --gpus flag: say so.
    if (e.file() != "--gpus") throw;
    throw InputError(c.file.empty() ? c.name : c.file, "nodes", e.found() + " GPUs", e.expected());
  }
}

json sweep(const std::function<void()>& tick, const Workload& w, const std::string& path,
           const Cluster& base, const CompareOptions& o, const Globals& g) {
  json over = json::object();
  if (o.oversubscription.empty() ||
      (o.oversubscription.size() == 1 && o.oversubscription[0] == 0)) {
    over["supported"] = false;
    over["reason"] = "sweep turned off (--oversubscription 0)";
    return over;
  }
  if (!has_oversubscription(base.fabric.kind)) {
    over["supported"] = false;
    over["reason"] =
        std::string("a ") + to_string(base.fabric.kind) + " fabric has no oversubscription to vary";
    return over;
  }
  over["supported"] = true;
  json points = json::array();
  for (double ratio : o.oversubscription) {
    json p;
    p["ratio"] = ratio;
    p["label"] = reports::format_short(ratio) + ":1";
    p["baseline"] = std::fabs(ratio - base.fabric.oversubscription) < 1e-9;
    std::string set = "fabric.oversubscription=" + reports::format_exact(ratio);
    p["set"] = set;
    try {
      std::vector<std::string> sets = g.sets;
      sets.push_back(set);
      Cluster c = load_cluster(path, sets);
      if (!o.prices.empty()) apply_prices(c, load_prices(o.prices));
      p["topology"] = to_json(c);
      Layout l = layout_for(w, c, o);
      p["simulation"] = simulate_doc(w, c, l, o, g);
      p["ok"] = true;
    } catch (const InputError& e) {
      p["ok"] = false;
      p["error"] = e.what();
    }
    tick();
    points.push_back(std::move(p));
  }
  over["points"] = std::move(points);
  return over;
}

/// One --variant: "LABEL: --set KEY=VALUE --fail ITEM --fail-rate RATES" (tokens separated by
/// spaces; any of the three flags, each repeatable).
struct Variant {
  std::string label;
  std::vector<std::string> sets;
  FailureRequest fail;
};

Variant parse_variant(const std::string& text, std::uint64_t seed) {
  auto bad = [&](const std::string& why) {
    throw InputError(
        "--variant", "", "\"" + text + "\"",
        "LABEL: followed by --set KEY=VALUE, --fail link=...|switch=... or --fail-rate links=P "
        "(e.g. \"spray: --set fabric.routing=spray\"); " +
            why);
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0) bad("no label");
  Variant v;
  v.label = text.substr(0, colon);
  v.fail.seed = seed;
  std::vector<std::string> tok;
  std::size_t pos = colon + 1;
  while (pos < text.size()) {
    const std::size_t b = text.find_first_not_of(' ', pos);
    if (b == std::string::npos) break;
    const std::size_t e = std::min(text.find(' ', b), text.size());
    tok.push_back(text.substr(b, e - b));
    pos = e;
  }
  if (tok.empty()) bad("no flags");
  for (std::size_t i = 0; i < tok.size(); i += 2) {
    if (i + 1 >= tok.size()) bad("\"" + tok[i] + "\" has no value");
    if (tok[i] == "--set")
      v.sets.push_back(tok[i + 1]);
    else if (tok[i] == "--fail")
      v.fail.items.push_back(tok[i + 1]);
    else if (tok[i] == "--fail-rate")
      parse_fail_rate(tok[i + 1], v.fail);
    else
      bad("\"" + tok[i] + "\" is not one of the flags");
  }
  return v;
}

}  // namespace

int run_compare(const Globals& g, const CompareOptions& o,
                const std::function<int(const reports::Report&)>& emit) {
  for (double r : o.oversubscription)
    if (!(r == 0 || (r >= 1 && r <= 64)))
      throw InputError("", "--oversubscription", reports::format_exact(r),
                       "ratios between 1 and 64 (or 0: no sweep)");
  Workload w = load_workload(o.workload);
  json data;
  data["kind"] = "compare";
  data["engine"] = o.engine;
  data["layout"] = o.parallel.empty() ? std::string("from the workload file") : o.parallel;
  data["workload"] = {
      {"name", w.name}, {"file", o.workload}, {"tokens_to_train", tokens_to_train(w)}};
  json archs = json::array();
  int simulated = 0;
  // One simulation per cluster and per oversubscription ratio of its sweep: the progress total.
  std::vector<Variant> variants;
  for (const auto& t : o.variants) variants.push_back(parse_variant(t, g.seed));
  const std::uint64_t total = o.clusters.size() * (1 + o.oversubscription.size() + variants.size());
  std::uint64_t done = 0;
  ProgressBar bar("simulating", g.verbosity >= 0);
  const std::function<void()> tick = [&] { bar.update(++done, total); };
  for (const auto& path : o.clusters) {
    const std::uint64_t arch_end = done + 1 + o.oversubscription.size();
    Cluster c = load_cluster(path, g.sets);  // a file that does not load is the user's input error
    if (!o.prices.empty()) apply_prices(c, load_prices(o.prices));
    json a;
    a["name"] = c.name;
    a["cluster_file"] = path;
    a["description"] =
        c.description.empty() ? std::string(to_string(c.fabric.kind)) : c.description;
    a["gpus"] = c.gpus();
    a["topology"] = to_json(c);
    try {
      Layout l = layout_for(w, c, o);
      a["layout"] = to_compact_string(l);
      a["simulation"] = simulate_doc(w, c, l, o, g);
      a["ok"] = true;
      ++simulated;
    } catch (const InputError& e) {
      a["ok"] = false;
      a["error"] = e.what();
    }
    tick();
    a["oversubscription"] =
        a["ok"].get<bool>()
            ? sweep(tick, w, path, c, o, g)
            : json{{"supported", false}, {"reason", "the cluster as described did not simulate"}};
    done = arch_end;  // a sweep that did not run counts as done
    bar.update(done, total);
    archs.push_back(std::move(a));
    // Variants of this cluster (routing modes, failure scenarios), side by side with it.
    for (const Variant& v : variants) {
      std::vector<std::string> sets = g.sets;
      sets.insert(sets.end(), v.sets.begin(), v.sets.end());
      json b;
      try {
        Cluster cv = load_cluster(path, sets);
        if (!o.prices.empty()) apply_prices(cv, load_prices(o.prices));
        apply_failures(cv, v.fail);
        b["name"] = cv.name + " [" + v.label + "]";
        b["cluster_file"] = path;
        b["variant"] = {{"label", v.label},
                        {"sets", v.sets},
                        {"failures", v.fail.empty() ? "" : cv.failures.request}};
        b["description"] =
            (cv.description.empty() ? std::string(to_string(cv.fabric.kind)) : cv.description) +
            " [" + v.label + "]";
        b["gpus"] = cv.gpus();
        b["topology"] = to_json(cv);
        Layout l = layout_for(w, cv, o);
        b["layout"] = to_compact_string(l);
        b["simulation"] = simulate_doc(w, cv, l, o, g);
        b["ok"] = true;
        ++simulated;
      } catch (const InputError& e) {
        if (!b.contains("name")) b["name"] = c.name + " [" + v.label + "]";
        b["cluster_file"] = path;
        b["description"] = std::string("[") + v.label + "]";
        if (!b.contains("gpus")) b["gpus"] = c.gpus();
        if (!b.contains("topology")) b["topology"] = to_json(c);
        b["ok"] = false;
        b["error"] = e.what();
      }
      b["oversubscription"] = {{"supported", false},
                               {"reason", "a variant: the sweep runs on the cluster as described"}};
      tick();
      archs.push_back(std::move(b));
    }
  }
  bar.finish();
  data["architectures"] = std::move(archs);

  reports::Report r = reports::build_compare_report(data);
  r.tool_version = std::string("tutti ") + TUTTI_VERSION;
  std::string cmd = "tutti";
  for (const auto& s : g.sets) cmd += " --set " + shell_quote(s);
  cmd += " report compare --workload " + shell_quote(o.workload);
  if (!o.prices.empty()) cmd += " --prices " + shell_quote(o.prices);
  for (const auto& c : o.clusters) cmd += " --cluster " + shell_quote(c);
  if (!o.parallel.empty()) cmd += " --parallel " + shell_quote(o.parallel);
  for (const auto& v : o.variants) cmd += " --variant " + shell_quote(v);
  if (o.oversubscription != std::vector<double>{1, 2, 4}) {
    cmd += " --oversubscription";
    for (double x : o.oversubscription) cmd += " " + reports::format_exact(x);
  }
  if (o.engine != "native") cmd += " --engine " + o.engine;
  if (g.seed != 1) cmd += " --seed " + std::to_string(g.seed);
  r.command = cmd;
  std::string text = read_text(o.workload);
  r.inputs.push_back({"workload", o.workload, reports::sha256_hex(text), text});
  for (const auto& c : o.clusters) {
    std::string t = read_text(c);
    r.inputs.push_back({"cluster", c, reports::sha256_hex(t), t});
  }
  int rc = emit(r);
  return rc == kOk && simulated == 0 ? kNo : rc;
}

}  // namespace tutti::cli
