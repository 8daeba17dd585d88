#pragma once
// Test fixtures for the engine tests: a small 2-level fat-tree Topology with optional NVSwitch
// nodes, a GPU spec and a profile with the latencies switched off.
#include <memory>
#include <string>
#include <vector>

#include "tutti/sim/calibration.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/topology.hpp"

namespace tutti::testing {

/// `leaves` leaf switches, each with `nodes_per_leaf` nodes of `gpus_per_node` GPUs (one NIC per
/// GPU on the leaf), `spines` spines with one link per leaf-spine pair. Inside a node (when
/// gpus_per_node > 1) GPUs talk through one NVSwitch. Routing: d-mod-k (spine = dst % spines).
class TestFatTree : public Topology {
 public:
  TestFatTree(int leaves, int nodes_per_leaf, int gpus_per_node, int spines, double nic_Bps,
              double nvlink_Bps, double leaf_spine_Bps, double latency_s) {
    spines_ = spines;
    gpus_per_leaf_ = nodes_per_leaf * gpus_per_node;
    num_gpus_ = leaves * gpus_per_leaf_;
    gpus_per_node_ = gpus_per_node;
    auto dev = [&](DeviceKind k, std::uint32_t idx, std::uint8_t lvl) {
      devices_.push_back({k, idx, lvl});
      return static_cast<std::uint32_t>(devices_.size() - 1);
    };
    auto link = [&](std::uint32_t a, std::uint32_t b, double bw, Tier t) {
      links_.push_back({a, b, bw, latency_s, t});
      return static_cast<std::uint32_t>(links_.size() - 1);
    };
    for (int g = 0; g < num_gpus_; ++g) gpu_device_.push_back(dev(DeviceKind::GPU, g, 0));
    int nodes = num_gpus_ / gpus_per_node;
    std::vector<std::uint32_t> nvs, leaf, spine;
    if (gpus_per_node > 1)
      for (int n = 0; n < nodes; ++n) nvs.push_back(dev(DeviceKind::NVSwitch, n, 0));
    for (int l = 0; l < leaves; ++l) leaf.push_back(dev(DeviceKind::Switch, l, 0));
    for (int s = 0; s < spines; ++s) spine.push_back(dev(DeviceKind::Switch, s, 1));
    for (int g = 0; g < num_gpus_; ++g) {
      if (gpus_per_node > 1) {
        nvl_up_.push_back(link(gpu_device_[g], nvs[g / gpus_per_node], nvlink_Bps, Tier::NVLink));
        nvl_down_.push_back(link(nvs[g / gpus_per_node], gpu_device_[g], nvlink_Bps, Tier::NVLink));
      }
      acc_up_.push_back(link(gpu_device_[g], leaf[g / gpus_per_leaf_], nic_Bps, Tier::Access));
      acc_down_.push_back(link(leaf[g / gpus_per_leaf_], gpu_device_[g], nic_Bps, Tier::Access));
    }
    for (int l = 0; l < leaves; ++l)
      for (int s = 0; s < spines; ++s) {
        ls_up_.push_back(link(leaf[l], spine[s], leaf_spine_Bps, Tier::LeafSpine));
        ls_down_.push_back(link(spine[s], leaf[l], leaf_spine_Bps, Tier::LeafSpine));
      }
  }
  void route(int src, int dst, std::uint64_t, std::vector<std::uint32_t>& out) const override {
    out.clear();
    if (gpus_per_node_ > 1 && src / gpus_per_node_ == dst / gpus_per_node_) {
      out.push_back(nvl_up_[src]);
      out.push_back(nvl_down_[dst]);
      return;
    }
    int ls = src / gpus_per_leaf_, ld = dst / gpus_per_leaf_;
    out.push_back(acc_up_[src]);
    if (ls != ld) {
      int s = dst % spines_;
      out.push_back(ls_up_[ls * spines_ + s]);
      out.push_back(ls_down_[ld * spines_ + s]);
    }
    out.push_back(acc_down_[dst]);
  }
  std::string describe() const override { return "test fat-tree"; }

 private:
  int spines_ = 1, gpus_per_leaf_ = 1;
  std::vector<std::uint32_t> nvl_up_, nvl_down_, acc_up_, acc_down_, ls_up_, ls_down_;
};

inline GpuSpec test_gpu() {
  GpuSpec g;
  g.id = "test-gpu";
  g.name = "test GPU";
  g.peak_flops = {60e12, 400e12, 1000e12, 1000e12, 2000e12};
  g.hbm_bytes = 80e9;
  g.hbm_bw_Bps = 3e12;
  return g;
}

/// Default profile with every efficiency 1 and every latency/overhead 0 (hand-checkable).
inline CalibrationProfile ideal_profile() {
  CalibrationProfile p = default_calibration();
  for (KernelModel* k : {&p.gemm, &p.attention, &p.membound}) {
    k->flops = {1.0, 0.0};
    k->bandwidth = {1.0, 0.0};
    k->half_dim = 0;
    k->launch_overhead_s = 0;
  }
  for (auto& t : p.tiers) t = {1.0, 0.0};
  for (auto& a : p.nccl.algorithms) {
    for (auto& b : a.base_latency_s)
      if (b > 0) b = 0;
    for (auto& h : a.step_latency_s) h = {0, 0, 0};
  }
  for (auto& pr : p.nccl.protocols) pr.bandwidth_efficiency = 1.0;
  p.nccl.p2p_latency_s = 0;
  return p;
}

inline SimCluster make_sim_cluster(std::shared_ptr<const Topology> topo) {
  SimCluster c;
  c.name = "test";
  c.topology = std::move(topo);
  c.gpu = test_gpu();
  return c;
}

}  // namespace tutti::testing
