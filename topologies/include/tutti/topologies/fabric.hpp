#pragma once
#include "tutti/core/enum.hpp"
// Fabric generators: the scale-out network of a cluster, built from parameters into a Topology
// (devices, directed links, routing formula) plus the derived facts the bill of materials and
// the reports need (switch counts per tier, ports in use, cables, bisection, diameter).
//
// Generators (FabricKind):
//   FatTree        2- or 3-tier folded Clos, any leaf (and spine) oversubscription; the NICs of a
//                  node sit on consecutive leaf ports (top-of-rack style).
//   RailOptimized  NVIDIA SuperPOD style: scalable units (SU) of nodes_per_su nodes; NIC r of
//                  every node of an SU goes to that SU's rail-r leaf; spines (and a core tier
//                  beyond what 2 tiers reach) above. Same routing as FatTree.
//   DualPlane      Alibaba HPN style: every NIC has one port in each of `planes` independent
//                  rail-optimized Clos planes (each port at NIC bandwidth / planes).
//   RailOnly       Wang et al., "How to Build Low-cost Networks for Large Language Models (without
//                  Sacrificing Performance)", arXiv:2307.12169: no switch joins two rails; rail r
//                  of every node is one switch (a 2-tier Clos when the nodes exceed its ports),
//                  and traffic to another rail crosses NVLink to the source node's GPU on the
//                  destination's rail first (PXN, always on). NVSwitch nodes only.
//   Dragonfly      groups of routers, all-to-all local links, global links between groups;
//                  minimal routing (local, global, local).
//   Torus          2D/3D torus of routers, nics_per_router NICs each; dimension-order routing.
//   None           a single node (no scale-out fabric).
// Routing on Clos fabrics (Routing): ECMP with a deterministic hash (Ecmp: each flow takes one
// of the equal-cost paths, so flows can collide on a link while others idle), d-mod-k on the
// destination (DModK), adaptive routing (Adaptive: InfiniBand AR, Spectrum-X) and per-packet
// spraying (Spray). The last two are modelled the same way, as the fluid limit of per-packet
// load balancing: every flow is split evenly over its equal-cost paths (Topology::paths /
// route_path; one subflow per plane and leaf uplink; see src/clos.cpp for the 3-tier case).
// A multipath transport (catalog transports.json "multipath": EFA's SRD) makes Spray the default
// on Clos fabrics. All are O(path length) formulas, no graph search.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tutti/topologies/hardware.hpp"
#include "tutti/topologies/topology.hpp"

