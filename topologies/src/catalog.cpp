#include "tutti/topologies/catalog.hpp"

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "tutti/core/error.hpp"

namespace tutti {

using Json = nlohmann::json;

int SwitchSpec::radix_at(double link_bw_Bps) const {
  if (link_bw_Bps <= 0 || port_bw_Bps <= 0) return 0;
  if (link_bw_Bps > port_bw_Bps * (1 + 1e-9)) return 0;
  double lo = min_port_bw_Bps > 0 ? min_port_bw_Bps : port_bw_Bps;
  if (link_bw_Bps < lo * (1 - 1e-9)) return 0;
  double split = port_bw_Bps / link_bw_Bps;
  double r = std::round(split);
  if (std::fabs(split - r) > 1e-6 || r < 1) return 0;
  return radix * static_cast<int>(r);
}

namespace {

const std::vector<std::string> kKinds{"gpu",   "node",    "nic",      "switch",
                                      "optic", "storage", "facility", "transport"};

// Common head of every entry: id, name, source, estimates, notes (every spec carries the first
// four under those names).
template <typename Spec>
void read_head(Obj& e, Spec& h) {
  static const std::regex kId("^[a-z0-9][a-z0-9.-]*$");
  Value id = e.req("id");
  h.id = id.string();
  if (!std::regex_match(h.id, kId)) id.fail("an id of lowercase letters, digits, '.' and '-'");
  h.name = e.req("name").string();
  Value src = e.req("source");
  h.source = src.string();
  if (h.source.size() < 8)
    src.fail("a citation (docs/hardware-facts.md key or a statement that it is an estimate)");
  Arr est = e.req("estimates").arr();
  for (std::size_t i = 0; i < est.size(); ++i) {
    Value v = est.at(i);
    std::string k = v.string();
    bool known = e.has(k);
    if (!known && e.has("peak")) known = e.value().json().at("peak").contains(k);
    if (!known) v.fail("the name of a field of this entry");
    h.estimates.push_back(k);
  }
  e.allow("notes");
}

double flops(Obj& peak, const char* key) {
  return peak.quantity_or(key, Dim::FlopRate, 0.0, 0.0, 1e19);
}

GpuSpec parse_gpu(Obj& e) {
  GpuSpec g;
  read_head(e, g);
  g.vendor = e.req("vendor").choice({"nvidia", "amd", "intel", "cpu"});
  Obj p = e.req("peak").obj();
  for (DType d : enum_values<DType>()) g.peak_flops[static_cast<int>(d)] = flops(p, to_string(d));
  p.done();
  bool any = false;
  for (double f : g.peak_flops) any = any || f > 0;
  if (!any) e.req("peak").fail("at least one dtype peak (" + enum_names<DType>(", ") + ")");
  g.hbm_bytes = e.req("memory").quantity(Dim::Bytes, 1e6);
  g.hbm_bw_Bps = e.req("memory_bandwidth").quantity(Dim::Bandwidth, 1e6);
  g.scaleup_link = e.req("scaleup_link").string();
  g.scaleup_bw_Bps = e.req("scaleup_bandwidth").quantity(Dim::Bandwidth);
  g.pcie_gen = static_cast<int>(e.req("pcie_gen").integer(0, 7));
  g.tdp_W = e.req("tdp").quantity(Dim::Power, 1.0);
  g.idle_W = e.req("idle_power").quantity(Dim::Power, 0.0, g.tdp_W);
  g.price_usd = e.req("price").quantity(Dim::Money);
  g.cloud_usd_per_hour = e.quantity_or("cloud_price", Dim::MoneyRate, 0.0) * kHour;
  g.cloud_price_note = e.string_or("cloud_price_note", "");
  if (g.cloud_usd_per_hour > 0 && g.cloud_price_note.empty())
    e.req("cloud_price_note");  // a dated cloud price must say which offer it is
  g.usual_node = e.string_or("usual_node", "");
  g.generation =
      e.req("generation")
          .choice({"volta", "ampere", "ada", "hopper", "blackwell", "amd-cdna", "gaudi", "cpu"});
  return g;
}

NodeSpec parse_node(Obj& e) {
  NodeSpec n;
  read_head(e, n);
  n.gpu = e.req("gpu").string();
  n.gpus = static_cast<int>(e.req("gpus").integer(1, 1024));
  n.scaleup = e.req("scaleup").enumerator<ScaleUp>();
  Value dom = e.req("nvlink_domain_gpus");
  n.nvlink_domain_gpus = static_cast<int>(dom.integer(1, 4096));
  if (n.scaleup == ScaleUp::NVSwitch && n.nvlink_domain_gpus % n.gpus != 0)
    dom.fail("a multiple of gpus (an NVLink domain spans whole nodes)");
  if (n.scaleup != ScaleUp::NVSwitch && n.nvlink_domain_gpus > n.gpus)
    dom.fail("at most gpus (only NVSwitch domains span nodes)");
  n.nvswitch_chips = static_cast<int>(e.req("nvswitch_chips").integer(0, 64));
  n.nics = static_cast<int>(e.req("nics").integer(1, 1024));
  n.nic = e.req("nic").string();
  n.nic_transceivers = static_cast<int>(e.req("nic_transceivers").integer(0, 1024));
  n.pcie_bw_Bps = e.req("pcie_bandwidth").quantity(Dim::Bandwidth, 1e6);
  n.max_power_W = e.req("max_power").quantity(Dim::Power, 1.0);
  n.overhead_power_W = e.req("overhead_power").quantity(Dim::Power, 0.0, n.max_power_W);
  n.price_usd = e.req("price").quantity(Dim::Money);
  n.rack_units = static_cast<int>(e.req("rack_units").integer(1, 100000));
  n.nodes_per_rack = static_cast<int>(e.req("nodes_per_rack").integer(0, 1000));
  n.liquid_cooled = e.req("cooling").choice({"air", "liquid"}) == "liquid";
  n.nvls = e.boolean_or("nvls", false);
  n.nodes_per_su = static_cast<int>(e.integer_or("nodes_per_su", 0, 1, 4096));
  if (n.nvls && n.scaleup != ScaleUp::NVSwitch)
    e.req("nvls").fail("false (NVLS needs an NVSwitch scale-up)");
  return n;
}

NicSpec parse_nic(Obj& e) {
  NicSpec n;
  read_head(e, n);
  n.bandwidth_Bps = e.req("bandwidth").quantity(Dim::Bandwidth, 1e6);
  n.ports = static_cast<int>(e.integer_or("ports", 1, 1, 8));
  n.latency_s = e.req("latency").quantity(Dim::Time, 0.0, 1e-3);
  n.power_W = e.req("power").quantity(Dim::Power);
  n.price_usd = e.req("price").quantity(Dim::Money);
  n.transport = e.req("transport").choice({"infiniband", "ethernet", "vpi", "srd"});
  n.optic = e.req("optic").string();
  if (auto sw = e.opt("switch")) {
    Obj o = sw->obj();
    n.ib_switch = o.string_or("infiniband", "");
    n.eth_switch = o.string_or("ethernet", "");
    o.done();
  }
  return n;
}

SwitchSpec parse_switch(Obj& e) {
  SwitchSpec s;
  read_head(e, s);
  s.radix = static_cast<int>(e.req("radix").integer(2, 4096));
  s.port_bw_Bps = e.req("port_speed").quantity(Dim::Bandwidth, 1e6);
  s.min_port_bw_Bps = e.req("min_port_speed").quantity(Dim::Bandwidth, 1e6, s.port_bw_Bps);
  s.cages = static_cast<int>(e.req("cages").integer(1, 4096));
  s.latency_s = e.req("latency").quantity(Dim::Time, 0.0, 1e-3);
  s.power_W = e.req("power").quantity(Dim::Power, 1.0);
  s.price_usd = e.req("price").quantity(Dim::Money);
  s.sharp = e.req("sharp").boolean();
  s.transport = e.req("transport").choice({"infiniband", "ethernet"});
  s.optic = e.req("optic").string();
  s.cable = e.req("cable").string();
  s.rack_units = static_cast<int>(e.req("rack_units").integer(1, 100));
  s.nodes_per_su = static_cast<int>(e.integer_or("nodes_per_su", 0, 1, 4096));
  return s;
}

OpticSpec parse_optic(Obj& e) {
  OpticSpec o;
  read_head(e, o);
  o.kind = e.req("kind").choice({"transceiver", "fiber", "dac", "aoc"});
  o.is_cable = o.kind != "transceiver";
  Value media = e.req("media");
  o.media = media.choice({"multimode", "singlemode", "fiber", "copper", "integrated"});
  if (!o.is_cable && o.media != "multimode" && o.media != "singlemode")
    media.fail("multimode or singlemode for a transceiver");
  o.bandwidth_Bps = e.req("bandwidth").quantity(Dim::Bandwidth, 1e6);
  o.ports = static_cast<int>(e.req("ports").integer(1, 16));
  o.power_W = e.req("power").quantity(Dim::Power);
  o.price_usd = e.req("price").quantity(Dim::Money);
  o.latency_s = e.req("latency").quantity(Dim::Time, 0.0, 1e-3);
  return o;
}

StorageSpec parse_storage(Obj& e) {
  StorageSpec s;
  read_head(e, s);
  s.read_Bps = e.req("read").quantity(Dim::Bandwidth, 1e6);
  s.write_Bps = e.req("write").quantity(Dim::Bandwidth, 1e6);
  s.capacity_bytes = e.req("capacity").quantity(Dim::Bytes, 1e9);
  s.price_usd = e.req("price").quantity(Dim::Money);
  s.power_W = e.req("power").quantity(Dim::Power);
  s.rack_units = static_cast<int>(e.req("rack_units").integer(0, 1000000));
  return s;
}

}  // namespace

double buildout_usd_per_W(const Value& b) {
  std::string text = b.is_string() ? b.string() : "";
  auto slash = text.rfind("/W");
  std::optional<double> usd;
  if (slash != std::string::npos && slash + 2 == text.size())
    usd = parse_quantity(std::string_view(text).substr(0, slash), Dim::Money);
  if (!usd || *usd < 0) b.fail("a build-out cost per watt such as \"$10/W\"");
  return *usd;
}

namespace {

FacilitySpec parse_facility(Obj& e) {
  FacilitySpec f;
  read_head(e, f);
  f.liquid = e.req("liquid").boolean();
  f.pue = e.req("pue").number(1.0, 3.0);
  f.rack_power_W = e.req("rack_power").quantity(Dim::Power, 1e3, 1e6);
  f.rack_cooling_W = e.req("rack_cooling").quantity(Dim::Power, 1e3, 1e6);
  f.total_cooling_W = e.quantity_or("total_cooling", Dim::Power, 0.0);
  f.electricity_usd_per_J =
      e.req("electricity_price").quantity(Dim::EnergyPrice, 0.0, 1.0 / kJoulePerKWh * 10);
  // "$10/W" is parsed as a money amount per watt.
  f.buildout_usd_per_W = buildout_usd_per_W(e.req("buildout"));
  return f;
}

TransportSpec parse_transport(Obj& e) {
  TransportSpec t;
  read_head(e, t);
  t.kind = e.req("kind").choice({"infiniband", "roce", "srd"});
  t.efficiency = e.req("efficiency").number(0.1, 1.0);
  t.per_hop_latency_s = e.req("per_hop_latency").quantity(Dim::Time, 0.0, 1e-3);
  t.multipath = e.boolean_or("multipath", false);
  return t;
}

template <class T>
const T& lookup(const std::vector<T>& v, std::string_view id, const char* kind) {
  for (const auto& x : v)
    if (x.id == id) return x;
  std::string known;
  for (const auto& x : v) known += (known.empty() ? "" : ", ") + x.id;
  throw InputError("catalog", kind, "unknown id \"" + std::string(id) + "\"", "one of: " + known);
}

std::string stem_of(const std::string& file) {
  auto slash = file.find_last_of('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  auto dot = base.rfind(".json");
  return dot == std::string::npos ? base : base.substr(0, dot);
}

}  // namespace

const std::vector<std::string>& Catalog::kinds() {
  return kKinds;
}

Catalog::File Catalog::read_file(const std::string& file, const std::string& text) {
  File f;
  auto part = std::make_shared<Catalog>();
  f.part_ = part;
  f.stem_ = stem_of(file);
  try {
    Doc doc = Doc::parse(text, "catalog/" + f.stem_ + ".json");
    part->docs_.emplace(f.stem_, doc);
    Obj root = doc.root();
    if (!root.has("kind")) return f;  // not a spec file (free-form data of another component)
    std::string kind = root.req("kind").string();
    if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end())
      return f;  // e.g. reliability
    f.kind_ = kind;
    root.allow("notes");
    Arr entries = root.req("entries").arr();
    f.entries_path_ = entries.path();
    Catalog& c = *part;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      Obj e = entries.at(i).obj();
      std::string id;
      if (kind == "gpu")
        c.gpus_.push_back(parse_gpu(e)), id = c.gpus_.back().id;
      else if (kind == "node")
        c.nodes_.push_back(parse_node(e)), id = c.nodes_.back().id;
      else if (kind == "nic")
        c.nics_.push_back(parse_nic(e)), id = c.nics_.back().id;
      else if (kind == "switch")
        c.switches_.push_back(parse_switch(e)), id = c.switches_.back().id;
      else if (kind == "optic")
        c.optics_.push_back(parse_optic(e)), id = c.optics_.back().id;
      else if (kind == "storage")
        c.storages_.push_back(parse_storage(e)), id = c.storages_.back().id;
      else if (kind == "facility")
        c.facilities_.push_back(parse_facility(e)), id = c.facilities_.back().id;
      else
        c.transports_.push_back(parse_transport(e)), id = c.transports_.back().id;
      e.done();
      f.ids_.push_back(id);
    }
    root.done();
  } catch (const InputError&) {
    f.error_ = std::current_exception();
  }
  return f;
}

