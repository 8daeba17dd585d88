// tutti topo: Describe a cluster: switches, bisection, bill of materials; export SimGrid platforms.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "common.hpp"
#include "tutti/core/units.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"
#include "tutti/topologies/simgrid_export.hpp"

namespace tutti::cli {

namespace {

struct TopoOptions {
  std::string cluster;
  std::string export_format;  ///< "" = describe; exporters (e.g. "simgrid") are dispatched below.
};

std::string money(double usd) { return fmt::format("${:.0f}", usd); }

std::string table(const Cluster& c) {
  std::string s;
  auto row = [&](const std::string& k, const std::string& v) { s += fmt::format("  {:<26} {}\n", k, v); };
  s += fmt::format("{} ({})\n", c.name, c.file);
  row("GPUs", fmt::format("{} x {} ({} nodes of {} x {})", c.gpus(), c.gpu.id, c.nodes, c.gpus_per_node, c.node.id));
  row("fabric", c.facts.description);
  row("transport", fmt::format("{} (efficiency {}, +{} per hop)", c.transport.kind, c.transport.efficiency,
                               format_quantity(c.transport.per_hop_latency_s, Dim::Time)));
  for (const auto& g : c.facts.switches)
    row(fmt::format("switches: {}", g.role),
        fmt::format("{} x {} ({} ports used of {})", g.count, g.switch_id, g.ports_used,
                    static_cast<long long>(g.count) * g.radix));
  for (const auto& cg : c.facts.cables) row(fmt::format("cables: {}", to_string(cg.tier)), std::to_string(cg.count));
  row("transceivers", std::to_string(c.bom.transceivers));
  row("bisection bandwidth", fmt::format("{} ({} per GPU)", format_quantity(c.facts.bisection_Bps, Dim::Bandwidth),
                                         format_quantity(c.gpus() ? c.facts.bisection_Bps / c.gpus() : 0.0,
                                                         Dim::Bandwidth)));
  row("diameter", fmt::format("{} switch hops, {} links GPU to GPU", c.facts.diameter_switch_hops,
                              c.facts.diameter_links));
  row("racks", fmt::format("{} ({} nodes per rack, facility {})", c.racks, c.nodes_per_rack, c.facility.id));
  s += "\n  bill of materials\n";
  s += fmt::format("    {:<12} {:<22} {:<28} {:>8} {:>12} {:>14} {:>10}\n", "category", "role", "id", "count",
                   "unit $", "total $", "power kW");
  for (const auto& l : c.bom.lines)
    s += fmt::format("    {:<12} {:<22} {:<28} {:>8} {:>12} {:>14} {:>10.1f}{}\n", l.category, l.role, l.id, l.count,
                     money(l.unit_price_usd), money(l.price_usd()), l.power_W() / 1e3, l.estimate ? "  (est.)" : "");
  s += "\n";
  row("network capex", money(c.bom.network_capex_usd));
  row("network power", format_quantity(c.bom.network_power_W, Dim::Power));
  row("compute capex", money(c.bom.compute_capex_usd));
  row("total capex", money(c.bom.total_capex_usd()));
  return s;
}

int run_topo(const Globals& g, const TopoOptions& o) {
  Cluster c = load_cluster(o.cluster, g.sets);
  if (o.export_format == "simgrid") {  // routes hashed as the engines hash flows
    std::ostringstream xml;
    write_simgrid_platform(c, xml, [&g](int s, int d) { return flow_hash(g.seed, s, d); });
    emit(g, xml.str());
    if (!g.output.empty()) note(g, "SimGrid platform (version 4.1) written to " + g.output);
    return kOk;
  }
  if (g.json) {
    emit_json(g, to_json(c));
  } else {
    emit(g, table(c));
  }
  return kOk;
}

}  // namespace

void setup_topo(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("topo", "Describe a cluster: switches, bisection, bill of materials; export SimGrid platforms");
  auto o = std::make_shared<TopoOptions>();
  sub->add_option("cluster", o->cluster, "Cluster description (topologies/*.json)")->required();
  sub->add_option("--export", o->export_format, "Write the cluster in another format instead (simgrid)")
      ->check(CLI::IsMember({"simgrid"}));
  sub->callback([&g, o] { g.run = [&g, o] { return run_topo(g, *o); }; });
}

}  // namespace tutti::cli
