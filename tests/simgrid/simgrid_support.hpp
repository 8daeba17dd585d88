#pragma once
// A small hand-built topology for the SimGrid tests that need no cluster file: `nodes` nodes of
// `g` GPUs on an NVSwitch, one NIC per GPU, one leaf switch per node, `spines` spines (ECMP by
// hash). Latencies differ per tier so route latencies are checkable.
#include <string>

#include "tutti/topologies/topology.hpp"

namespace tutti::testing {

class SmallTree final : public Topology {
 public:
  SmallTree(int nodes, int g, int spines, double nvlink_Bps = 450e9, double nic_Bps = 50e9,
            double uplink_Bps = 0)
      : nodes_(nodes), g_(g), spines_(spines) {
    if (uplink_Bps <= 0) uplink_Bps = nic_Bps;
    num_gpus_ = nodes * g;
    gpus_per_node_ = g;
    domain_gpus_ = g;  // one NVLink domain per node
    auto add_dev = [&](DeviceKind k, std::uint32_t idx, std::uint8_t lvl) {
      devices_.push_back(Device{k, idx, lvl, 0});
      return static_cast<std::uint32_t>(devices_.size() - 1);
    };
    for (int r = 0; r < num_gpus_; ++r) gpu_device_.push_back(add_dev(DeviceKind::GPU, r, 0));
    for (int n = 0; n < nodes; ++n) nvs_.push_back(add_dev(DeviceKind::NVSwitch, n, 0));
    for (int r = 0; r < num_gpus_; ++r) nic_.push_back(add_dev(DeviceKind::NIC, r, 0));
    for (int n = 0; n < nodes; ++n) leaf_.push_back(add_dev(DeviceKind::Switch, n, 0));
    for (int s = 0; s < spines; ++s) spine_.push_back(add_dev(DeviceKind::Switch, s, 1));
    auto add_link = [&](std::uint32_t a, std::uint32_t b, double bw, double lat, Tier t) {
      links_.push_back(Link{a, b, bw, lat, t});
      return static_cast<std::uint32_t>(links_.size() - 1);
    };
    for (int r = 0; r < num_gpus_; ++r) {
      up_nvs_.push_back(add_link(gpu_device_[r], nvs_[r / g], nvlink_Bps, 0.5e-6, Tier::NVLink));
      down_nvs_.push_back(add_link(nvs_[r / g], gpu_device_[r], nvlink_Bps, 0.5e-6, Tier::NVLink));
      up_nic_.push_back(add_link(gpu_device_[r], nic_[r], 64e9, 0.1e-6, Tier::PCIe));
      down_nic_.push_back(add_link(nic_[r], gpu_device_[r], 64e9, 0.1e-6, Tier::PCIe));
      up_leaf_.push_back(add_link(nic_[r], leaf_[r / g], nic_Bps, 1e-6, Tier::Access));
      down_leaf_.push_back(add_link(leaf_[r / g], nic_[r], nic_Bps, 1e-6, Tier::Access));
    }
    for (int n = 0; n < nodes; ++n)
      for (int s = 0; s < spines; ++s) {
        up_spine_.push_back(add_link(leaf_[n], spine_[s], uplink_Bps, 2e-6, Tier::LeafSpine));
        down_spine_.push_back(add_link(spine_[s], leaf_[n], uplink_Bps, 2e-6, Tier::LeafSpine));
      }
  }
  void route(int s, int d, std::uint64_t hash, std::vector<std::uint32_t>& out) const override {
    out.clear();
    if (s / g_ == d / g_) {
      out.push_back(up_nvs_[s]);
      out.push_back(down_nvs_[d]);
      return;
    }
    const int sp = static_cast<int>(hash % static_cast<std::uint64_t>(spines_));
    out.push_back(up_nic_[s]);
    out.push_back(up_leaf_[s]);
    out.push_back(up_spine_[(s / g_) * spines_ + sp]);
    out.push_back(down_spine_[(d / g_) * spines_ + sp]);
    out.push_back(down_leaf_[d]);
    out.push_back(down_nic_[d]);
  }
  std::string describe() const override { return "test tree"; }

 private:
  int nodes_, g_, spines_;
  std::vector<std::uint32_t> nvs_, nic_, leaf_, spine_;
  std::vector<std::uint32_t> up_nvs_, down_nvs_, up_nic_, down_nic_, up_leaf_, down_leaf_,
      up_spine_, down_spine_;
};

}  // namespace tutti::testing
