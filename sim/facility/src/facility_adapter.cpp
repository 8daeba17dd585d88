// Adapters: fill FacilityInputs from the workload, the cluster and a simulated iteration.
#include <algorithm>
#include <cstdint>
#include <map>

#include "tutti/facility/facility.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/sim/result.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

double checkpoint_bytes(const Workload& w) {
  const TrainingSpec& t = w.training;
  // Same accounting as the memory model (models/src/counting.cpp): weights in the compute dtype
  // (fp8 training keeps bf16 weights), optimizer state incl. fp32 master weights when mixed.
  double weights = is_gemm_only_dtype(t.dtype) ? 2.0 : dtype_bytes(t.dtype);
  bool mixed = !(t.dtype == DType::FP32 || t.dtype == DType::TF32);
  double optimizer = t.optimizer == Optimizer::Adam ? (mixed ? 12.0 : 8.0) : (mixed ? 8.0 : 4.0);
  return params(w) * (weights + optimizer);
}

double input_bytes_per_sample(const Workload& w) {
  const ModelSpec& m = w.model;
  switch (m.family) {
    case ModelFamily::Transformer:
    case ModelFamily::Encoder:
      return 4.0 * w.training.seq_len;  // uint32 token ids (vocabularies beyond 65,536)
    case ModelFamily::ViT:
      return double(m.tf.image_size) * m.tf.image_size * m.tf.channels;  // decoded uint8 pixels
    case ModelFamily::ResNet:
      return double(m.resnet.image_size) * m.resnet.image_size * m.resnet.channels;
    case ModelFamily::DLRM:
      return 4.0 * (m.dlrm.dense_features + double(m.dlrm.table_rows.size()));  // fp32 + int32 ids
  }
  return 0;
}

void fill_workload_inputs(FacilityInputs& in, const Workload& w) {
  in.checkpoint_bytes = checkpoint_bytes(w);
  in.samples_per_iteration = double(w.training.global_batch);
  in.tokens_per_iteration = tokens_per_iteration(w);
  // Per-sample bytes cover every family; per-token bytes are then unused.
  in.input_bytes_per_sample = input_bytes_per_sample(w);
}

IterationTimes iteration_times(const SimResult& r) {
  return {r.iteration_time_s, r.gemm_busy_s, r.memory_busy_s, r.comm_busy_s};
}

std::vector<std::vector<int>> switch_failure_domains(const Cluster& c) {
  std::vector<std::vector<int>> out;
  if (!c.topology) return out;
  const auto& dev = c.topology->devices();
  // For each NIC, the one switch all its access links enter (-1: none, -2: more than one).
  std::vector<std::int64_t> only(dev.size(), -1);
  for (const Link& l : c.topology->links()) {
    if (l.tier != Tier::Access || dev[l.src].kind != DeviceKind::NIC ||
        dev[l.dst].kind != DeviceKind::Switch)
      continue;
    std::int64_t& o = only[l.src];
    if (o == -1)
      o = l.dst;
    else if (o != static_cast<std::int64_t>(l.dst))
      o = -2;
  }
  std::map<std::int64_t, std::vector<int>> by_switch;  // ordered by device id: deterministic
  for (std::size_t d = 0; d < dev.size(); ++d)
    if (only[d] >= 0) by_switch[only[d]].push_back(static_cast<int>(dev[d].node));
  for (auto& [sw, nodes] : by_switch) {
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    out.push_back(std::move(nodes));
  }
  return out;
}

