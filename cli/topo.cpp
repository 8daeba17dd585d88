// tutti topo: Describe a cluster: switches, bisection, bill of materials; export SimGrid platforms.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/models/program.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"
#include "tutti/topologies/simgrid_export.hpp"

namespace tutti::cli {

namespace {

struct TopoOptions {
  std::string cluster;
  std::string export_format;  ///< "" = describe; exporters (e.g. "simgrid") are dispatched below.
  bool collectives = false;   ///< --collectives: the predicted nccl-tests table instead.
  std::string sizes = "8B:8GiB";  ///< --sizes MIN:MAX (nccl-tests -b/-e)
  double factor = 4;              ///< --factor (nccl-tests -f)
  std::string calibration;        ///< --calibration: profile file ("" = default)
};

// ---- tutti topo --collectives: what nccl-tests would print, predicted -----------------------

/// A GPU group of the bandwidth table.
struct CollGroup {
  std::string name, description;
  std::vector<int> gpus;
};

/// The groups of the table: one NVLink domain (a node, or an NVL72 rack), two of them (the
/// smallest group that crosses the scale-out fabric) and the whole cluster.
std::vector<CollGroup> coll_groups(const Cluster& c) {
  const int n = c.gpus(), dom = std::max(1, std::min(c.domain_gpus(), n));
  auto first = [](int k) {
    std::vector<int> g(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) g[static_cast<std::size_t>(i)] = i;
    return g;
  };
  std::vector<CollGroup> out;
  if (dom >= 2)
    out.push_back(
        {"nvlink_domain", fmt::format("inside one NVLink domain ({} GPUs)", dom), first(dom)});
  if (n >= 2 * dom && 2 * dom < n)
    out.push_back({"two_domains",
                   fmt::format("across 2 NVLink domains ({} GPUs, over the fabric)", 2 * dom),
                   first(2 * dom)});
  if (n > dom) out.push_back({"cluster", fmt::format("whole cluster ({} GPUs)", n), first(n)});
  return out;
}

std::pair<double, double> parse_sizes(const std::string& text) {
  const auto colon = text.find(':');
  auto bad = [&text] {
    return InputError("--sizes", "", "\"" + text + "\"",
                      "MIN:MAX in bytes with units, e.g. 8B:8GiB (MIN <= MAX)");
  };
  if (colon == std::string::npos) throw bad();
  auto lo = parse_quantity(text.substr(0, colon), Dim::Bytes),
       hi = parse_quantity(text.substr(colon + 1), Dim::Bytes);
  if (!lo || !hi || !(*lo >= 1) || !(*hi >= *lo)) throw bad();
  return {*lo, *hi};
}

int run_collectives(const Globals& g, const TopoOptions& o, const Cluster& c) {
  if (!(o.factor > 1) || !(o.factor <= 1024))
    throw InputError("--factor", "", fmt::format("{}", o.factor),
                     "a size step factor in (1, 1024], e.g. 2");
  const auto [lo, hi] = parse_sizes(o.sizes);
  const CalibrationProfile prof =
      o.calibration.empty() ? default_calibration() : load_calibration(o.calibration);
  const SimCluster sc = sim_cluster(c);
  const Topology& topo = *sc.topology;
  const CollectiveContext ctx = make_collective_context(topo, prof, sc.nvls, sc.sharp);
  const std::vector<CollGroup> groups = coll_groups(c);
  if (groups.empty())
    throw InputError(c.file, "nodes", "a cluster of one GPU", "at least 2 GPUs for a collective");
  std::vector<double> sizes;
  for (double s = lo; s <= hi * (1 + 1e-12); s *= o.factor) sizes.push_back(std::round(s));
  const Coll colls[] = {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::AllToAll,
                        Coll::Broadcast};
  nlohmann::json doc;
  doc["cluster"] = c.name;
  doc["cluster_file"] = c.file;
  doc["calibration"] = o.calibration.empty() ? "default" : o.calibration;
  doc["engine"] = "native (flow-level, idle fabric)";
  doc["size_note"] =
      "size as nccl-tests prints it: all_reduce buffer, all_gather output, reduce_scatter input, "
      "alltoall whole "
      "send buffer, broadcast buffer; algbw = size / time; busbw = algbw x bus factor (nccl-tests "
      "doc/PERFORMANCE.md)";
  doc["groups"] = nlohmann::json::array();
  std::string text = fmt::format(
      "# tutti topo --collectives: {} ({}), predicted by the flow-level engine on an idle fabric, "
      "calibration {}\n"
      "# size as nccl-tests prints it; algbw = size / time; busbw = algbw x bus factor (all_reduce "
      "2(n-1)/n,\n"
      "# all_gather, reduce_scatter, alltoall (n-1)/n, broadcast 1), as nccl-tests' "
      "doc/PERFORMANCE.md defines them\n",
      c.name, c.file, o.calibration.empty() ? "default" : o.calibration);
  for (const CollGroup& grp : groups) {
    nlohmann::json jg;
    jg["group"] = grp.name;
    jg["description"] = grp.description;
    jg["ranks"] = grp.gpus.size();
    jg["collectives"] = nlohmann::json::array();
    const int n = static_cast<int>(grp.gpus.size());
    for (Coll coll : colls) {
      nlohmann::json jc;
      jc["op"] = to_string(coll);
      jc["bus_factor"] = bus_factor(coll, n);
      jc["points"] = nlohmann::json::array();
      text += fmt::format("\n# {} {}\n#  {:>12} {:>12} {:>10} {:>10}  {}\n", to_string(coll),
                          grp.description, "size (B)", "time (us)", "algbw GB/s", "busbw GB/s",
                          "algorithm");
      for (double size : sizes) {
        const CollectivePlan plan = plan_collective(coll, size, grp.gpus, ctx);
        const double t = simulate_collectives({plan}, topo, prof, g.seed);
        const double algbw = t > 0 ? size / t : 0, busbw = algbw * bus_factor(coll, n);
        const std::string algo = fmt::format("{}/{}", to_string(plan.algo), to_string(plan.proto));
        text += fmt::format("   {:>12.0f} {:>12.2f} {:>10.2f} {:>10.2f}  {}\n", size, t * 1e6,
                            algbw / 1e9, busbw / 1e9, algo);
        jc["points"].push_back({{"size_bytes", size},
                                {"time_s", t},
                                {"algbw_Bps", algbw},
                                {"busbw_Bps", busbw},
                                {"algorithm", to_string(plan.algo)},
                                {"protocol", to_string(plan.proto)}});
      }
      jg["collectives"].push_back(std::move(jc));
    }
    doc["groups"].push_back(std::move(jg));
  }
  if (g.json)
    emit_json(g, doc);
  else
    emit(g, text);
  return kOk;
}

std::string money(double usd) {
  return fmt::format("${:.0f}", usd);
}

std::string table(const Cluster& c) {
  std::string s;
  auto row = [&](const std::string& k, const std::string& v) {
    s += fmt::format("  {:<26} {}\n", k, v);
  };
  s += fmt::format("{} ({})\n", c.name, c.file);
  row("GPUs", fmt::format("{} x {} ({} nodes of {} x {})", c.gpus(), c.gpu.id, c.nodes,
                          c.gpus_per_node, c.node.id));
  row("fabric", c.facts.description);
  row("transport",
      fmt::format("{} (efficiency {}, +{} per hop)", c.transport.kind, c.transport.efficiency,
                  format_quantity(c.transport.per_hop_latency_s, Dim::Time)));
  for (const auto& g : c.facts.switches)
    row(fmt::format("switches: {}", g.role),
        fmt::format("{} x {} ({} ports used of {})", g.count, g.switch_id, g.ports_used,
                    static_cast<long long>(g.count) * g.radix));
  for (const auto& cg : c.facts.cables)
    row(fmt::format("cables: {}", to_string(cg.tier)), std::to_string(cg.count));
  row("transceivers", std::to_string(c.bom.transceivers));
  row("bisection bandwidth",
      fmt::format(
          "{} ({} per GPU)", format_quantity(c.facts.bisection_Bps, Dim::Bandwidth),
          format_quantity(c.gpus() ? c.facts.bisection_Bps / c.gpus() : 0.0, Dim::Bandwidth)));
  row("diameter", fmt::format("{} switch hops, {} links GPU to GPU", c.facts.diameter_switch_hops,
                              c.facts.diameter_links));
  row("racks",
      fmt::format("{} ({} nodes per rack, facility {})", c.racks, c.nodes_per_rack, c.facility.id));
  s += "\n  bill of materials\n";
  s += fmt::format("    {:<12} {:<22} {:<28} {:>8} {:>12} {:>14} {:>10}\n", "category", "role",
                   "id", "count", "unit $", "total $", "power kW");
  for (const auto& l : c.bom.lines)
    s += fmt::format("    {:<12} {:<22} {:<28} {:>8} {:>12} {:>14} {:>10.1f}{}\n", l.category,
                     l.role, l.id, l.count, money(l.unit_price_usd), money(l.price_usd()),
                     l.power_W() / 1e3, l.estimate ? "  (est.)" : "");
  s += "\n";
  row("network capex", money(c.bom.network_capex_usd));
  row("network power", format_quantity(c.bom.network_power_W, Dim::Power));
  row("compute capex", money(c.bom.compute_capex_usd));
  row("total capex", money(c.bom.total_capex_usd()));
  return s;
}

int run_topo(const Globals& g, const TopoOptions& o) {
  Cluster c = load_cluster(o.cluster, g.sets);
  if (o.collectives) {
    if (!o.export_format.empty())
      throw InputError("--collectives", "", "--export " + o.export_format,
                       "one of --collectives or --export");
    return run_collectives(g, o, c);
  }
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
  auto* sub = app.add_subcommand(
      "topo",
      "Describe a cluster: switches, bisection, bill of materials; export SimGrid platforms");
  auto o = std::make_shared<TopoOptions>();
  sub->add_option("cluster", o->cluster, "Cluster description (topologies/*.json)")->required();
  sub->add_option("--export", o->export_format,
                  "Write the cluster in another format instead (simgrid)")
      ->check(CLI::IsMember({"simgrid"}));
  sub->add_flag("--collectives", o->collectives,
                "Print the predicted nccl-tests table instead: size, time, algbw, busbw of "
                "all_reduce, all_gather, "
                "reduce_scatter, alltoall and broadcast inside an NVLink domain, across two and "
                "over the whole "
                "cluster (flow-level engine, idle fabric); --json for the numbers");
  sub->add_option("--sizes", o->sizes,
                  "With --collectives: MIN:MAX message sizes (nccl-tests -b/-e)")
      ->default_val("8B:8GiB");
  sub->add_option("--factor", o->factor, "With --collectives: size step factor (nccl-tests -f)")
      ->default_val(4);
  sub->add_option("--calibration", o->calibration,
                  "With --collectives: calibration profile (sim/calibration/default.json format)");
  sub->callback([&g, o] { g.run = [&g, o] { return run_topo(g, *o); }; });
}

}  // namespace tutti::cli
