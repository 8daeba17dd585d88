#include "tutti/topologies/topology.hpp"

#include "tutti/core/error.hpp"

namespace tutti {
const char* to_string(Tier t) {
  switch (t) {
    case Tier::NVLink: return "nvlink";
    case Tier::PCIe: return "pcie";
    case Tier::Access: return "access";
    case Tier::LeafSpine: return "leaf_spine";
    case Tier::SpineCore: return "spine_core";
    case Tier::Local: return "local";
    case Tier::Global: return "global";
    case Tier::Torus: return "torus";
  }
  return "?";
}
}  // namespace tutti

namespace tutti {
const char* to_string(DeviceKind k) {
  switch (k) {
    case DeviceKind::GPU: return "gpu";
    case DeviceKind::NVSwitch: return "nvswitch";
    case DeviceKind::NIC: return "nic";
    case DeviceKind::Switch: return "switch";
    case DeviceKind::Host: return "host";
  }
  return "?";
}

double Topology::path_latency_s(const std::vector<std::uint32_t>& path) const {
  double t = 0;
  for (auto id : path) t += links_[id].latency_s;
  return t;
}

double Topology::path_bandwidth_Bps(const std::vector<std::uint32_t>& path) const {
  double bw = 0;
  for (auto id : path) bw = (bw == 0 || links_[id].bandwidth_Bps < bw) ? links_[id].bandwidth_Bps : bw;
  return bw;
}

int Topology::switch_hops(const std::vector<std::uint32_t>& path) const {
  int n = 0;
  for (auto id : path) n += devices_[links_[id].dst].kind == DeviceKind::Switch;
  return n;
}
}  // namespace tutti

namespace tutti {
std::shared_ptr<const Topology> Topology::with_failures(const std::vector<std::uint32_t>&,
                                                        const std::vector<std::uint32_t>&) const {
  throw InputError("--fail", "", "a " + describe() + " fabric",
                   "a fat_tree, rail_optimized or dual_plane fabric (failures are modelled on Clos fabrics)");
}
}  // namespace tutti
