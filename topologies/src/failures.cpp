#include "tutti/topologies/failures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "node_layer.hpp"
#include "tutti/core/error.hpp"

namespace tutti {

namespace {

bool is_scale_out(Tier t) {
  return t == Tier::Access || t == Tier::LeafSpine || t == Tier::SpineCore;
}

// Uniform in [0, 1) from (seed, salt): splitmix64, so a failure draw does not depend on the
// order or number of other draws.
double uniform(std::uint64_t seed, std::uint64_t salt) {
  return static_cast<double>(detail::mix(seed, salt) >> 11) * 0x1.0p-53;
}

struct Index {
  std::map<std::string, std::uint32_t> device;  // name -> device id (switches and NICs)
  // (smaller device, larger device) -> the a->b link ids of the cables between them, in order.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint32_t>> cables;
};

Index index_of(const Topology& t) {
  Index ix;
  const auto& devs = t.devices();
  for (std::uint32_t d = 0; d < devs.size(); ++d)
    if (devs[d].kind == DeviceKind::Switch || devs[d].kind == DeviceKind::NIC)
      ix.device.emplace(fabric_device_name(devs[d]), d);
  const auto& links = t.links();
  for (std::uint32_t l = 0; l + 1 < links.size(); ++l) {
    const Link& a = links[l];
    if (!is_scale_out(a.tier)) continue;
    // Cables are added as two consecutive links a->b, b->a; count each cable once (its first link).
    const Link& b = links[l + 1];
    if (b.src != a.dst || b.dst != a.src || b.tier != a.tier) continue;
    ix.cables[{std::min(a.src, a.dst), std::max(a.src, a.dst)}].push_back(l);
    ++l;
  }
  return ix;
}

std::string names_hint(const Index& ix) {
  std::map<std::string, int> count;
  for (const auto& [name, id] : ix.device) {
    std::string stem = name.substr(0, name.find_first_of("0123456789"));
    ++count[stem];
  }
  std::string s;
  for (const auto& [stem, n] : count)
    s += fmt::format("{}{}0..{}{}", s.empty() ? "" : ", ", stem, stem, n - 1);
  return s;
}

std::uint32_t find_device(const Index& ix, const std::string& name, const std::string& item) {
  auto it = ix.device.find(name);
  if (it == ix.device.end())
    throw InputError(
        "--fail", "", "\"" + item + "\"",
        fmt::format("a part of the fabric: {} (\"{}\" is not one)", names_hint(ix), name));
  return it->second;
}

}  // namespace

void parse_fail_rate(const std::string& text, FailureRequest& r) {
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string kv = text.substr(pos, end - pos);
    const std::size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    if (eq == std::string::npos || (key != "links" && key != "switches"))
      throw InputError("--fail-rate", "", "\"" + kv + "\"",
                       "links=P or switches=P (P a probability, e.g. links=0.01)");
    char* stop = nullptr;
    const std::string val = kv.substr(eq + 1);
    const double p = std::strtod(val.c_str(), &stop);
    if (val.empty() || *stop != '\0' || !(p >= 0 && p < 1))
      throw InputError("--fail-rate", key, "\"" + val + "\"", "a probability in [0, 1)");
    (key == "links" ? r.link_rate : r.switch_rate) = p;
    pos = end + 1;
  }
}

