// tutti catalog: List and show hardware catalog entries.
#include "tutti/topologies/catalog.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common.hpp"
#include "tutti/core/error.hpp"
#include "tutti/sim/calibration.hpp"

namespace tutti::cli {

namespace {

struct CatalogOptions {
  std::vector<std::string> args;  ///< [list [KIND]] | show ID
};

int run_list(const Globals& g, const std::string& kind) {
  const Catalog& cat = Catalog::builtin();
  std::vector<std::string> kinds = kind.empty() ? Catalog::kinds() : std::vector<std::string>{kind};
  nlohmann::json j = nlohmann::json::object();
  std::string text;
  for (const auto& k : kinds) {
    nlohmann::json arr = nlohmann::json::array();
    text += fmt::format("{}:\n", k);
    for (const auto& id : cat.ids(k)) {
      auto [knd, entry] = cat.find(id);
      std::string name = entry->value("name", "");
      bool est = entry->contains("estimates") && !entry->at("estimates").empty();
      arr.push_back({{"id", id},
                     {"name", name},
                     {"estimates", entry->value("estimates", nlohmann::json::array())}});
      text += fmt::format("  {:<24} {}{}\n", id, name, est ? "" : "");
    }
    j[k] = arr;
  }
  if (g.json)
    emit_json(g, j);
  else
    emit(g, text);
  return kOk;
}

int run_show(const Globals& g, const std::string& id) {
  const Catalog& cat = Catalog::builtin();
  auto [kind, entry] = cat.find(id);
  nlohmann::json j = *entry;
  j["kind"] = kind;
  j["si"] = cat.si_json(kind, id);
  std::vector<CalibrationDefault> defaults;
  if (kind == "gpu") {
    defaults = calibration_defaults(default_calibration(), cat.gpu(id));
    j["calibration_defaults"] = calibration_defaults_json(defaults);
  }
  if (g.json) {
    emit_json(g, j);
    return kOk;
  }
  std::string text = fmt::format("{} ({}): {}\n", id, kind, entry->value("name", ""));
  for (auto it = entry->begin(); it != entry->end(); ++it) {
    if (it.key() == "id" || it.key() == "name") continue;
    text += fmt::format("  {:<20} {}\n", it.key(),
                        it->is_string() ? it->get<std::string>() : it->dump());
  }
  if (kind == "gpu") {
    text +=
        "  calibration defaults (built-in profile; no microbenchmark of this GPU behind them):\n";
    if (defaults.empty()) text += "    none\n";
    for (const auto& d : defaults)
      text += fmt::format("    {:<44} {:<8g} {} ({})\n", d.key, d.value, d.what, d.basis);
  }
  emit(g, text);
  return kOk;
}

int run_catalog(const Globals& g, const CatalogOptions& o) {
  const auto& a = o.args;
  if (a.empty()) return run_list(g, "");
  if (a[0] == "list" && a.size() <= 2) return run_list(g, a.size() == 2 ? a[1] : "");
  if (a[0] == "show" && a.size() == 2) return run_show(g, a[1]);
  throw InputError("", "tutti catalog", fmt::format("\"{}\"", fmt::join(a, " ")),
                   "'list [KIND]' or 'show ID' (KIND: gpu, node, nic, switch, optic, storage, "
                   "facility, transport)");
}

}  // namespace

void setup_catalog(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("catalog", "List and show hardware catalog entries");
  auto o = std::make_shared<CatalogOptions>();
  sub->add_option("args", o->args, "list [KIND] | show ID");
  sub->footer("Examples:\n  tutti catalog list gpu\n  tutti catalog show h100-sxm-80gb --json");
  sub->callback([&g, o] { g.run = [&g, o] { return run_catalog(g, *o); }; });
}

}  // namespace tutti::cli
