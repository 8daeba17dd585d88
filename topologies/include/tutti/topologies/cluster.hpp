#pragma once
// A cluster: catalog hardware wired into a fabric, with its routed Topology, the derived facts
// (switch counts per tier, bisection, diameter) and a bill of materials.
//
//   Cluster c = load_cluster("topologies/dgx-h100-superpod-1su.json", {"nodes=16"});
//   c.topology->route(0, 255, flow_hash, path);      // link ids, GPU index == rank
//   c.bom.network_capex_usd;                         // switches + optics + cables
//
// The cluster file format is documented by schemas/cluster.schema.json and topologies/README.md.
// make_cluster() builds the same thing from parameters (planner, validation) through the same
// parser, so both paths apply the same checks.
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tutti/core/config.hpp"
#include "tutti/topologies/fabric.hpp"
#include "tutti/topologies/hardware.hpp"
#include "tutti/topologies/prices.hpp"
#include "tutti/topologies/topology.hpp"

namespace tutti {

/// One line of a bill of materials.
struct BomLine {
  std::string category;  ///< "switch", "transceiver", "cable", "nic", "node", "storage"
  std::string
      role;  ///< "leaf", "spine", "core", "router", "switch side", "node side", tier name...
  std::string id, name;  ///< Catalog entry.
  long long count = 0;
  double unit_price_usd = 0, unit_power_W = 0;
  bool network = false;   ///< Counted in network capex/power (switches, optics, cables).
  bool estimate = false;  ///< The catalog marks the unit price as an estimate.
  PriceOrigin origin = PriceOrigin::Catalog;  ///< Where unit_price_usd came from (None: no price).
  double price_usd() const { return unit_price_usd * static_cast<double>(count); }
  double power_W() const { return unit_power_W * static_cast<double>(count); }
};

struct Bom {
  std::vector<BomLine> lines;
  double network_capex_usd = 0, network_power_W = 0;  ///< Switches, transceivers, cables.
  double compute_capex_usd = 0,
         compute_power_W = 0;  ///< Nodes (GPUs and NICs included), nameplate.
  double storage_capex_usd = 0, storage_power_W = 0;
  double total_capex_usd() const {
    return network_capex_usd + compute_capex_usd + storage_capex_usd;
  }
  long long transceivers = 0, cables = 0, switches = 0;
  /// Origins of the three sums (combine() over their lines).
  PriceOrigin network_origin = PriceOrigin::Catalog, compute_origin = PriceOrigin::Catalog,
              storage_origin = PriceOrigin::Catalog;
};

/// Where each price a cluster's cost uses came from (catalog, estimate, user, none).
struct PriceOrigins {
  PriceOrigin gpu = PriceOrigin::Catalog;          ///< GpuSpec::price_usd.
  PriceOrigin cloud = PriceOrigin::None;           ///< GpuSpec::cloud_usd_per_hour.
  PriceOrigin electricity = PriceOrigin::Catalog;  ///< FacilitySpec::electricity_usd_per_J.
  PriceOrigin buildout = PriceOrigin::Catalog;     ///< FacilitySpec::buildout_usd_per_W.
  PriceOrigin rack_space = PriceOrigin::None;      ///< Cluster::rack_usd_per_s.
  std::string file, source;                        ///< The prices file applied ("" = none).
};

/// Failures applied to a cluster (failures.hpp apply_failures): what is down, by name.
struct AppliedFailures {
  std::vector<std::string> cables;    ///< "leaf0-spine1#0", in link-id order.
  std::vector<std::string> switches;  ///< "spine3", in device order.
  std::string request;  ///< The flags as given ("--fail link=... --fail-rate ... --seed 1").
  /// Scale-out cables down (failed switches' cables not counted), as a fraction of all of them.
  double cable_fraction = 0;
  bool empty() const { return request.empty(); }
};

struct Cluster {
  std::string name, file, description;
  GpuSpec gpu;
  NodeSpec node;
  int nodes = 1;
  int gpus_per_node = 8;  ///< node.gpus unless the file sets gpus_per_node (cpu-node ranks).
  NicSpec nic;
  FabricSpec fabric;        ///< As resolved (planes, link speed, switch ids filled in).
  FabricFacts facts;        ///< Switch counts, cables, bisection, diameter.
  TransportSpec transport;  ///< Catalog preset with the file's overrides.
  SwitchSpec leaf_switch, spine_switch, core_switch;
  OpticSpec switch_optic, node_optic, cable;  ///< id empty = none (integrated cables).
  StorageSpec storage;                        ///< id empty = none.
  int storage_units = 0;
  FacilitySpec facility;  ///< Preset with the file's overrides applied.
  int nodes_per_rack = 1;
  int racks = 1;  ///< Compute racks (network and storage racks not counted).
  std::shared_ptr<const Topology> topology;
  Bom bom;
  double rack_usd_per_s = 0;  ///< Rack space / colocation per compute rack (0 = not charged).
  PriceOrigins price_origins;
  AppliedFailures
      failures;  ///< Empty unless apply_failures ran (the topology then routes around them).