AppliedFailures apply_failures(Cluster& c, const FailureRequest& r) {
  AppliedFailures out;
  if (r.empty()) return out;
  const std::shared_ptr<const Topology> healthy = c.topology;  // outlives the swap below
  const Topology& t = *healthy;
  const Index ix = index_of(t);
  std::vector<std::uint32_t> links, switches;
  for (const std::string& item : r.items) {
    if (!out.request.empty()) out.request.push_back(' ');
    out.request.append("--fail ").append(item);
    const std::size_t eq = item.find('=');
    const std::string kind = item.substr(0, eq),
                      what = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (eq == std::string::npos || (kind != "link" && kind != "switch") || what.empty())
      throw InputError("--fail", "", "\"" + item + "\"",
                       "link=ID or switch=NAME (e.g. link=leaf0-spine1, switch=spine0)");
    if (kind == "switch") {
      const std::uint32_t d = find_device(ix, what, item);
      if (t.devices()[d].kind != DeviceKind::Switch)
        throw InputError("--fail", "switch", "\"" + what + "\"", "a switch (leaf, spine or core)");
      switches.push_back(d);
      continue;
    }
    if (what.find_first_not_of("0123456789") == std::string::npos) {  // a directed link id
      const unsigned long long id = std::strtoull(what.c_str(), nullptr, 10);
      if (id >= t.links().size() || !is_scale_out(t.links()[id].tier))
        throw InputError(
            "--fail", "link", what,
            fmt::format("the id of a scale-out link (access, leaf-spine or spine-core), below {}",
                        t.links().size()));
      links.push_back(static_cast<std::uint32_t>(id));
      continue;
    }
    // "a-b", "a->b", with an optional "#k".
    std::string spec = what;
    std::size_t k = 0;
    if (auto h = spec.find('#'); h != std::string::npos) {
      const std::string ks = spec.substr(h + 1);
      if (ks.empty() || ks.find_first_not_of("0123456789") != std::string::npos)
        throw InputError("--fail", "link", "\"" + what + "\"",
                         "#k with k a cable index (e.g. leaf0-spine1#2)");
      k = std::strtoull(ks.c_str(), nullptr, 10);
      spec = spec.substr(0, h);
    }
    std::size_t dash = spec.find("->");
    std::size_t skip = 2;
    if (dash == std::string::npos) dash = spec.find('-'), skip = 1;
    if (dash == std::string::npos)
      throw InputError("--fail", "link", "\"" + what + "\"",
                       "a link id or a cable as END-END (e.g. leaf0-spine1)");
    const std::uint32_t a = find_device(ix, spec.substr(0, dash), item),
                        b = find_device(ix, spec.substr(dash + skip), item);
    auto it = ix.cables.find({std::min(a, b), std::max(a, b)});
    if (it == ix.cables.end())
      throw InputError("--fail", "link", "\"" + what + "\"",
                       fmt::format("two ends joined by a cable ({} and {} are not)",
                                   spec.substr(0, dash), spec.substr(dash + skip)));
    if (k >= it->second.size())
      throw InputError("--fail", "link", "\"" + what + "\"",
                       fmt::format("a cable index below {} ({} parallel cables)", it->second.size(),
                                   it->second.size()));
    links.push_back(it->second[k]);
  }
  if (r.link_rate > 0 || r.switch_rate > 0) {
    out.request += fmt::format("{}--fail-rate links={},switches={} --seed {}",
                               out.request.empty() ? "" : " ", r.link_rate, r.switch_rate, r.seed);
    // Every switch-to-switch cable and every switch draws once, keyed by its id.
    for (const auto& [ends, ids] : ix.cables)
      for (std::uint32_t l : ids)
        if (t.links()[l].tier != Tier::Access && uniform(r.seed, 2ull * l) < r.link_rate)
          links.push_back(l);
    for (std::uint32_t d = 0; d < t.devices().size(); ++d)
      if (t.devices()[d].kind == DeviceKind::Switch &&
          uniform(r.seed, 2ull * d + 1) < r.switch_rate)
        switches.push_back(d);
  }
  c.topology = t.with_failures(links, switches);
  // Names of what went down, one per cable (both directions), in id order.
  std::sort(switches.begin(), switches.end());
  switches.erase(std::unique(switches.begin(), switches.end()), switches.end());
  for (std::uint32_t d : switches) out.switches.push_back(fabric_device_name(t.devices()[d]));
  std::vector<char> hit(t.links().size(), 0);
  for (std::uint32_t l : links) hit[l] = 1;
  std::map<std::uint32_t, std::string> down;  // first link id of a cable -> name
  long long cables = 0;
  for (const auto& [ends, ids] : ix.cables) {
    cables += static_cast<long long>(ids.size());
    for (std::size_t k = 0; k < ids.size(); ++k)
      if (hit[ids[k]] || hit[ids[k] + 1]) {
        const Link& L = t.links()[ids[k]];
        down[ids[k]] = fmt::format("{}-{}#{}", fabric_device_name(t.devices()[L.src]),
                                   fabric_device_name(t.devices()[L.dst]), k);
      }
  }
  for (const auto& [id, name] : down) out.cables.push_back(name);
  out.cable_fraction =
      cables > 0 ? static_cast<double>(down.size()) / static_cast<double>(cables) : 0;
  c.failures = out;
  return out;
}

}  // namespace tutti
