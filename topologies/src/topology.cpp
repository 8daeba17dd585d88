#include "tutti/topologies/topology.hpp"

#include "tutti/core/error.hpp"

namespace tutti {

std::string fabric_device_name(const Device& d) {
  switch (d.kind) {
    case DeviceKind::GPU:
      return "gpu" + std::to_string(d.index);
    case DeviceKind::NVSwitch:
      return "nvswitch" + std::to_string(d.index);
    case DeviceKind::NIC:
      return "nic" + std::to_string(d.index);
    case DeviceKind::Host:
      return "host" + std::to_string(d.index);
    case DeviceKind::Switch: {
      static const char* kLevel[] = {"leaf", "spine", "core"};
      return std::string(d.level < 3 ? kLevel[d.level] : "switch") + std::to_string(d.index);
    }
  }
  return "?";
}

std::string fabric_link_name(const Topology& t, std::uint32_t link) {
  const Link& L = t.links().at(link);
  return fabric_device_name(t.devices()[L.src]) + "->" + fabric_device_name(t.devices()[L.dst]);
}

double Topology::path_latency_s(const std::vector<std::uint32_t>& path) const {
  double t = 0;
  for (auto id : path) t += links_[id].latency_s;
  return t;
}

double Topology::path_bandwidth_Bps(const std::vector<std::uint32_t>& path) const {
  double bw = 0;
  for (auto id : path)
    bw = (bw == 0 || links_[id].bandwidth_Bps < bw) ? links_[id].bandwidth_Bps : bw;
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
  throw InputError(
      "--fail", "", "a " + describe() + " fabric",
      "a fat_tree, rail_optimized or dual_plane fabric (failures are modelled on Clos fabrics)");
}
}  // namespace tutti