void Catalog::add(const File& f) {
  const Catalog& p = *f.part_;
  for (const auto& [stem, doc] : p.docs_) docs_.emplace(stem, doc);
  for (std::size_t i = 0; i < f.ids_.size(); ++i) {
    const std::string& id = f.ids_[i];
    if (index_.count(id))
      throw InputError("catalog/" + f.stem_ + ".json",
                       f.entries_path_ + "." + std::to_string(i) + ".id",
                       "\"" + id + "\" (already defined as a " + index_.at(id).first + ")",
                       "an id unique across the catalog");
    index_.emplace(id, std::make_pair(f.kind_, std::make_pair(f.stem_, i)));
  }
  if (f.error_) std::rethrow_exception(f.error_);
  auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  append(gpus_, p.gpus_);
  append(nodes_, p.nodes_);
  append(nics_, p.nics_);
  append(switches_, p.switches_);
  append(optics_, p.optics_);
  append(storages_, p.storages_);
  append(facilities_, p.facilities_);
  append(transports_, p.transports_);
}

Catalog Catalog::parse(const std::vector<std::pair<std::string, std::string>>& files) {
  Catalog c;
  for (const auto& [file, text] : files)
    c.add(read_file(file, text));  // one file at a time: its errors first
  c.check_references();
  return c;
}

