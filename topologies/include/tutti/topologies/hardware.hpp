#pragma once
// Hardware catalog entries, in SI units. Loaded from topologies/catalog/*.json, where every entry
// cites its source and lists which of its fields are estimates.
#include <array>
#include <string>
#include <vector>

#include "tutti/models/layout.hpp"

namespace tutti {

struct GpuSpec {
  std::string id, name;
  std::array<double, 5> peak_flops{};  ///< Dense FLOP/s indexed by DType (0 = unsupported).
  double hbm_bytes = 0;
  double hbm_bw_Bps = 0;
  double scaleup_bw_Bps = 0;  ///< NVLink/xGMI bandwidth per GPU, per direction.
  int pcie_gen = 0;
  double tdp_W = 0, idle_W = 0;
  double price_usd = 0;
  double cloud_usd_per_hour = 0;  ///< Rental price per GPU-hour (0 = unknown).
  std::string source;
  double peak(DType d) const { return peak_flops[static_cast<int>(d)]; }
};

enum class ScaleUp { NVSwitch, Mesh, PCIe };

struct NodeSpec {
  std::string id, name, gpu;    ///< gpu: GpuSpec id.
  int gpus = 8;
  ScaleUp scaleup = ScaleUp::NVSwitch;
  int nvlink_domain_gpus = 8;    ///< GPUs sharing one NVLink domain (72 for GB200 NVL72).
  int nics = 8;                  ///< Scale-out NICs (one per GPU on DGX).
  std::string nic;               ///< NicSpec id.
  double pcie_bw_Bps = 0;        ///< GPU<->NIC/host PCIe bandwidth per direction.
  double overhead_power_W = 0;   ///< CPUs, memory, fans, NICs, drives at load (excl. GPUs).
  double max_power_W = 0;        ///< Nameplate system power.
  double price_usd = 0;          ///< Whole server including GPUs.
  int rack_units = 8;
  std::string source;
};

struct NicSpec {
  std::string id, name;
  double bandwidth_Bps = 0;  ///< Per direction.
  double power_W = 0, price_usd = 0;
  std::string source;
};

struct SwitchSpec {
  std::string id, name;
  int radix = 64;
  double port_bw_Bps = 0;  ///< Per direction.
  double latency_s = 0;
  double power_W = 0, price_usd = 0;
  bool sharp = false;      ///< In-network reduction (SHARP) capable.
  std::string source;
};

struct OpticSpec {
  std::string id, name;
  double bandwidth_Bps = 0;
  double power_W = 0, price_usd = 0;  ///< Per transceiver (optic) or per cable.
  bool is_cable = false;
  std::string source;
};

struct StorageSpec {
  std::string id, name;
  double read_Bps = 0, write_Bps = 0;  ///< Aggregate for the system as configured.
  double capacity_bytes = 0;
  double price_usd = 0, power_W = 0;
  std::string source;
};

struct FacilitySpec {
  std::string id, name;
  bool liquid = false;
  double pue = 1.3;
  double rack_power_W = 40e3;       ///< Power (and heat) a rack may draw.
  double rack_cooling_W = 40e3;     ///< Heat the room can remove per rack.
  double total_cooling_W = 0;       ///< 0 = unlimited beyond per-rack.
  double electricity_usd_per_J = 0;
  double buildout_usd_per_W = 0;    ///< Facility capex per watt of IT capacity.
  std::string source;
};

}  // namespace tutti