namespace tutti {

// clang-format off
#define TUTTI_FABRIC_KIND_VALUES(X)                                                                  \
  X(None, "none") X(FatTree, "fat_tree") X(RailOptimized, "rail_optimized") X(DualPlane, "dual_plane") \
  X(RailOnly, "rail_only") X(Dragonfly, "dragonfly") X(Torus, "torus")
// clang-format on
TUTTI_ENUM(FabricKind, int, TUTTI_FABRIC_KIND_VALUES);
// to_string / parse_enum for FabricKind and Routing come from their tables (core/enum.hpp):
// "none", "fat_tree", "rail_optimized", ...; "ecmp", "dmodk", "adaptive", "spray".
// clang-format off
#define TUTTI_ROUTING_VALUES(X) X(Ecmp, "ecmp") X(DModK, "dmodk") X(Adaptive, "adaptive") X(Spray, "spray")
// clang-format on
TUTTI_ENUM(Routing, int, TUTTI_ROUTING_VALUES);
/// True for the routings that split a flow over its equal-cost paths (Adaptive, Spray).
inline bool splits_flows(Routing r) {
  return r == Routing::Adaptive || r == Routing::Spray;
}

/// Parameters of a fabric as written in a cluster file's "fabric" section (SI units).
/// Zero means "derive it" where noted.
struct FabricSpec {
  FabricKind kind = FabricKind::FatTree;
  std::string leaf_switch, spine_switch,
      core_switch;                      ///< Catalog ids (Dragonfly/Torus: leaf_switch = router).
  int tiers = 0;                        ///< Clos: 2 or 3; 0 = the fewest that fit.
  double oversubscription = 1.0;        ///< Leaf down:up port ratio (>= 1).
  double spine_oversubscription = 1.0;  ///< 3-tier: spine down:up ratio (>= 1).
  int nodes_per_su = 32;  ///< RailOptimized/DualPlane: nodes per scalable unit (= leaf down ports);
                          ///< RailOnly: node links per rail leaf, 0 = all nodes on one switch per
                          ///< rail when they fit, else radix * r / (r + 1).
  int leaf_down_ports = 0;  ///< FatTree: NIC ports per leaf; 0 = radix * r / (r + 1).
  int planes = 1;           ///< Independent planes (DualPlane: 2).
  double link_bw_Bps = 0;   ///< Scale-out port speed; 0 = NIC bandwidth / planes.
  Routing routing = Routing::Ecmp;
  /// RailOptimized/DualPlane: NCCL PXN-style routing. Traffic to a GPU of another rail first
  /// crosses NVLink to the source node's GPU on the destination's rail, then stays on that rail
  /// (no spine hop inside a scalable unit). NVSwitch nodes only.
  bool pxn = false;
  // Dragonfly
  int groups = 0, routers_per_group = 0, nics_per_router = 0, global_links_per_router = 0;
  // Torus
  std::vector<int> dims;  ///< Router grid, 2 or 3 dimensions (each >= 2).
  // Latencies that are not a catalog part's (estimates; see schemas/cluster.schema.json).
  double cable_latency_s =
      0;  ///< Propagation per scale-out cable; 0 = the cable's catalog latency.
  double scaleup_latency_s = 250e-9;  ///< Per NVLink/xGMI/shared-memory hop.
  double pcie_latency_s = 250e-9;     ///< Per GPU<->NIC/host PCIe hop.
  /// Not a file key: false skips the diameter route walk (FabricFacts::diameter_* stay 0). The
  /// planner, which never reports the diameter, builds its clusters so (ClusterParams::diameter).
  bool measure_diameter = true;
};

/// The hardware a fabric is built from (resolved from the catalog).
struct FabricHardware {
  NodeSpec node;
  GpuSpec gpu;
  NicSpec nic;
  int nodes = 1;
  int gpus_per_node = 8;         ///< Usually node.gpus (cpu-node: the rank count).
  SwitchSpec leaf, spine, core;  ///< Dragonfly/Torus use `leaf` as the router.
  TransportSpec transport;
  double cable_latency_s = 0;  ///< Propagation per scale-out cable.
};

/// Switches of one role (leaf, spine, core, router) in a built fabric.
struct SwitchGroup {
  std::string role;       ///< "leaf", "spine", "core", "router"
  std::string switch_id;  ///< Catalog id.
  int count = 0;
  int radix = 0;             ///< Ports at the fabric's link speed.
  long long ports_used = 0;  ///< Over all switches of the group.
  long long cages_used = 0;  ///< Transceiver cages holding at least one used port, summed.
};

/// Cables of one tier (each cable is two directed links).
struct CableGroup {
  Tier tier;
  long long count = 0;
  double bandwidth_Bps = 0;  ///< Per direction, per cable (line rate).
};

struct FabricFacts {
  std::string description;  ///< "rail-optimized fat-tree, 3 tiers, 2:1, ECMP"
  int tiers = 0;            ///< Switch tiers (Clos), 1 for dragonfly/torus, 0 for none.
  std::vector<SwitchGroup> switches;
  std::vector<CableGroup> cables;  ///< Scale-out tiers only (access and above).
  long long node_ports = 0;        ///< NIC ports cabled into the fabric (nics x planes).
  double link_bw_Bps = 0;          ///< Scale-out port line rate.
  /// Scale-out bisection bandwidth, one direction, line rate: the capacity crossing the worst
  /// balanced cut of the network (closed form per generator).
  double bisection_Bps = 0;
  int diameter_switch_hops = 0;  ///< Most switches on a route between two GPUs.
  int diameter_links = 0;        ///< Most links on a route between two GPUs.
};

/// Builds the topology. Throws InputError naming the part (e.g. "fabric.leaf_switch") when a
/// switch has too few ports for its links or the parameters do not describe a valid fabric.
/// `facts` receives the derived facts.
std::shared_ptr<const Topology> build_fabric(const FabricHardware& hw, const FabricSpec& spec,
                                             FabricFacts& facts,
                                             const std::string& file = "cluster");

}  // namespace tutti