Catalog Catalog::join(const std::vector<File>& files) {
  Catalog c;
  for (const File& f : files) c.add(f);
  c.check_references();
  return c;
}

void Catalog::check_references() const {
  const Catalog& c = *this;
  auto where = [&](const std::string& id) {
    const auto& loc = c.index_.at(id).second;
    return std::make_pair("catalog/" + loc.first + ".json",
                          "entries." + std::to_string(loc.second));
  };
  auto check_ref = [&](const std::string& owner, const char* key, const std::string& ref,
                       const std::string& want_kind, bool allow_empty) {
    if (ref.empty() && allow_empty) return;
    auto it = c.index_.find(ref);
    if (it == c.index_.end() || it->second.first != want_kind) {
      auto [f, p] = where(owner);
      throw InputError(f, p + "." + key, "\"" + ref + "\"",
                       "the id of a " + want_kind + " in the catalog");
    }
  };
  for (const auto& n : c.nodes_) {
    check_ref(n.id, "gpu", n.gpu, "gpu", false);
    check_ref(n.id, "nic", n.nic, "nic", false);
  }
  for (const auto& g : c.gpus_) {
    check_ref(g.id, "usual_node", g.usual_node, "node", true);
    if (!g.usual_node.empty() && c.node(g.usual_node).gpu != g.id) {
      auto [f, p] = where(g.id);
      throw InputError(f, p + ".usual_node",
                       "\"" + g.usual_node + "\" (a node of " + c.node(g.usual_node).gpu + ")",
                       "a node whose gpu is \"" + g.id + "\"");
    }
  }
  for (const auto& n : c.nics_) {
    check_ref(n.id, "optic", n.optic, "optic", true);
    check_ref(n.id, "switch.infiniband", n.ib_switch, "switch", true);
    check_ref(n.id, "switch.ethernet", n.eth_switch, "switch", true);
  }
  for (const auto& s : c.switches_) {
    check_ref(s.id, "optic", s.optic, "optic", true);
    check_ref(s.id, "cable", s.cable, "optic", false);
  }
}

