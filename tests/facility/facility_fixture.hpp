#pragma once
// A small hand-computable cluster shared by the facility tests: 2 nodes x 8 GPUs.
#include "tutti/facility/facility.hpp"

namespace tutti::testing {

inline FacilityInputs small_cluster() {
  FacilityInputs in;
  in.gpu_name = "test-gpu";
  in.gpus = 16;
  in.nodes = 2;
  in.gpus_per_node = 8;
  in.nics = 16;
  in.network_links = 32;
  in.gpu.tdp_W = 700;
  in.gpu.idle_W = 100;
  in.gpu.compute_frac = 1.0;
  in.gpu.memory_frac = 0.6;  // 420 W
  in.gpu.comm_frac = 0.4;    // 280 W
  in.gpu.overlap_extra_W = 20;
  in.node_overhead_W = 1000;
  in.node_max_power_W = 10000;
  in.network_power_W = 500;
  in.pue = 1.5;
  in.rack_power_W = 20000;
  in.rack_cooling_W = 20000;
  in.electricity_usd_per_J = 0.10 / 3.6e6;  // $0.10/kWh
  in.buildout_usd_per_W = 10;
  in.times = {10.0, 6.0, 2.0, 3.0};  // T, gemm, memory, comm
  in.iterations = 1000;
  in.tokens_per_iteration = 4e6;
  in.node_price_usd = 300000;
  in.network_capex_usd = 100000;
  in.storage_capex_usd = 50000;
  in.cloud_usd_per_gpu_hour = 4.0;
  in.checkpoint_bytes = 1e12;
  in.storage_read_Bps = 1e9;
  in.storage_write_Bps = 1e11;
  return in;
}

}  // namespace tutti::testing
