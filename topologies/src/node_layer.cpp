#include "node_layer.hpp"

#include <algorithm>

#include "tutti/core/error.hpp"

namespace tutti::detail {

std::uint32_t NodeLayer::add_device(DeviceKind k, std::uint32_t index, std::uint8_t level,
                                    std::uint32_t node) {
  devices_.push_back(Device{k, index, level, node});
  return static_cast<std::uint32_t>(devices_.size() - 1);
}

std::uint32_t NodeLayer::add_cable(std::uint32_t a, std::uint32_t b, double bw_ab, double lat_ab,
                                   double bw_ba, double lat_ba, Tier t) {
  links_.push_back(Link{a, b, bw_ab, lat_ab, t});
  links_.push_back(Link{b, a, bw_ba, lat_ba, t});
  return static_cast<std::uint32_t>(links_.size() - 2);
}

void NodeLayer::build_nodes(const FabricHardware& hw, const FabricSpec& spec) {
  nodes_ = hw.nodes;
  gpus_per_node_ = hw.gpus_per_node;
  num_gpus_ = nodes_ * gpus_per_node_;
  nics_per_node_ = hw.node.nics;
  scaleup_ = hw.node.scaleup;
  domain_gpus_ = scaleup_ == ScaleUp::NVSwitch
                     ? std::max(hw.node.nvlink_domain_gpus, gpus_per_node_)
                     : gpus_per_node_;
  nic_latency_s_ = hw.nic.latency_s;
  pxn_ = spec.pxn && scaleup_ == ScaleUp::NVSwitch;
  const int G = num_gpus_;

  devices_.reserve(static_cast<std::size_t>(G) * 3);
  gpu_device_.resize(static_cast<std::size_t>(G));
  for (int g = 0; g < G; ++g)
    gpu_device_[g] = add_device(DeviceKind::GPU, static_cast<std::uint32_t>(g), 0,
                                static_cast<std::uint32_t>(g / gpus_per_node_));
  scaleup_dev_base_ = static_cast<std::uint32_t>(devices_.size());
  if (scaleup_ == ScaleUp::NVSwitch) {
    int domains = (G + domain_gpus_ - 1) / domain_gpus_;
    for (int d = 0; d < domains; ++d)
      add_device(DeviceKind::NVSwitch, static_cast<std::uint32_t>(d), 0,
                 static_cast<std::uint32_t>(d * domain_gpus_ / gpus_per_node_));
  } else if (scaleup_ == ScaleUp::PCIe || scaleup_ == ScaleUp::SharedMemory) {
    for (int n = 0; n < nodes_; ++n)
      add_device(DeviceKind::Host, static_cast<std::uint32_t>(n), 0, static_cast<std::uint32_t>(n));
  }
  nic_dev_base_ = static_cast<std::uint32_t>(devices_.size());
  for (int i = 0; i < nodes_ * nics_per_node_; ++i)
    add_device(DeviceKind::NIC, static_cast<std::uint32_t>(i), 0,
               static_cast<std::uint32_t>(i / nics_per_node_));

  // Scale-up and GPU/host -> NIC links, reserved at once (a 131k-GPU cluster has ~10^6 links;
  // growing the vector by doubling copied and page-faulted it several times).
  {
    const auto g = static_cast<std::size_t>(G), nics = static_cast<std::size_t>(nics_total());
    const auto n = static_cast<std::size_t>(gpus_per_node_);
    std::size_t scaleup = scaleup_ == ScaleUp::Mesh ? static_cast<std::size_t>(nodes_) * n *
                                                          (std::max<std::size_t>(n, 1) - 1)
                                                    : 2 * g;
    std::size_t pcie =
        scaleup_ == ScaleUp::NVSwitch || scaleup_ == ScaleUp::Mesh ? 2 * g : 2 * nics;
    links_.reserve(links_.size() + scaleup + pcie);
  }
  // Scale-up links.
  const double su_lat = spec.scaleup_latency_s, pcie_lat = spec.pcie_latency_s;
  const double pcie_bw = hw.node.pcie_bw_Bps;
  scaleup_link_base_ = static_cast<std::uint32_t>(links_.size());
  switch (scaleup_) {
    case ScaleUp::NVSwitch:
      for (int g = 0; g < G; ++g)
        add_cable(gpu_device_[g], scaleup_dev_base_ + static_cast<std::uint32_t>(g / domain_gpus_),
                  hw.gpu.scaleup_bw_Bps, su_lat, hw.gpu.scaleup_bw_Bps, su_lat, Tier::NVLink);
      break;
    case ScaleUp::Mesh: {
      // One directed link per ordered pair (i, j), i != j, in the order the route formula uses.
      const int n = gpus_per_node_;
      const double bw = n > 1 ? hw.gpu.scaleup_bw_Bps / (n - 1) : 0;
      for (int node = 0; node < nodes_; ++node)
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) {
            if (i == j) continue;
            links_.push_back(Link{gpu_device_[node * n + i], gpu_device_[node * n + j], bw, su_lat,
                                  Tier::NVLink});
          }
      break;
    }
    case ScaleUp::PCIe:
    case ScaleUp::SharedMemory: {
      const bool shm = scaleup_ == ScaleUp::SharedMemory;
      const double bw = shm ? hw.gpu.scaleup_bw_Bps : pcie_bw;
      const double lat = shm ? su_lat : pcie_lat;
      for (int g = 0; g < G; ++g)
        add_cable(gpu_device_[g],
                  scaleup_dev_base_ + static_cast<std::uint32_t>(g / gpus_per_node_), bw, lat, bw,
                  lat, shm ? Tier::NVLink : Tier::PCIe);
      break;
    }
  }
  // GPU -> NIC (NVSwitch/mesh nodes: each GPU's PCIe path to its NIC) or host -> NIC.
  pcie_link_base_ = static_cast<std::uint32_t>(links_.size());
  if (scaleup_ == ScaleUp::NVSwitch || scaleup_ == ScaleUp::Mesh) {
    for (int g = 0; g < G; ++g)
      add_cable(gpu_device_[g], nic_device(nic_of(g)), pcie_bw, pcie_lat + nic_latency_s_, pcie_bw,
                pcie_lat, Tier::PCIe);
  } else {
    for (int i = 0; i < nodes_ * nics_per_node_; ++i)
      add_cable(scaleup_dev_base_ + static_cast<std::uint32_t>(i / nics_per_node_), nic_device(i),
                pcie_bw, pcie_lat + nic_latency_s_, pcie_bw, pcie_lat, Tier::PCIe);
  }
}