const Catalog& Catalog::builtin() {
  static const Catalog* c = [] {
    try {
      return new Catalog(parse(embedded_catalog_files()));
    } catch (const InputError& e) {
      throw InternalError(std::string("the embedded hardware catalog does not parse: ") + e.what());
    }
  }();
  return *c;
}

const GpuSpec& Catalog::gpu(std::string_view id) const {
  return lookup(gpus_, id, "gpu");
}

const NodeSpec& Catalog::usual_node(std::string_view gpu_id) const {
  const GpuSpec& g = gpu(gpu_id);
  if (g.usual_node.empty())
    throw InputError("catalog/gpus.json", "entries." + g.id + ".usual_node", "none",
                     "the id of the node this GPU usually ships in");
  return node(g.usual_node);
}
const NodeSpec& Catalog::node(std::string_view id) const {
  return lookup(nodes_, id, "node");
}
const NicSpec& Catalog::nic(std::string_view id) const {
  return lookup(nics_, id, "nic");
}
const SwitchSpec& Catalog::switch_(std::string_view id) const {
  return lookup(switches_, id, "switch");
}
const OpticSpec& Catalog::optic(std::string_view id) const {
  return lookup(optics_, id, "optic");
}
const StorageSpec& Catalog::storage(std::string_view id) const {
  return lookup(storages_, id, "storage");
}
const FacilitySpec& Catalog::facility(std::string_view id) const {
  return lookup(facilities_, id, "facility");
}
const TransportSpec& Catalog::transport(std::string_view id) const {
  return lookup(transports_, id, "transport");
}