void fill_cluster_inputs(FacilityInputs& in, const Cluster& c) {
  in.gpu_name = c.gpu.name;
  in.gpus = c.gpus();
  in.nodes = c.nodes;
  in.gpus_per_node = c.gpus_per_node;
  in.nics = c.nodes * c.node.nics;
  in.switches = static_cast<int>(c.bom.switches);
  // A leaf (or router) failure cuts every NIC port on it; with one plane that is a rank's only
  // path, so the job stops. Dual-plane NICs keep the other plane. Spines and cores are multi-path.
  in.blocking_switches = static_cast<int>(switch_failure_domains(c).size());
  in.racks = c.racks;
  in.nodes_per_rack = c.nodes_per_rack;
  in.reference_nodes_per_rack = c.node.nodes_per_rack;
  in.node_scaleout_Bps = c.nic.bandwidth_Bps * c.node.nics;
  in.gpu_host_Bps = c.node.pcie_bw_Bps;

  // Per-activity draws from topologies/catalog/gpu_power.json (each cited); the catalog GPU's idle
  // draw, or the file's idle fraction of TDP when the entry has none.
  in.gpu = gpu_power_model(builtin_gpu_power(), c.gpu.tdp_W, c.gpu.idle_W);
  in.node_overhead_W = c.node.overhead_power_W;
  in.node_max_power_W = c.node.max_power_W;
  in.network_power_W = c.bom.network_power_W;
  in.storage_power_W = c.bom.storage_power_W;

  const FacilitySpec& f = c.facility;
  in.facility_name = f.name;
  in.liquid = f.liquid;
  in.pue = f.pue;
  in.rack_power_W = f.rack_power_W;
  in.rack_cooling_W = f.rack_cooling_W;
  in.total_cooling_W = f.total_cooling_W;
  in.electricity_usd_per_J = f.electricity_usd_per_J;
  in.buildout_usd_per_W = f.buildout_usd_per_W;

  in.gpu_price_usd = c.gpu.price_usd;
  in.node_price_usd = c.node.price_usd;
  in.network_capex_usd = c.bom.network_capex_usd;
  in.storage_capex_usd = c.bom.storage_capex_usd;
  in.cloud_usd_per_gpu_hour = c.gpu.cloud_usd_per_hour;
  in.rack_usd_per_s = c.rack_usd_per_s;
  const PriceOrigins& po = c.price_origins;
  in.servers_origin = c.node.price_usd > 0 ? c.bom.compute_origin : po.gpu;
  in.network_origin = c.bom.network_origin;
  in.storage_origin = c.bom.storage_origin;
  in.buildout_origin = po.buildout;
  in.electricity_origin = po.electricity;
  in.cloud_origin = po.cloud;
  in.rack_origin = po.rack_space;
  in.prices_file = po.file;

  // Scale-out links (access and above) are the ones whose failures the reliability model counts.
  long long links = 0;
  for (const auto& g : c.facts.cables) links += g.count;
  in.network_links = static_cast<int>(links);
  if (!c.storage.id.empty()) {
    in.storage_read_Bps = c.storage.read_Bps * c.storage_units;
    in.storage_write_Bps = c.storage.write_Bps * c.storage_units;
  }
}

FacilityInputs facility_inputs(const Workload& w, const Cluster& c, const SimResult& r) {
  FacilityInputs in;
  fill_cluster_inputs(in, c);
  fill_workload_inputs(in, w);
  in.times = iteration_times(r);
  in.iterations = r.iterations;
  return in;
}

FacilityResult facility_for_run(const Workload& w, const Cluster& c, const Layout& l,
                                const SimOptions& so, const SimResult& r,
                                const FacilityOptions& o) {
  // SimGrid runs are too slow to repeat inside the fixed point: rescale its iteration instead.
  FacilityInputs in = facility_inputs(w, c, r);
  in.job_gpus = l.gpus();  // a job on part of the cluster: the other GPUs idle
  if (so.engine == "simgrid") return evaluate_facility(in, o);
  // The fixed point re-times the iteration at each trial slowdown with the analytic engine
  // (closed forms: milliseconds, where a flow-level re-simulation of 1,024 GPUs takes tens of
  // seconds) and adds its change to this engine's own times: compute-stream busy times scale
  // exactly with the slowdown in every engine, the iteration moves by the analytic delta.
  IterationTimes base = iteration_times(r);
  SimOptions fast = so;
  fast.engine = "analytic";
  fast.trace.path.clear();
  const double a1 =
      so.engine == "analytic" ? r.iteration_time_s : simulate(w, c, l, fast).iteration_time_s;
  Retimer engine = [&, base, fast, a1](double slowdown) {
    SimOptions again = fast;
    again.compute_slowdown = so.compute_slowdown * slowdown;
    IterationTimes t = base;
    t.gemm_busy_s = base.gemm_busy_s * slowdown;
    t.memory_busy_s = base.memory_busy_s * slowdown;
    const double delta = simulate(w, c, l, again).iteration_time_s - a1;
    t.iteration_s = std::max(base.iteration_s + delta, t.gemm_busy_s + t.memory_busy_s);
    return t;
  };
  return evaluate_facility(in, o, engine);
}

}  // namespace tutti