  int gpus() const { return nodes * gpus_per_node; }
  /// GPUs per NVLink domain (72 on NVL72; the node's GPUs otherwise).
  int domain_gpus() const;
};

/// Where a job of `job_gpus` ranks sits on the cluster: ranks fill NVLink domains (and nodes) in
/// order, so "512 of 576 GPUs: 7 full NVLink domains of 72 + 8 GPUs of the next; 64 GPUs idle".
std::string describe_placement(const Cluster& c, int job_gpus);

/// Applies the user's prices on top of the catalog's: GPU, node, switch, NIC, optic and storage
/// prices by catalog id (the BOM lines are re-priced and the sums recomputed), the GPU's rental
/// price, electricity, build-out and rack space. A NIC quote puts the cluster's NICs on the
/// network bill (quote the server without its scale-out NICs then). Records every origin.
void apply_prices(Cluster& c, const Prices& p);

/// Reads a cluster file; `overrides` are `key.path=value` strings applied before parsing
/// (`--set`). Throws InputError naming file, key path, found and expected.
Cluster load_cluster(const std::string& path, const std::vector<std::string>& overrides = {});
/// Parses an already-loaded cluster document. `measure_diameter` false leaves
/// facts.diameter_* at 0 (FabricSpec::measure_diameter).
Cluster parse_cluster(const Doc& doc, bool measure_diameter = true);

/// Parameters for make_cluster (the common knobs; anything else through `sets`).
struct ClusterParams {
  std::string name = "generated";
  std::string node = "dgx-h100";  ///< Catalog node id.
  int nodes = 1;
  std::string fabric = "rail_optimized";  ///< FabricKind name ("none" for one node).
  double oversubscription = 1.0;
  std::string transport = "infiniband";  ///< "infiniband", "roce" or "srd" (EFA nodes only).
  std::string switch_id;                 ///< "" = the default switch for the NIC and transport.
  int nodes_per_su = 0;                  ///< 0 = the rail leaf's catalog scalable unit (else 32).
  std::string facility = "";             ///< "" = air-cooled, or liquid-cooled for liquid nodes.
  std::string storage = "";              ///< "" = none.
  int storage_units = 1;
  std::vector<std::string> sets;  ///< Extra `key.path=value` overrides.
  bool diameter = true;           ///< false: skip the diameter route walk (facts.diameter_* 0).
};
/// Builds a cluster from parameters, through the same parser and checks as load_cluster.
Cluster make_cluster(const ClusterParams& p);
/// The cluster document make_cluster parses (for saving a generated cluster to a file).
nlohmann::json cluster_document(const ClusterParams& p);

/// The `tutti topo --json` document: gpus, nodes, switches (per tier), bisection_bandwidth_Bps,
/// diameter, cables, transceivers, bom, network_capex_usd, network_power_W, ...
nlohmann::json to_json(const Cluster& c);

/// The default scale-out switch id for a NIC and transport: the NIC's catalog "switch" entry (""
/// when it names none; the cluster must then name fabric.switch).
std::string default_switch(const NicSpec& nic, const std::string& transport_kind);

}  // namespace tutti