std::vector<std::string> Catalog::ids(std::string_view kind) const {
  std::vector<std::string> out;
  auto take = [&](const auto& v) {
    for (const auto& x : v) out.push_back(x.id);
  };
  if (kind == "gpu")
    take(gpus_);
  else if (kind == "node")
    take(nodes_);
  else if (kind == "nic")
    take(nics_);
  else if (kind == "switch")
    take(switches_);
  else if (kind == "optic")
    take(optics_);
  else if (kind == "storage")
    take(storages_);
  else if (kind == "facility")
    take(facilities_);
  else if (kind == "transport")
    take(transports_);
  else {
    std::string known;
    for (const auto& k : kKinds) known += (known.empty() ? "" : ", ") + k;
    throw InputError("catalog", "KIND", "\"" + std::string(kind) + "\"", "one of: " + known);
  }
  return out;
}

std::pair<std::string, const Json*> Catalog::find(std::string_view id) const {
  auto it = index_.find(id);
  if (it == index_.end()) {
    std::string close;
    for (const auto& [k, v] : index_) {
      bool near = k.find(std::string(id)) != std::string::npos ||
                  (id.size() >= 3 && k.compare(0, 3, id.substr(0, 3)) == 0);
      if (near) close += (close.empty() ? "" : ", ") + k;
    }
    throw InputError("catalog", "ID", "unknown id \"" + std::string(id) + "\"",
                     close.empty() ? "an id listed by 'tutti catalog list'" : "one of: " + close);
  }
  const auto& [kind, loc] = it->second;
  const Json& entries = docs_.at(loc.first).json().at("entries");
  return {kind, &entries.at(loc.second)};
}