// A pair cut off by failures: name the GPUs as well as the NICs.
[[noreturn]] static void rethrow_unreachable(const InputError& e, int src, int dst) {
  if (e.file() != "--fail") throw e;
  throw InputError("--fail", "", fmt::format("gpu{} -> gpu{}: {}", src, dst, e.found()),
                   e.expected());
}

void NodeLayer::route_path(int src, int dst, std::uint64_t hash, int part,
                           std::vector<std::uint32_t>& out) const {
  try {
    route_path_impl(src, dst, hash, part, out);
  } catch (const InputError& e) {
    rethrow_unreachable(e, src, dst);
  }
}

int NodeLayer::paths(int src, int dst) const {
  try {
    return paths_impl(src, dst);
  } catch (const InputError& e) {
    rethrow_unreachable(e, src, dst);
  }
}

int NodeLayer::paths_impl(int src, int dst) const {
  if (src == dst || src / domain_gpus_ == dst / domain_gpus_) return 1;
  if (scaleup_ != ScaleUp::NVSwitch && src / gpus_per_node_ == dst / gpus_per_node_) return 1;
  if (scaleup_ == ScaleUp::NVSwitch && pxn_ && src % gpus_per_node_ != dst % gpus_per_node_)
    return fabric_paths(nic_of(src - src % gpus_per_node_ + dst % gpus_per_node_), nic_of(dst));
  return fabric_paths(nic_of(src), nic_of(dst));
}

