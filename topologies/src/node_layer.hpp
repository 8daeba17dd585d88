#pragma once
// Private: the part of every topology inside the nodes (GPUs, NVSwitch/host, NICs and their
// links), and the shared routing of GPU -> NIC -> [fabric] -> NIC -> GPU. Fabric generators
// derive from NodeLayer and implement route_fabric() between two NIC ports.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tutti/core/format.hpp"
#include "tutti/topologies/fabric.hpp"
#include "tutti/topologies/topology.hpp"

namespace tutti::detail {

/// "400 Gb/s" from bytes per second (for messages).
inline std::string gbps(double Bps) {
  static constexpr Rung kGbps[] = {{kBelowAll, 8, 1e9, general(6), "Gb/s"}};
  return format_si(Bps, {kGbps});
}

/// splitmix64 finaliser: independent ECMP choices from one flow hash.
inline std::uint64_t mix(std::uint64_t h, std::uint64_t salt) {
  std::uint64_t z = h + 0x9e3779b97f4a7c15ULL * (salt + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class NodeLayer : public Topology {
 public:
  void route(int src, int dst, std::uint64_t hash, std::vector<std::uint32_t>& out) const final {
    route_path(src, dst, hash, -1, out);
  }
  /// part -1: the ECMP/d-mod-k route of `hash`; part >= 0: path `part` of a split flow.
  void route_path(int src, int dst, std::uint64_t hash, int part,
                  std::vector<std::uint32_t>& out) const final;
  int paths(int src, int dst) const final;
  int max_paths() const override { return 1; }

 private:
  void route_path_impl(int src, int dst, std::uint64_t hash, int part,
                       std::vector<std::uint32_t>& out) const;
  int paths_impl(int src, int dst) const;

 public:
  int nics_total() const { return nodes_ * nics_per_node_; }
  /// NIC (global index) a GPU uses for scale-out traffic.
  int nic_of(int gpu) const {
    int node = gpu / gpus_per_node_, local = gpu % gpus_per_node_;
    return node * nics_per_node_ + local * nics_per_node_ / gpus_per_node_;
  }
  /// Max switch hops / links over routes from a few sources to every GPU (diameter facts).
  void measure_diameter(FabricFacts& f) const;

 public:  // construction helpers, used by the generator functions
  /// Lays out GPUs, NVSwitch/host devices, NICs and the links between them.
  void build_nodes(const FabricHardware& hw, const FabricSpec& spec);
  /// Adds a device; returns its id.
  std::uint32_t add_device(DeviceKind k, std::uint32_t index, std::uint8_t level,
                           std::uint32_t node);
  /// Adds the two directions of a cable a<->b; returns the id of a->b (b->a is id + 1).
  std::uint32_t add_cable(std::uint32_t a, std::uint32_t b, double bw_ab, double lat_ab,
                          double bw_ba, double lat_ba, Tier t);
  void add_link(const Link& l) { links_.push_back(l); }
  /// Room for `more` links beyond those already added (one allocation for a generator's links).
  void reserve_links(std::size_t more) { links_.reserve(links_.size() + more); }
  std::uint32_t nic_device(int nic) const {
    return nic_dev_base_ + static_cast<std::uint32_t>(nic);
  }

 protected:
  /// Appends the links from NIC `a` to NIC `b` (different nodes). `dst_key` is b's NIC index
  /// (for d-mod-k); `hash` the flow hash.
  virtual void route_fabric(int a, int b, std::uint64_t hash,
                            std::vector<std::uint32_t>& out) const = 0;
  /// Equal-cost fabric paths a flow from NIC `a` to NIC `b` is split over (1: not split).
  virtual int fabric_paths(int /*a*/, int /*b*/) const { return 1; }
  /// Path `part` of fabric_paths(a, b); part -1 is route_fabric.
  virtual void route_fabric_path(int a, int b, std::uint64_t hash, int /*part*/,
                                 std::vector<std::uint32_t>& out) const {
    route_fabric(a, b, hash, out);
  }

  int nodes_ = 1, nics_per_node_ = 1;
  ScaleUp scaleup_ = ScaleUp::NVSwitch;
  std::uint32_t scaleup_dev_base_ = 0;  ///< NVSwitch (per domain) or Host (per node) devices.
  std::uint32_t nic_dev_base_ = 0;
  std::uint32_t scaleup_link_base_ = 0;  ///< GPU<->NVSwitch/host pairs, or mesh links.
  std::uint32_t pcie_link_base_ = 0;     ///< GPU<->NIC pairs, or host<->NIC pairs.
  double nic_latency_s_ = 0;
  bool pxn_ = false;
};

}  // namespace tutti::detail