Json Catalog::si_json(std::string_view kind, std::string_view id) const {
  Json j;
  if (kind == "gpu") {
    const auto& g = gpu(id);
    Json peak;
    for (DType d : enum_values<DType>())
      if (g.peak(d) > 0 || static_cast<int>(d) <= static_cast<int>(DType::FP8))
        peak[to_string(d)] = g.peak(d);
    j = {{"peak_flops", peak},
         {"hbm_bytes", g.hbm_bytes},
         {"hbm_bw_Bps", g.hbm_bw_Bps},
         {"scaleup_bw_Bps", g.scaleup_bw_Bps},
         {"pcie_gen", g.pcie_gen},
         {"tdp_W", g.tdp_W},
         {"idle_W", g.idle_W},
         {"price_usd", g.price_usd},
         {"cloud_usd_per_hour", g.cloud_usd_per_hour},
         {"usual_node", g.usual_node}};
  } else if (kind == "node") {
    const auto& n = node(id);
    j = {{"gpu", n.gpu},
         {"gpus", n.gpus},
         {"scaleup", to_string(n.scaleup)},
         {"nvlink_domain_gpus", n.nvlink_domain_gpus},
         {"nics", n.nics},
         {"nic", n.nic},
         {"nic_transceivers", n.nic_transceivers},
         {"pcie_bw_Bps", n.pcie_bw_Bps},
         {"overhead_power_W", n.overhead_power_W},
         {"max_power_W", n.max_power_W},
         {"price_usd", n.price_usd},
         {"rack_units", n.rack_units},
         {"nodes_per_rack", n.nodes_per_rack},
         {"nvls", n.nvls},
         {"cooling", n.liquid_cooled ? "liquid" : "air"}};
  } else if (kind == "nic") {
    const auto& n = nic(id);
    j = {{"bandwidth_Bps", n.bandwidth_Bps},
         {"ports", n.ports},
         {"latency_s", n.latency_s},
         {"power_W", n.power_W},
         {"price_usd", n.price_usd}};
  } else if (kind == "switch") {
    const auto& s = switch_(id);
    j = {{"radix", s.radix},
         {"port_bw_Bps", s.port_bw_Bps},
         {"min_port_bw_Bps", s.min_port_bw_Bps},
         {"cages", s.cages},
         {"latency_s", s.latency_s},
         {"power_W", s.power_W},
         {"price_usd", s.price_usd},
         {"sharp", s.sharp}};
  } else if (kind == "optic") {
    const auto& o = optic(id);
    j = {{"bandwidth_Bps", o.bandwidth_Bps},
         {"ports", o.ports},
         {"power_W", o.power_W},
         {"price_usd", o.price_usd},
         {"latency_s", o.latency_s}};
  } else if (kind == "storage") {
    const auto& s = storage(id);
    j = {{"read_Bps", s.read_Bps},
         {"write_Bps", s.write_Bps},
         {"capacity_bytes", s.capacity_bytes},
         {"price_usd", s.price_usd},
         {"power_W", s.power_W}};
  } else if (kind == "facility") {
    const auto& f = facility(id);
    j = {{"liquid", f.liquid},
         {"pue", f.pue},
         {"rack_power_W", f.rack_power_W},
         {"rack_cooling_W", f.rack_cooling_W},
         {"total_cooling_W", f.total_cooling_W},
         {"electricity_usd_per_J", f.electricity_usd_per_J},
         {"electricity_usd_per_kWh", f.electricity_usd_per_J * kJoulePerKWh},
         {"buildout_usd_per_W", f.buildout_usd_per_W}};
  } else if (kind == "transport") {
    const auto& t = transport(id);
    j = {
        {"kind", t.kind}, {"efficiency", t.efficiency}, {"per_hop_latency_s", t.per_hop_latency_s}};
  } else {
    ids(kind);  // throws for an unknown kind
  }
  return j;
}

Doc Catalog::file(std::string_view stem) const {
  auto it = docs_.find(stem);
  if (it == docs_.end()) {
    std::string known;
    for (const auto& [k, v] : docs_) known += (known.empty() ? "" : ", ") + k;
    throw InputError("catalog", "file", "\"" + std::string(stem) + "\"", "one of: " + known);
  }
  return it->second;
}

std::vector<std::string> Catalog::files() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : docs_) out.push_back(k);
  return out;
}

}  // namespace tutti