void NodeLayer::route_path_impl(int src, int dst, std::uint64_t hash, int part,
                                std::vector<std::uint32_t>& out) const {
  out.clear();
  if (src == dst) return;
  const auto a = static_cast<std::uint32_t>(src), b = static_cast<std::uint32_t>(dst);
  const bool same_node = src / gpus_per_node_ == dst / gpus_per_node_;
  switch (scaleup_) {
    case ScaleUp::NVSwitch:
      if (src / domain_gpus_ == dst / domain_gpus_) {
        out.push_back(scaleup_link_base_ + 2 * a);
        out.push_back(scaleup_link_base_ + 2 * b + 1);
        return;
      }
      if (pxn_ && src % gpus_per_node_ != dst % gpus_per_node_) {
        // PXN: hop over NVLink to the local GPU on the destination's rail.
        const int relay = src - src % gpus_per_node_ + dst % gpus_per_node_;
        out.push_back(scaleup_link_base_ + 2 * a);
        out.push_back(scaleup_link_base_ + 2 * static_cast<std::uint32_t>(relay) + 1);
        out.push_back(pcie_link_base_ + 2 * static_cast<std::uint32_t>(relay));
        route_fabric_path(nic_of(relay), nic_of(dst), hash, part, out);
        out.push_back(pcie_link_base_ + 2 * b + 1);
        return;
      }
      out.push_back(pcie_link_base_ + 2 * a);
      route_fabric_path(nic_of(src), nic_of(dst), hash, part, out);
      out.push_back(pcie_link_base_ + 2 * b + 1);
      return;
    case ScaleUp::Mesh:
      if (same_node) {
        const std::uint32_t n = static_cast<std::uint32_t>(gpus_per_node_);
        std::uint32_t i = a % n, j = b % n;
        out.push_back(scaleup_link_base_ + (a / n * n + i) * (n - 1) + (j < i ? j : j - 1));
        return;
      }
      out.push_back(pcie_link_base_ + 2 * a);
      route_fabric_path(nic_of(src), nic_of(dst), hash, part, out);
      out.push_back(pcie_link_base_ + 2 * b + 1);
      return;
    case ScaleUp::PCIe:
    case ScaleUp::SharedMemory: {
      out.push_back(scaleup_link_base_ + 2 * a);
      if (!same_node) {
        const int na = nic_of(src), nb = nic_of(dst);
        out.push_back(pcie_link_base_ + 2 * static_cast<std::uint32_t>(na));
        route_fabric_path(na, nb, hash, part, out);
        out.push_back(pcie_link_base_ + 2 * static_cast<std::uint32_t>(nb) + 1);
      }
      out.push_back(scaleup_link_base_ + 2 * b + 1);
      return;
    }
  }
}

void NodeLayer::measure_diameter(FabricFacts& f) const {
  std::vector<std::uint32_t> path;
  path.reserve(32);
  int hops = 0, links = 0;
  const int G = num_gpus_;
  // Sources: the first GPU, the last GPU and one GPU on another rail (fabrics are symmetric
  // enough that the worst route starts at one of these).
  int sources[3] = {0, G - 1, std::min(G - 1, gpus_per_node_ / 2 + gpus_per_node_ * (nodes_ / 2))};
  for (int s : sources)
    for (int d = 0; d < G; ++d) {
      if (d == s) continue;
      route(s, d, static_cast<std::uint64_t>(d) * 7919u, path);
      hops = std::max(hops, switch_hops(path));
      links = std::max(links, static_cast<int>(path.size()));
    }
  f.diameter_switch_hops = hops;
  f.diameter_links = links;
}

}  // namespace tutti::detail
