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
    domain_gpus_ = gpus_per_node;  // one NVLink domain per node
    auto dev = [&](DeviceKind k, std::uint32_t idx, std::uint8_t lvl) {
      devices_.push_back({k, idx, lvl, 0});
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
    k->half_time_s = k->tile = k->half_k = 0;
    k->launch_overhead_s = 0;
  }
  for (auto& t : p.tiers) t = {1.0, 0.0};
  for (auto& a : p.nccl.algorithms) {
    for (auto& b : a.base_latency_s)
      if (b > 0) b = 0;
    for (auto& h : a.step_latency_s) h = {0, 0, 0};
    a.bandwidth_factor = {0, 0, 0};  // the protocols' efficiency (1 below)
  }
  p.nccl.net_overhead_s = p.nccl.collnet_direct_arity_latency_s = p.nccl.pat_rank_latency_s = 0;
  for (auto& row : p.nccl.tree_size_correction) row.fill(1.0);
  for (auto& pr : p.nccl.protocols) {
    pr.bandwidth_efficiency = 1.0;
    pr.max_bandwidth_Bps = 0;
  }
  p.nccl.nvls_bandwidth_efficiency = 1.0;
  p.nccl.nvls_max_bandwidth_Bps = 0;
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

namespace tutti::testing {

/// An empty hand-built Program of tp x pp ranks (one sample, 1,024 tokens and 1e12 FLOP per
/// iteration): the tests add their rank classes.
inline Program small_program(int tp, int pp) {
  Program prog;
  prog.layout.tp = tp;
  prog.layout.pp = pp;
  prog.world = tp * pp;
  prog.samples_per_iteration = 1;
  prog.tokens_per_iteration = 1024;
  prog.model_flops_per_iteration = prog.hardware_flops_per_iteration = 1e12;
  return prog;
}

/// A hand-built 1F1B pipeline: p stages, m micro-batches; per micro-batch and stage a forward
/// GEMM (n^3) and a backward GEMM (2 n^3), each followed by a blocking TP all-reduce of
/// `tp_bytes` when tp > 1, and activation/gradient send/recv of `act_bytes` between stages.
/// An optional DP all-reduce of `dp_bytes` (dp > 1) after the last backward.
inline Program pipeline_program(int p, int m, int tp = 1, double act_bytes = 0, double tp_bytes = 0,
                                int n = 4096, int dp = 1, double dp_bytes = 0) {
  Program prog;
  prog.layout.tp = tp;
  prog.layout.pp = p;
  prog.layout.dp = dp;
  prog.world = tp * p * dp;
  prog.samples_per_iteration = m * dp;
  prog.tokens_per_iteration = m * dp * 1024.0;
  const double F = 2.0 * n * n * n;
  prog.model_flops_per_iteration = 3 * F * m * p * tp * dp;
  prog.hardware_flops_per_iteration = prog.model_flops_per_iteration;
  auto nm_f = prog.intern("fwd"), nm_b = prog.intern("bwd"), nm_s = prog.intern("send"),
       nm_r = prog.intern("recv"), nm_ar = prog.intern("tp_ar"), nm_dp = prog.intern("dp_ar");
  auto tag = [&](int boundary, int mb, int dir) {
    return static_cast<std::uint32_t>((mb * 2 + dir) * 4 * p + boundary);
  };
  for (int s = 0; s < p; ++s) {
    RankClass rc;
    rc.stage = s;
    rc.multiplicity = static_cast<std::uint32_t>(tp * dp);
    auto add = [&](Op op, std::vector<std::uint32_t> deps) {
      op.dep_begin = static_cast<std::uint32_t>(rc.deps.size());
      op.dep_count = static_cast<std::uint32_t>(deps.size());
      rc.deps.insert(rc.deps.end(), deps.begin(), deps.end());
      rc.ops.push_back(op);
      return static_cast<std::uint32_t>(rc.ops.size() - 1);
    };
    auto step = [&](int mb, bool fwd) {
      std::vector<std::uint32_t> deps;
      bool has_prev = fwd ? s > 0 : s < p - 1;
      if (has_prev) {
        Op r;
        r.kind = OpKind::Recv;
        r.stream = Stream::CommPP;
        r.name = nm_r;
        r.peer_delta = static_cast<std::int16_t>(fwd ? -1 : 1);
        r.tag = fwd ? tag(s - 1, mb, 0) : tag(s, mb, 1);
        r.bytes = act_bytes;
        r.microbatch = static_cast<std::uint32_t>(mb);
        r.phase = fwd ? Phase::Forward : Phase::Backward;
        deps.push_back(add(r, {}));
      }
      Op g;
      g.kind = OpKind::Gemm;
      g.name = fwd ? nm_f : nm_b;
      g.m = g.n = g.k = n;
      g.batch = fwd ? 1 : 2;
      g.flops = F * g.batch;
      g.microbatch = static_cast<std::uint32_t>(mb);
      g.phase = fwd ? Phase::Forward : Phase::Backward;
      std::uint32_t last = add(g, deps);
      if (tp > 1) {
        Op ar;
        ar.kind = OpKind::Collective;
        ar.stream = Stream::CommTP;
        ar.coll = Coll::AllReduce;
        ar.group = GroupDim::TP;
        ar.group_size = static_cast<std::uint32_t>(tp);
        ar.bytes = tp_bytes;
        ar.name = nm_ar;
        ar.microbatch = g.microbatch;
        ar.phase = g.phase;
        last = add(ar, {last});
        Op g2 = g;  // a small op that consumes the all-reduce result
        g2.kind = OpKind::MemBound;
        g2.bytes = 1e6;
        g2.flops = 0;
        last = add(g2, {last});
      }
      bool has_next = fwd ? s < p - 1 : s > 0;
      if (has_next) {
        Op sd;
        sd.kind = OpKind::Send;
        sd.stream = Stream::CommPP;
        sd.name = nm_s;
        sd.peer_delta = static_cast<std::int16_t>(fwd ? 1 : -1);
        sd.tag = fwd ? tag(s, mb, 0) : tag(s - 1, mb, 1);
        sd.bytes = act_bytes;
        sd.microbatch = g.microbatch;
        sd.phase = g.phase;
        add(sd, {last});
      }
      return last;
    };
    int warm = std::min(p - s - 1, m);
    std::uint32_t last = 0;
    for (int i = 0; i < warm; ++i) step(i, true);
    for (int i = 0; i < m - warm; ++i) {
      step(warm + i, true);
      last = step(i, false);
    }
    for (int i = m - warm; i < m; ++i) last = step(i, false);
    if (dp > 1) {
      Op ar;
      ar.kind = OpKind::Collective;
      ar.stream = Stream::CommDP;
      ar.coll = Coll::AllReduce;
      ar.group = GroupDim::DP;
      ar.group_size = static_cast<std::uint32_t>(dp);
      ar.bytes = dp_bytes;
      ar.name = nm_dp;
      ar.phase = Phase::Backward;
      ar.microbatch = static_cast<std::uint32_t>(m - 1);
      std::uint32_t a = add(ar, {last});
      Op opt;
      opt.kind = OpKind::MemBound;
      opt.bytes = 1e8;
      opt.phase = Phase::Optimizer;
      opt.name = prog.intern("optimizer");
      add(opt, {a});
    }
    prog.classes.push_back(std::move(rc));
  }
  return prog;
}

}  // namespace tutti::testing
