#pragma once
#include "tutti/core/enum.hpp"
// Hardware catalog entries, in SI units. Loaded from topologies/catalog/*.json (embedded in the
// binary at build time), where every entry cites its source and lists which of its fields are
// estimates. Field names carry their unit (`_Bps` bytes/s per direction, `_W` watts, `_s`
// seconds, `_usd` dollars, `_bytes`). A value of 0 means "unknown / not applicable" unless noted.
#include <array>
#include <string>
#include <vector>

#include "tutti/models/layout.hpp"

namespace tutti {

struct GpuSpec {
  std::string id, name;
  std::string vendor;  ///< "nvidia", "amd", "intel", "cpu".
  std::array<double, kNumDTypes>
      peak_flops{};  ///< Dense FLOP/s indexed by DType (0 = unsupported).
  double hbm_bytes = 0;
  double hbm_bw_Bps = 0;
  double scaleup_bw_Bps = 0;  ///< NVLink/xGMI bandwidth per GPU, per direction (0 = none).
  std::string scaleup_link;   ///< "NVLink 4", "Infinity Fabric", "" for none.
  int pcie_gen = 0;
  double tdp_W = 0, idle_W = 0;
  double price_usd = 0;
  double cloud_usd_per_hour = 0;  ///< Rental price per GPU-hour (0 = unknown).
  std::string cloud_price_note;   ///< Which offer and date the cloud price is.
  /// The system this GPU usually ships in (a NodeSpec id: "dgx-h100", "gb200-nvl72"): what
  /// `validate` assumes when a published case names only the GPU. "" = none in the catalog.
  std::string usual_node;
  /// The chip's architecture family ("volta", "ampere", "ada", "hopper", "blackwell",
  /// "amd-cdna", "gaudi", "cpu"): how `validate` groups its cases (catalog `generation`).
  std::string generation;
  std::string source;
  std::vector<std::string> estimates;  ///< JSON field names whose values are estimates.
  double peak(DType d) const { return peak_flops[static_cast<int>(d)]; }
};

/// How the GPUs of one node (or NVLink domain) talk to each other.
/// NVSwitch: non-blocking switch, one switch device per NVLink domain; Mesh: direct GPU-GPU links,
/// fully connected (xGMI, Gaudi RoCE, NVLink mesh); PCIe: through the host PCIe tree (one root
/// device per node); SharedMemory: CPU ranks of one host sharing memory (the "cpu-node" for local
/// MPI runs).
// clang-format off
#define TUTTI_SCALE_UP_VALUES(X) \
  X(NVSwitch, "nvswitch") X(Mesh, "mesh") X(PCIe, "pcie") X(SharedMemory, "shared_memory")
// clang-format on
TUTTI_ENUM(ScaleUp, int, TUTTI_SCALE_UP_VALUES);

struct NodeSpec {
  std::string id, name, gpu;  ///< gpu: GpuSpec id.
  int gpus = 8;
  ScaleUp scaleup = ScaleUp::NVSwitch;
  int nvlink_domain_gpus = 8;  ///< GPUs sharing one NVLink domain (72 for GB200 NVL72).
  int nvswitch_chips = 0;      ///< NVSwitch ASICs per node (informational, BOM).
  int nics = 8;                ///< Scale-out NICs (one per GPU on DGX).
  std::string nic;             ///< NicSpec id.
  int nic_transceivers =
      8;  ///< Scale-out transceiver cages on the node (4 twin-port OSFP on DGX H100).
  double pcie_bw_Bps = 0;       ///< GPU<->NIC/host PCIe bandwidth per direction.
  double overhead_power_W = 0;  ///< CPUs, memory, fans, NICs, drives at load (excl. GPUs).
  double max_power_W = 0;       ///< Nameplate system power.
  double price_usd = 0;         ///< Whole server including GPUs.
  int rack_units = 8;
  int nodes_per_rack = 0;  ///< Reference-design density (0 = derive from rack power).
  /// How the vendor cools the server (catalog `cooling`, required, cited in `source`): true for
  /// "liquid" (direct-to-chip cold plates: GB200/GB300 NVL72, MI355X), false for "air". Picks the
  /// facility preset a cluster gets when it names none (liquid-cooled or air-cooled).
  bool liquid_cooled = false;
  /// NVLink SHARP (NVLS): the NVSwitch reduces in the switch (third-generation NVSwitch, Hopper,
  /// and later). NCCL's NVLS algorithm then spans the whole NVLink domain (72 GPUs on NVL72).
  bool nvls = false;
  /// Nodes per scalable unit in the vendor's SuperPOD reference architecture for this server
  /// (catalog `nodes_per_su`, cited in `source`: 20 for DGX A100, 32 for DGX H100): the unit
  /// `validate` builds a published case's rail-optimized fabric on. 0 = none cited.
  int nodes_per_su = 0;
  std::string source;
  std::vector<std::string> estimates;
};

struct NicSpec {
  std::string id, name;
  double bandwidth_Bps = 0;  ///< Per direction, all ports together.
  int ports =
      1;  ///< Network ports (each at bandwidth_Bps / ports); a fabric gives each its own plane.
  double latency_s = 0;  ///< NIC traversal (host to wire), one way.
  double power_W = 0, price_usd = 0;
  std::string transport;  ///< "infiniband", "ethernet", "vpi" (either) or "srd" (AWS EFA).
  std::string optic;      ///< Default OpticSpec id for its cage ("" = integrated cable).
  /// The switch a fabric on this NIC uses unless the cluster names one (catalog "switch", per
  /// transport; "" = none stated: the cluster must name its switch).
  std::string ib_switch, eth_switch;
  std::string source;
  std::vector<std::string> estimates;
};

struct SwitchSpec {
  std::string id, name;
  int radix = 64;              ///< Ports at port_bw_Bps.
  double port_bw_Bps = 0;      ///< Per direction.
  double min_port_bw_Bps = 0;  ///< Slowest breakout speed supported (radix grows as speed drops).
  int cages = 0;               ///< Transceiver cages (QM9700: 32 OSFP cages of 2 x 400G).
  double latency_s = 0;
  double power_W = 0, price_usd = 0;  ///< Without optics (optics are separate BOM lines).
  bool sharp = false;                 ///< In-network reduction (SHARP) capable.
  std::string transport;              ///< "infiniband" or "ethernet".
  std::string optic;                  ///< Default OpticSpec id for its cages.
  std::string cable;  ///< Default OpticSpec id of the cable plugged into those optics.
  int rack_units = 1;
  /// Nodes per scalable unit (node ports of each rail leaf) in the vendor reference architecture
  /// that uses this switch as the rail leaf (catalog `nodes_per_su`, cited in `source`); the
  /// default of a rail_optimized / dual_plane fabric on it. 0: none cited (the generator takes 32,
  /// the DGX H100 SuperPOD's).
  int nodes_per_su = 0;
  std::string source;
  std::vector<std::string> estimates;
  /// Ports available when every port runs at `link_bw_Bps` (breakout), 0 if unsupported.
  int radix_at(double link_bw_Bps) const;
};

struct OpticSpec {
  std::string id, name;
  std::string kind;  ///< "transceiver", "fiber", "dac" or "aoc" (cables with integrated ends).
  /// "multimode" or "singlemode" (transceivers: both ends of a link must match), "fiber" (a patch
  /// cable of either), "copper" (DAC) or "integrated" (AOC).
  std::string media;
  double bandwidth_Bps = 0;
  int ports = 1;  ///< Network ports one transceiver serves (2 for twin-port OSFP).
  double power_W = 0, price_usd = 0;  ///< Per transceiver (optic) or per cable.
  double latency_s = 0;               ///< Propagation + retiming added to a link using it.
  bool is_cable = false;              ///< kind != "transceiver".
  std::string source;
  std::vector<std::string> estimates;
};

struct StorageSpec {
  std::string id, name;
  double read_Bps = 0, write_Bps = 0;  ///< Aggregate for the system as configured.
  double capacity_bytes = 0;
  double price_usd = 0, power_W = 0;
  int rack_units = 0;
  std::string source;
  std::vector<std::string> estimates;
};

struct FacilitySpec {
  std::string id, name;
  bool liquid = false;
  double pue = 1.3;
  double rack_power_W = 40e3;    ///< Power (and heat) a rack may draw.
  double rack_cooling_W = 40e3;  ///< Heat the room can remove per rack.
  double total_cooling_W = 0;    ///< 0 = unlimited beyond per-rack.
  double electricity_usd_per_J = 0;
  double buildout_usd_per_W = 0;  ///< Facility capex per watt of IT capacity.
  std::string source;
  std::vector<std::string> estimates;
};

/// Scale-out transport parameters (InfiniBand or RoCE). Applied to the scale-out links of a
/// cluster: link bandwidth = line rate x efficiency; each switch hop adds per_hop_latency_s.
struct TransportSpec {
  std::string id, name;
  std::string kind;              ///< "infiniband", "roce" or "srd" (AWS EFA).
  double efficiency = 1.0;       ///< Goodput / line rate (headers, ECN/PFC overhead).
  double per_hop_latency_s = 0;  ///< Added per switch traversal, on top of the switch latency.
  /// The transport spreads every flow's packets over all equal-cost paths itself (EFA's SRD):
  /// a Clos fabric on it routes "spray" unless the cluster names a routing.
  bool multipath = false;
  std::string source;
  std::vector<std::string> estimates;
};

}  // namespace tutti
