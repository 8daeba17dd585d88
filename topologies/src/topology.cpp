#include "tutti/topologies/topology.hpp"

#include "tutti/core/error.hpp"

namespace tutti {}  // namespace tutti

namespace tutti {

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
