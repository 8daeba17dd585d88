#include "tutti/topologies/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "node_layer.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/topologies/catalog.hpp"

namespace tutti {

using Json = nlohmann::json;

namespace {

// Looks an id up in the catalog, turning a miss into an error at the file's key path.
template <class F>
auto resolve(Value v, F lookup) -> decltype(lookup(std::string())) {
  std::string id = v.string();
  try {
    return lookup(id);
  } catch (const InputError& e) {
    v.fail(e.expected());
  }
}

void add_line(Bom& b, BomLine l, const std::vector<std::string>& estimates) {
  if (l.count <= 0) return;
  l.estimate = std::find(estimates.begin(), estimates.end(), "price") != estimates.end();
  l.origin = catalog_origin(l.unit_price_usd, l.estimate);
  b.lines.push_back(std::move(l));
}

// The capex, power and count sums of a BOM from its lines.
void bom_totals(Bom& b) {
  b.network_capex_usd = b.network_power_W = b.compute_capex_usd = b.compute_power_W = 0;
  b.storage_capex_usd = b.storage_power_W = 0;
  b.transceivers = b.cables = 0;
  b.network_origin = b.compute_origin = b.storage_origin = PriceOrigin::Catalog;
  for (const auto& l : b.lines) {
    if (l.network) {
      b.network_capex_usd += l.price_usd();
      b.network_power_W += l.power_W();
      b.network_origin = combine(b.network_origin, l.origin);
      if (l.category == "transceiver") b.transceivers += l.count;
      if (l.category == "cable") b.cables += l.count;
    } else if (l.category == "node") {
      b.compute_capex_usd += l.price_usd();
      b.compute_power_W += l.power_W();
      b.compute_origin = combine(b.compute_origin, l.origin);
    } else if (l.category == "storage") {
      b.storage_capex_usd += l.price_usd();
      b.storage_power_W += l.power_W();
      b.storage_origin = combine(b.storage_origin, l.origin);
    }
  }
}

void build_bom(Cluster& c) {
  Bom& b = c.bom;
  const Catalog& cat = Catalog::builtin();
  for (const auto& g : c.facts.switches) {
    const SwitchSpec& s = cat.switch_(g.switch_id);
    add_line(b, {"switch", g.role, s.id, s.name, g.count, s.price_usd, s.power_W, true},
             s.estimates);
    b.switches += g.count;
    if (!c.switch_optic.id.empty())
      add_line(b,
               {"transceiver", g.role + " switch side", c.switch_optic.id, c.switch_optic.name,
                g.cages_used, c.switch_optic.price_usd, c.switch_optic.power_W, true},
               c.switch_optic.estimates);
  }
  if (c.facts.node_ports > 0 && !c.node_optic.id.empty())
    add_line(b,
             {"transceiver", "node side", c.node_optic.id, c.node_optic.name,
              static_cast<long long>(c.nodes) * c.node.nic_transceivers, c.node_optic.price_usd,
              c.node_optic.power_W, true},
             c.node_optic.estimates);
  for (const auto& cg : c.facts.cables)
    add_line(b,
             {"cable", to_string(cg.tier), c.cable.id, c.cable.name, cg.count, c.cable.price_usd,
              c.cable.power_W, true},
             c.cable.estimates);
  // Not network capex: nodes (their price includes GPUs and NICs) and storage.
  add_line(b,
           {"nic", "in node price", c.nic.id, c.nic.name,
            static_cast<long long>(c.nodes) * c.node.nics, 0, c.nic.power_W, false},
           {});
  add_line(b,
           {"node", "compute", c.node.id, c.node.name, c.nodes, c.node.price_usd,
            c.node.max_power_W, false},
           c.node.estimates);
  if (!c.storage.id.empty())
    add_line(b,
             {"storage", "storage", c.storage.id, c.storage.name, c.storage_units,
              c.storage.price_usd, c.storage.power_W, false},
             c.storage.estimates);
  // The NICs are priced inside the node: their line carries the node's origin.
  for (auto& l : b.lines)
    if (l.category == "nic")
      l.origin = catalog_origin(
          c.node.price_usd, std::find(c.node.estimates.begin(), c.node.estimates.end(), "price") !=
                                c.node.estimates.end());
  bom_totals(b);
}

}  // namespace

namespace {
// Transports that run over Ethernet switches: RoCE and EFA's SRD.
bool ethernet_transport(const std::string& transport_kind) {
  return transport_kind == "roce" || transport_kind == "srd";
}
// Which of the NIC's default switches a fabric takes: Ethernet for an Ethernet transport or an
// Ethernet-only NIC. An EFA NIC (transport "srd") needs no case of its own: parse_cluster admits
// it only with the srd transport, which is an Ethernet one.
bool ethernet_switch(const NicSpec& nic, const std::string& transport_kind) {
  return ethernet_transport(transport_kind) || nic.transport == "ethernet";
}
}  // namespace

std::string default_switch(const NicSpec& nic, const std::string& transport_kind) {
  // The NIC's catalog entry names its generation's switch per transport (nics.json "switch"); with
  // several planes the switch runs its ports in breakout.
  return ethernet_switch(nic, transport_kind) ? nic.eth_switch : nic.ib_switch;
}

Cluster parse_cluster(const Doc& doc, bool measure_diameter) {
  const Catalog& cat = Catalog::builtin();
  Cluster c;
  c.file = doc.name();
  const std::string& file = c.file;
  Obj root = doc.root();
  root.allow("$schema");
  c.name = root.req("name").string();
  c.description = root.string_or("description", "");
  c.node = resolve(root.req("node"), [&](const std::string& id) { return cat.node(id); });
  c.gpu = cat.gpu(c.node.gpu);
  c.nic = cat.nic(c.node.nic);
  Value nodes_v = root.req("nodes");
  c.nodes = static_cast<int>(nodes_v.integer(1, 1 << 20));
  c.gpus_per_node = c.node.gpus;
  if (auto v = root.opt("gpus_per_node")) {
    int max = c.node.scaleup == ScaleUp::SharedMemory ? 4096 : c.node.gpus;
    c.gpus_per_node = static_cast<int>(v->integer(1, max));
    if (c.node.scaleup != ScaleUp::SharedMemory && c.gpus_per_node != c.node.gpus)
      v->fail(fmt::format("{} (the GPUs of a \"{}\"; only CPU nodes take a rank count)",
                          c.node.gpus, c.node.id));
  }
  if (c.node.scaleup == ScaleUp::NVSwitch && c.node.nvlink_domain_gpus > c.node.gpus) {
    int per = c.node.nvlink_domain_gpus / c.node.gpus;
    if (c.nodes % per != 0)
      nodes_v.fail(fmt::format("a multiple of {} (\"{}\" nodes form {}-GPU NVLink domains)", per,
                               c.node.id, c.node.nvlink_domain_gpus));
  }
  if (static_cast<long long>(c.nodes) * c.gpus_per_node > (1LL << 22))
    nodes_v.fail("at most 4,194,304 GPUs in total");

  // Transport.
  // The NIC's own transport unless the cluster names one: SRD on an EFA NIC, RoCE on an
  // Ethernet-only NIC, InfiniBand otherwise.
  std::string tkind = c.nic.transport == "srd"        ? "srd"
                      : c.nic.transport == "ethernet" ? "roce"
                                                      : "infiniband";
  std::optional<Obj> tobj;
  if (auto v = root.opt("transport")) {
    tobj = v->obj();
    tkind = tobj->req("kind").choice({"infiniband", "roce", "srd"});
  }
  c.transport = cat.transport(tkind);
  if (tobj) {
    c.transport.efficiency = tobj->number_or("efficiency", c.transport.efficiency, 0.1, 1.0);
    c.transport.per_hop_latency_s =
        tobj->quantity_or("per_hop_latency", Dim::Time, c.transport.per_hop_latency_s, 0.0, 1e-3);
    tobj->done();
  }
  if (tkind == "infiniband" && c.nic.transport == "ethernet")
    root.req("transport").fail(fmt::format("\"roce\": NIC \"{}\" is Ethernet-only", c.nic.id));
  if ((tkind == "srd") != (c.nic.transport == "srd"))
    root.req("transport")
        .fail(tkind == "srd"
                  ? fmt::format("\"{}\": SRD runs only on an EFA NIC, and node \"{}\" has \"{}\"",
                                c.nic.transport == "ethernet" ? "roce" : "infiniband", c.node.id,
                                c.nic.id)
                  : fmt::format("\"srd\": NIC \"{}\" is an EFA adapter, which speaks only SRD",
                                c.nic.id));

  // Fabric.
  Obj fab = root.req("fabric").obj();
  FabricSpec& fs = c.fabric;
  fs.kind = fab.req("kind").enumerator<FabricKind>();
  const bool clos = fs.kind == FabricKind::FatTree || fs.kind == FabricKind::RailOptimized ||
                    fs.kind == FabricKind::DualPlane || fs.kind == FabricKind::RailOnly;
  if (fs.kind == FabricKind::RailOnly && c.node.scaleup != ScaleUp::NVSwitch)
    fab.req("kind").fail(
        fmt::format("a fabric other than \"rail_only\" for node \"{}\": rail-only sends "
                    "cross-rail traffic over NVSwitch, which this node does not have",
                    c.node.id));
  fs.planes = fs.kind == FabricKind::DualPlane ? std::max(2, c.nic.ports) : c.nic.ports;
  if (clos) fs.planes = static_cast<int>(fab.integer_or("planes", fs.planes, 1, 8));
  if (fs.kind == FabricKind::DualPlane && fs.planes < 2)
    fab.req("planes").fail("at least 2 for a dual_plane fabric");
  if (!clos && fs.planes != 1 && fs.kind != FabricKind::None)
    root.req("fabric").fail(
        fmt::format("a fat_tree or rail_optimized fabric: NIC \"{}\" has {} ports, which "
                    "need one plane each",
                    c.nic.id, c.nic.ports));
  fs.link_bw_Bps = c.nic.bandwidth_Bps / fs.planes;
  if (fs.kind != FabricKind::None) {
    fs.link_bw_Bps = fab.quantity_or("link_speed", Dim::Bandwidth, fs.link_bw_Bps, 1e6);
    if (fs.link_bw_Bps * fs.planes > c.nic.bandwidth_Bps * (1 + 1e-9))
      fab.req("link_speed")
          .fail(fmt::format("at most the NIC bandwidth per plane ({})",
                            detail::gbps(c.nic.bandwidth_Bps / fs.planes)));
    {
      // A multipath transport (EFA's SRD) sprays every flow itself; others hash per flow.
      fs.routing = fab.enumerator_or(
          "routing", c.transport.multipath && clos ? Routing::Spray : Routing::Ecmp);
      if (splits_flows(fs.routing) && !clos)
        fab.req("routing").fail(
            fmt::format("\"ecmp\" or \"dmodk\" on a {} fabric (adaptive routing and packet "
                        "spraying are modelled on Clos fabrics: fat_tree, rail_optimized, "
                        "dual_plane)",
                        to_string(fs.kind)));
    }
    std::string sw = default_switch(c.nic, tkind);
    if (auto v = fab.opt("switch"))
      sw = resolve(*v, [&](const std::string& id) { return cat.switch_(id).id; });
    auto role = [&](const char* key) {
      if (auto v = fab.opt(key))
        return resolve(*v, [&](const std::string& id) { return cat.switch_(id); });
      if (sw.empty())  // a NIC (a user's own entry) without a default switch, and none named
        throw InputError(
            fab.file(), (fab.path().empty() ? "" : fab.path() + ".") + "switch", "no switch named",
            fmt::format("a catalog switch id (NIC \"{}\" names no default {} switch)", c.nic.id,
                        ethernet_switch(c.nic, tkind) ? "ethernet" : "infiniband"));
      return cat.switch_(sw);
    };
    c.leaf_switch = role(clos ? "leaf_switch" : "router");
    if (clos) {
      c.spine_switch = role("spine_switch");
      c.core_switch = role("core_switch");
    } else {
      c.spine_switch = c.core_switch = c.leaf_switch;
    }
    fs.leaf_switch = c.leaf_switch.id, fs.spine_switch = c.spine_switch.id,
    fs.core_switch = c.core_switch.id;
    if ((c.leaf_switch.transport == "ethernet") != ethernet_transport(tkind))
      fab.req(fab.has("switch") ? "switch" : "kind")
          .fail(fmt::format("a{} switch for transport \"{}\" (\"{}\" is {})",
                            ethernet_transport(tkind) ? "n Ethernet" : "n InfiniBand", tkind,
                            c.leaf_switch.id, c.leaf_switch.transport));
    fs.cable_latency_s = fab.quantity_or("cable_latency", Dim::Time, 0.0, 0.0, 1e-3);
  }
  fs.scaleup_latency_s =
      fab.quantity_or("scaleup_latency", Dim::Time, fs.scaleup_latency_s, 0.0, 1e-3);
  fs.pcie_latency_s = fab.quantity_or("pcie_latency", Dim::Time, fs.pcie_latency_s, 0.0, 1e-3);
  if (clos) {
    auto tiers = fab.opt("tiers");
    fs.tiers = tiers ? static_cast<int>(tiers->integer(1, 3)) : 0;
    fs.oversubscription = fab.number_or("oversubscription", 1.0, 1.0, 64.0);
    fs.spine_oversubscription = fab.number_or("spine_oversubscription", 1.0, 1.0, 64.0);
    if (fs.kind == FabricKind::FatTree) {
      fs.leaf_down_ports = static_cast<int>(fab.integer_or("leaf_down_ports", 0, 1, 4096));
    } else {
      // Default: the scalable unit of the reference architecture built on the rail leaf (catalog
      // switch `nodes_per_su`: 72 on XDR Q3400 per RA-B300), else the DGX H100 SuperPOD's 32.
      // Rail-only: 0 = every node on one switch per rail when they fit.
      const bool rail_only = fs.kind == FabricKind::RailOnly;
      const int su = rail_only                        ? 0
                     : c.leaf_switch.nodes_per_su > 0 ? c.leaf_switch.nodes_per_su
                                                      : 32;
      fs.nodes_per_su =
          static_cast<int>(fab.integer_or("nodes_per_su", su, rail_only ? 0 : 1, 4096));
      fs.pxn = fab.boolean_or("pxn", rail_only);
      if (rail_only && !fs.pxn)
        fab.req("pxn").fail(
            "true (or no key): a rail-only fabric reaches other rails only through NVLink");
    }
  } else if (fs.kind == FabricKind::Dragonfly) {
    fs.groups = static_cast<int>(fab.req("groups").integer(1, 100000));
    fs.routers_per_group = static_cast<int>(fab.req("routers_per_group").integer(1, 1024));
    fs.nics_per_router = static_cast<int>(fab.req("nics_per_router").integer(1, 1024));
    fs.global_links_per_router =
        static_cast<int>(fab.req("global_links_per_router").integer(1, 1024));
  } else if (fs.kind == FabricKind::Torus) {
    Arr dims = fab.req("dims").arr();
    if (dims.size() < 2 || dims.size() > 3) dims.value().fail("2 or 3 dimensions, e.g. [8, 8, 4]");
    for (std::size_t i = 0; i < dims.size(); ++i)
      fs.dims.push_back(static_cast<int>(dims.at(i).integer(2, 1024)));
    fs.nics_per_router = static_cast<int>(fab.req("nics_per_router").integer(1, 1024));
  }
  fab.done();

  // Optics and cables: the switch's and NIC's defaults unless the file names others.
  if (fs.kind != FabricKind::None) {
    std::string so = c.leaf_switch.optic, no = c.nic.optic, cb = c.leaf_switch.cable;
    std::optional<Value> so_v, no_v;
    if (auto v = root.opt("optics")) {
      Obj o = v->obj();
      auto pick = [&](const char* key, std::string& id, std::optional<Value>* keep) {
        if (auto x = o.opt(key)) {
          id = x->string();
          if (!id.empty()) resolve(*x, [&](const std::string& s) { return cat.optic(s).id; });
          if (keep) *keep = *x;
        }
      };
      pick("switch", so, &so_v);
      pick("node", no, &no_v);
      pick("cable", cb, nullptr);
      o.done();
    }
    if (!so.empty()) c.switch_optic = cat.optic(so);
    if (!no.empty()) c.node_optic = cat.optic(no);
    // Both ends of a link must be of one media (multimode SR to single-mode DR does not link).
    // A default that disagrees with the other end is swapped for the catalog transceiver of the
    // right media and the NIC's speed; two ends the user named that disagree are an error.
    if (!c.switch_optic.id.empty() && !c.node_optic.id.empty() && !c.switch_optic.is_cable &&
        !c.node_optic.is_cable && c.switch_optic.media != c.node_optic.media) {
      if (no_v && so_v)
        no_v->fail(fmt::format("a {} transceiver to match optics.switch \"{}\" ({} is {})",
                               c.switch_optic.media, c.switch_optic.id, c.node_optic.id,
                               c.node_optic.media));
      const bool fix_node = !no_v;
      const OpticSpec& keep = fix_node ? c.switch_optic : c.node_optic;
      const double want_Bps =
          fix_node ? c.nic.bandwidth_Bps / std::max(1, c.nic.ports) : keep.bandwidth_Bps;
      const OpticSpec* best = nullptr;
      for (const auto& o : cat.optics())
        if (!o.is_cable && o.media == keep.media && o.bandwidth_Bps >= want_Bps * (1 - 1e-9) &&
            (!best || o.bandwidth_Bps < best->bandwidth_Bps))
          best = &o;
      if (!best) {
        std::string want = fmt::format(
            "a transceiver whose media matches the other end ({}); the catalog has "
            "no {} transceiver at {}",
            keep.media, keep.media, detail::gbps(want_Bps));
        if (fix_node && so_v) so_v->fail(want);
        if (!fix_node && no_v) no_v->fail(want);
        throw InputError(file, "optics", c.switch_optic.id + " and " + c.node_optic.id, want);
      }
      (fix_node ? c.node_optic : c.switch_optic) = *best;
    }
    c.cable = cat.optic(cb);
    if (fs.cable_latency_s == 0) fs.cable_latency_s = c.cable.latency_s;
  }

  // Storage.
  if (auto v = root.opt("storage")) {
    Obj s = v->obj();
    c.storage = resolve(s.req("system"), [&](const std::string& id) { return cat.storage(id); });
    c.storage_units = static_cast<int>(s.integer_or("count", 1, 1, 100000));
    s.done();
  }

  // Facility.
  // The server's own cooling (catalog `cooling`) picks the default preset.
  std::string preset = c.node.liquid_cooled ? "liquid-cooled" : "air-cooled";
  std::optional<Obj> fo;
  if (auto v = root.opt("facility")) {
    fo = v->obj();
    if (auto p = fo->opt("preset"))
      preset = resolve(*p, [&](const std::string& id) { return cat.facility(id).id; });
  }
  c.facility = cat.facility(preset);
  int racks_override = 0, npr_override = 0;
  if (fo) {
    FacilitySpec& f = c.facility;
    f.rack_power_W = fo->quantity_or("rack_power", Dim::Power, f.rack_power_W, 1e3, 1e6);
    f.rack_cooling_W = fo->quantity_or("rack_cooling", Dim::Power, f.rack_cooling_W, 1e3, 1e6);
    f.total_cooling_W = fo->quantity_or("total_cooling", Dim::Power, f.total_cooling_W);
    f.pue = fo->number_or("pue", f.pue, 1.0, 3.0);
    f.electricity_usd_per_J =
        fo->quantity_or("electricity_price", Dim::EnergyPrice, f.electricity_usd_per_J);
    racks_override = static_cast<int>(fo->integer_or("racks", 0, 1, 1 << 20));
    npr_override = static_cast<int>(fo->integer_or("nodes_per_rack", 0, 1, 1000));
    fo->done();
  }
  root.done();

  // Racks: the reference density, capped by what the rack's power budget feeds.
  int by_power = std::max(
      1, static_cast<int>(std::floor(c.facility.rack_power_W / c.node.max_power_W + 1e-9)));
  c.nodes_per_rack =
      npr_override ? npr_override
                   : (c.node.nodes_per_rack ? std::min(c.node.nodes_per_rack, by_power) : by_power);
  c.racks = (c.nodes + c.nodes_per_rack - 1) / c.nodes_per_rack;
  if (racks_override) {
    if (racks_override < c.racks)
      root.req("facility")
          .obj()
          .req("racks")
          .fail(fmt::format("at least {} racks for {} nodes at {} per rack", c.racks, c.nodes,
                            c.nodes_per_rack));
    c.racks = racks_override;
  }

  // Build.
  FabricHardware hw;
  hw.node = c.node, hw.gpu = c.gpu, hw.nic = c.nic, hw.nodes = c.nodes,
  hw.gpus_per_node = c.gpus_per_node;
  hw.leaf = c.leaf_switch, hw.spine = c.spine_switch, hw.core = c.core_switch;
  hw.transport = c.transport;
  hw.cable_latency_s = fs.cable_latency_s;
  fs.measure_diameter = measure_diameter;
  c.topology = build_fabric(hw, fs, c.facts, file);
  auto estimate = [](const std::vector<std::string>& e, const char* key) {
    return std::find(e.begin(), e.end(), key) != e.end();
  };
  PriceOrigins& po = c.price_origins;
  po.gpu = catalog_origin(c.gpu.price_usd, estimate(c.gpu.estimates, "price"));
  po.cloud = catalog_origin(c.gpu.cloud_usd_per_hour, estimate(c.gpu.estimates, "cloud_price"));
  po.electricity = catalog_origin(c.facility.electricity_usd_per_J,
                                  estimate(c.facility.estimates, "electricity_price"));
  if (fo && fo->has("electricity_price"))
    po.electricity = PriceOrigin::User;  // the cluster file's own
  po.buildout =
      catalog_origin(c.facility.buildout_usd_per_W, estimate(c.facility.estimates, "buildout"));
  build_bom(c);
  return c;
}

void apply_prices(Cluster& c, const Prices& p) {
  PriceOrigins& po = c.price_origins;
  po.file = p.file;
  po.source = p.source;
  const double catalog_gpu_usd = c.gpu.price_usd;
  if (auto g = p.gpus.find(c.gpu.id); g != p.gpus.end()) {
    if (g->second.price_usd) {
      c.gpu.price_usd = *g->second.price_usd;
      po.gpu = PriceOrigin::User;
    }
    if (g->second.cloud_usd_per_s) {
      c.gpu.cloud_usd_per_hour = *g->second.cloud_usd_per_s * 3600.0;
      c.gpu.cloud_price_note = "user price (" + p.file + ")";
      po.cloud = PriceOrigin::User;
    }
  }
  if (p.electricity_usd_per_J) {
    c.facility.electricity_usd_per_J = *p.electricity_usd_per_J;
    po.electricity = PriceOrigin::User;
  }
  if (p.buildout_usd_per_W) {
    c.facility.buildout_usd_per_W = *p.buildout_usd_per_W;
    po.buildout = PriceOrigin::User;
  }
  if (p.rack_usd_per_s) {
    c.rack_usd_per_s = *p.rack_usd_per_s;
    po.rack_space = PriceOrigin::User;
  }
  auto quote = [](const std::map<std::string, double>& m, const std::string& id) -> const double* {
    auto it = m.find(id);
    return it == m.end() ? nullptr : &it->second;
  };
  for (BomLine& l : c.bom.lines) {
    const double* q = nullptr;
    if (l.category == "switch")
      q = quote(p.switches_usd, l.id);
    else if (l.category == "transceiver" || l.category == "cable")
      q = quote(p.optics_usd, l.id);
    else if (l.category == "storage")
      q = quote(p.storage_usd, l.id);
    else if (l.category == "nic") {
      if ((q = quote(p.nics_usd, l.id))) {
        l.network = true;  // quoted apart from the server: on the network bill
        l.role = "quoted apart from the node";
      }
    } else if (l.category == "node") {
      if ((q = quote(p.nodes_usd, l.id))) {
        c.node.price_usd = *q;
      } else if (po.gpu == PriceOrigin::User) {
        // The catalog server with its GPUs re-priced at the quote.
        l.unit_price_usd += (c.gpu.price_usd - catalog_gpu_usd) * c.gpus_per_node;
        c.node.price_usd = l.unit_price_usd;
        l.origin = combine(PriceOrigin::User, l.origin);
        continue;
      }
    }
    if (q) {
      l.unit_price_usd = *q;
      l.origin = PriceOrigin::User;
      l.estimate = false;
    }
  }
  bom_totals(c.bom);
}

Cluster load_cluster(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_cluster(Doc::load(path, overrides));
}

Json cluster_document(const ClusterParams& p) {
  Json j;
  j["name"] = p.name;
  j["node"] = p.node;
  j["nodes"] = p.nodes;
  Json fab;
  fab["kind"] = p.fabric;
  if (p.fabric != "none") {
    if (!p.switch_id.empty()) fab["switch"] = p.switch_id;
    if (p.fabric == "fat_tree" || p.fabric == "rail_optimized" || p.fabric == "dual_plane")
      fab["oversubscription"] = p.oversubscription;
    if ((p.fabric == "rail_optimized" || p.fabric == "dual_plane") && p.nodes_per_su > 0)
      fab["nodes_per_su"] = p.nodes_per_su;
  }
  j["fabric"] = fab;
  j["transport"] = {{"kind", p.transport}};
  if (!p.facility.empty()) j["facility"] = {{"preset", p.facility}};
  if (!p.storage.empty()) j["storage"] = {{"system", p.storage}, {"count", p.storage_units}};
  return j;
}

Cluster make_cluster(const ClusterParams& p) {
  Json j = cluster_document(p);
  for (const auto& s : p.sets) apply_override(j, s, "make_cluster");
  return parse_cluster(Doc::from_json(j, "make_cluster(" + p.name + ")"), p.diameter);
}

Json to_json(const Cluster& c) {
  Json j;
  j["schema_version"] = 1;  // schemas/topology_result.schema.json
  j["name"] = c.name;
  j["file"] = c.file;
  j["gpu"] = c.gpu.id;
  j["node"] = c.node.id;
  j["nodes"] = c.nodes;
  j["gpus_per_node"] = c.gpus_per_node;
  j["gpus"] = c.gpus();
  j["nics"] = c.nodes * c.node.nics;
  j["fabric"] = {{"kind", to_string(c.fabric.kind)},
                 {"description", c.facts.description},
                 {"tiers", c.facts.tiers},
                 {"planes", c.fabric.planes},
                 {"routing", to_string(c.fabric.routing)},
                 {"link_speed_Bps", c.facts.link_bw_Bps}};
  j["transport"] = {{"kind", c.transport.kind},
                    {"efficiency", c.transport.efficiency},
                    {"per_hop_latency_s", c.transport.per_hop_latency_s}};
  Json sw = Json::object();
  long long total = 0;
  for (const auto& g : c.facts.switches) {
    sw[g.role] = g.count;
    total += g.count;
  }
  sw["total"] = total;
  j["switches"] = sw;
  Json models = Json::object();
  for (const auto& g : c.facts.switches)
    models[g.role] = {{"id", g.switch_id}, {"radix", g.radix}, {"ports_used", g.ports_used}};
  j["switch_models"] = models;
  Json cables = Json::object();
  for (const auto& cg : c.facts.cables) cables[to_string(cg.tier)] = cg.count;
  cables["total"] = c.bom.cables;
  j["cables"] = cables;
  Json tx = {{"switch_side", 0LL}, {"node_side", 0LL}, {"total", c.bom.transceivers}};
  for (const auto& l : c.bom.lines)
    if (l.category == "transceiver") {
      auto key = l.role == "node side" ? "node_side" : "switch_side";
      tx[key] = tx[key].get<long long>() + l.count;
    }
  j["transceivers"] = tx;
  j["devices"] = c.topology->devices().size();
  j["links"] = c.topology->links().size();
  j["bisection_bandwidth_Bps"] = c.facts.bisection_Bps;
  j["bisection_bandwidth_per_gpu_Bps"] = c.gpus() ? c.facts.bisection_Bps / c.gpus() : 0.0;
  j["diameter"] = c.facts.diameter_switch_hops;
  j["diameter_links"] = c.facts.diameter_links;
  Json bom = Json::array();
  for (const auto& l : c.bom.lines)
    bom.push_back({{"category", l.category},
                   {"role", l.role},
                   {"id", l.id},
                   {"count", l.count},
                   {"unit_price_usd", l.unit_price_usd},
                   {"unit_power_W", l.unit_power_W},
                   {"price_usd", l.price_usd()},
                   {"power_W", l.power_W()},
                   {"network", l.network},
                   {"price_estimate", l.estimate},
                   {"price_origin", to_string(l.origin)}});
  j["bom"] = bom;
  j["network_capex_usd"] = c.bom.network_capex_usd;
  j["network_capex_origin"] = to_string(c.bom.network_origin);
  j["network_power_W"] = c.bom.network_power_W;
  j["compute_capex_usd"] = c.bom.compute_capex_usd;
  j["compute_power_W"] = c.bom.compute_power_W;
  j["storage_capex_usd"] = c.bom.storage_capex_usd;
  j["total_capex_usd"] = c.bom.total_capex_usd();
  j["network_capex_share"] =
      c.bom.total_capex_usd() > 0 ? c.bom.network_capex_usd / c.bom.total_capex_usd() : 0.0;
  j["racks"] = c.racks;
  j["nodes_per_rack"] = c.nodes_per_rack;
  j["facility"] = {{"preset", c.facility.id},
                   {"pue", c.facility.pue},
                   {"rack_power_W", c.facility.rack_power_W},
                   {"rack_cooling_W", c.facility.rack_cooling_W},
                   {"electricity_usd_per_kWh", c.facility.electricity_usd_per_J * kJoulePerKWh}};
  if (!c.storage.id.empty())
    j["storage"] = {{"system", c.storage.id},
                    {"count", c.storage_units},
                    {"read_Bps", c.storage.read_Bps * c.storage_units},
                    {"write_Bps", c.storage.write_Bps * c.storage_units},
                    {"capacity_bytes", c.storage.capacity_bytes * c.storage_units}};
  return j;
}

int Cluster::domain_gpus() const {
  return node.scaleup == ScaleUp::NVSwitch ? std::max(node.nvlink_domain_gpus, gpus_per_node)
                                           : gpus_per_node;
}

std::string describe_placement(const Cluster& c, int job_gpus) {
  const int d = c.domain_gpus();
  const int full = job_gpus / d, part = job_gpus % d;
  const char* unit = d > c.gpus_per_node ? "NVLink domain" : "node";
  std::string s = fmt::format("{} of {} GPUs: ", job_gpus, c.gpus());
  if (full > 0) s += fmt::format("{} full {}{} of {}", full, unit, full == 1 ? "" : "s", d);
  if (part > 0)
    s += fmt::format("{}{} GPUs of {} {}", full > 0 ? " + " : "", part,
                     full > 0 ? "the next" : "one", unit);
  s += fmt::format("; {} GPUs idle", c.gpus() - job_gpus);
  return s;
}

}  // namespace tutti
