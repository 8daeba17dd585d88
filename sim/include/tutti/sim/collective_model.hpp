#pragma once
// Collectives as NCCL runs them: algorithm, protocol and channel choice like NCCL's tuner, and a
// decomposition into lock-step phases of GPU-to-GPU flows that the flow-level network (and the
// SimGrid reference engine) replay on routed paths.
//
// A CollectivePlan's time, on an otherwise idle fabric under CM02 max-min sharing, is
//     T = fixed_latency_s + sum over phases p of  repeat_p * step_time(p)
// where step_time(p) is the time for all flows of phase p, started together, to finish (each
// flow: its path latency, then its bytes at its max-min rate). The `repeat_p` steps of a phase
// are identical (a ring sends the same chunk size over the same pairs at every step), so:
//   * SimGrid replay: for each phase, `repeat` times: start all its flows, wait for all (barrier);
//     then add fixed_latency_s once.
//   * native engine: "macro flows" with bytes*k and latency*k standing for k steps (network.hpp:
//     scaling bytes and latencies by k scales an isolated timeline by k exactly), k = repeat
//     unless the run is paced in chunks of steps (engine.cpp, Pace: when contention moves the
//     slowest flow of a collective, each step waits for its own slowest flow).
// Flow bytes are wire bytes: payload / the protocol's bandwidth efficiency (LL 0.5, LL128 0.94),
// raised where a ceiling that is not the wire binds (the protocol's max_bandwidth per GPU link,
// e.g. LL's flag-checked stores; NVLS's multimem efficiency and algorithm-bandwidth ceiling), so
// that an idle fabric gives the ceiling's time in both engines.
//
// Algorithms and their decompositions (n ranks, N nodes, k ranks of the group per node,
// S = nccl-tests "size": all_reduce buffer, all_gather output, reduce_scatter input,
// all_to_all whole send buffer):
//   Ring      all_reduce 2(n-1) steps, all_gather / reduce_scatter n-1 steps, of S/(n*ch) bytes
//             per flow. One channel when N == 1 or k == 1. When N > 1 and k > 1, ch = k channels
//             (one per NIC, like NCCL's rings): channel c visits each node's ranks from local
//             rank c, and leaves the node from local rank c (PXN: the last rank hands the chunk to
//             rank c over NVLink, which sends it on its own rail to local rank c of the next node).
//   Tree      all_reduce, N > 1: NCCL's double binary tree over nodes (tree 1 mirrors tree 0), k
//             channels (rail c links local rank c of each node), chain inside the node;
//             pipelined, so one phase in which every tree edge carries S/(2k) up and S/(2k) down.
//   Nvls      all_reduce inside one NVLink domain with NVLS switches (k >= 2): in-switch
//             reduction; each GPU's uplink and downlink carry S(1+1/k). Flows i->j (j != i) of
//             S(1+1/k)/(k-1) bytes load every GPU port exactly like that. Across domains only
//             with CollNet (NCCL's NVLS + SHARP): pipelined with S/k per NIC as for CollNet.
//   NvlsTree  all_reduce, N > 1 domains with NVLS: the NVLS flows inside every domain pipelined
//             with the tree's double binary trees between domains (k rails, S/(2k) each way).
//   CollNet   (direct) all_reduce with SHARP switches, N > 1: intra-node ring reduce-scatter
//             (k-1 steps of S/k), one in-network step in which each rank's S/k slice goes up and
//             the result comes back (modelled as a flow of S/k to the same local rank of the next
//             node, which loads each NIC link with S/k per direction and the upper tiers lightly,
//             as SHARP does), intra-node ring all-gather (k-1 steps of S/k).
//   CollNetChain  all_reduce with SHARP: per channel c a chain through the node from local rank
//             c (S/k each way, pipelined) and local rank c's S/k reduced in the fabric.
//   Pat       all_gather / reduce_scatter, one GPU per node: distance doubling, at distance d
//             each rank sends min(d, n-d) blocks of S/n to rank i+d (ceil(log2 n) phases).
//   Hierarchical  (not NCCL; only with "non_nccl_algorithms": ["hierarchical"]) all_reduce,
//             N > 1, k > 1: intra-node ring reduce-scatter, then a ring all-reduce of S/k over
//             the N nodes on each rail (k concurrent rings), then an intra-node ring all-gather.
//   Direct    all_to_all (n <= 64): one phase, every i->j of S/n bytes; above 9 ranks the peers
//             are sampled: 8 evenly spaced shifts s, each flow i -> i+s carrying the bytes of the
//             (n-1)/8 peers it stands for (every GPU's volume is exact; the spread is sampled).
//   Pairwise  all_to_all: n-1 phases, shift s sends i -> i+s (S/n bytes). When n-1 > 16 the
//             phases are sampled: 16 evenly spaced shifts whose repeats add up to n-1.
//   NodeLimited  all_to_all of MoE tokens under node-limited routing (DeepSeek-V3: each token to
//             at most M nodes) with DeepEP's de-duplication, N > 1 domains: one phase. Per rank of
//             top-k t, the send buffer S holds t copies per token; a token crosses the fabric once
//             per destination node, D = min(M, N(1 - (1 - 1/N)^t)) nodes of which (N-1)/N remote:
//             S D/(t N) to the same local rank of every other node (rail-aligned RDMA), and is
//             forwarded (or delivered) over NVLink to its experts' GPUs: S/k to every domain-mate.
//   Chain     broadcast: pipelined chain root -> ... -> last, every hop carries S (one phase).
//   P2P       send/recv: one flow of S bytes.
// Latency (fixed_latency_s) is NCCL's (src/graph/tuning.cc ncclTopoTuneModel) with the profile's
// tables; intra = the algorithm's step latency on the node's link class, inter = its network
// step latency (the tree's when every node holds one rank):
//   ring: base + (steps - net_steps) * max(intra, net overhead) + net_steps * inter,
//         x ring_plateau_latency_factor for a multi-node Simple all-reduce;
//   tree: base + 2((k-1) intra + log2i(N) inter);  nvls: intra (+ inter across nodes);
//   nvls_tree: base + intra + 2 log2i(N) inter;  collnet direct: base + 2(min(1,k-1) intra +
//   (k-1) arity) + inter;  collnet chain: base + 2(k-1) intra + inter;  pat: base +
//   log2i(N) inter/3.5 + n pat_rank_latency;  broadcast: base + one step;
//   p2p and all_to_all: p2p_latency (all_to_all pairwise: per phase step).
// Bandwidth: the topology's per-GPU rates times NCCL's per algorithm/protocol factors (the
// profile's bandwidth_factor, else the protocol's payload fraction), the tree's size correction
// (treeCorrectionFactor), the LL ceiling and the NVLS efficiency and ceiling.
// The tuner evaluates every (algorithm, protocol) NCCL would enable here (its conditions are in
// algo_applies: NVLS only on NVLS-capable NVLink domains, CollNet only with enable_sharp =
// NCCL_COLLNET_ENABLE on a SHARP fabric, PAT with one GPU per node, LL128 only over NVLink) with
// these terms and picks the fastest, in NCCL's order on ties.
#include <cstdint>
#include <string>
#include <vector>

#include "tutti/models/program.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/topologies/topology.hpp"

namespace tutti {

/// NCCL's algorithms (Ring, Tree, Nvls, NvlsTree, CollNet = CollNet direct, CollNetChain, Pat;
/// Chain is NCCL's ring broadcast), tutti's all-to-all and p2p schedules (what NCCL's send/recv
/// groups do), and Hierarchical, which NCCL does not have (opt-in: "non_nccl_algorithms").
// clang-format off
#define TUTTI_COLL_ALGO_VALUES(X)                                                                 \
  X(Ring, "ring") X(Tree, "tree") X(Nvls, "nvls") X(NvlsTree, "nvls_tree") X(CollNet, "collnet_direct") \
  X(CollNetChain, "collnet_chain") X(Pat, "pat") X(Hierarchical, "hierarchical (non-NCCL)")         \
  X(Direct, "direct") X(Pairwise, "pairwise") X(Chain, "chain") X(P2P, "p2p")                     \
  X(NodeLimited, "node_limited")
// clang-format on
TUTTI_ENUM(CollAlgo, std::uint8_t, TUTTI_COLL_ALGO_VALUES);  // to_string from the table
/// False for algorithms NCCL does not have (Hierarchical).
bool is_nccl_algorithm(CollAlgo a);

struct CollFlow {
  int src_gpu = 0, dst_gpu = 0;
  double bytes = 0;  ///< Wire bytes of one step.
};

struct CollPhase {
  std::vector<CollFlow> flows;  ///< The flows of one step, started together.
  int repeat = 1;               ///< Identical lock-step steps.
};

struct CollectivePlan {
  CollAlgo algo = CollAlgo::Ring;
  NcclProto proto = NcclProto::Simple;
  int channels = 1;
  double fixed_latency_s = 0;  ///< NCCL software latency (base + per-step), added once.
  double estimate_s = 0;       ///< The tuner's uncontended alpha-beta estimate.
  std::vector<CollPhase> phases;
};

/// Topology facts the tuner needs, derived once per (topology, profile).
struct CollectiveContext {
  const Topology* topo = nullptr;
  const CalibrationProfile* profile = nullptr;
  bool nvls = false;        ///< NVSwitch nodes with in-switch reduction (H100 and later).
  bool sharp = false;       ///< Fabric switches with in-network reduction (SHARP).
  double intra_bw_Bps = 0;  ///< Per-GPU bandwidth to another GPU of its node (effective).
  double inter_bw_Bps = 0;  ///< Per-GPU bandwidth to the same GPU of another node (effective).
  double intra_lat_s = 0, inter_lat_s = 0;  ///< Path latencies of those routes.
  NcclHw intra_hw = NcclHw::NVLink;
  /// Node-limited MoE routing (Program::moe_max_nodes, 0 = off) and its top-k: all-to-alls
  /// across NVLink domains are planned as NodeLimited (DeepEP's de-duplicated dispatch).
  int a2a_topk = 0, a2a_max_nodes = 0;
};

/// Derives the context by routing GPU 0 -> 1 (intra) and GPU 0 -> gpus_per_node (inter).
/// `nvls` / `sharp` say what the hardware supports; the profile may still disable them.
CollectiveContext make_collective_context(const Topology& topo, const CalibrationProfile& profile,
                                          bool nvls, bool sharp);
/// The same, for running `program`: carries its node-limited MoE routing into the all-to-alls.
CollectiveContext make_collective_context(const Topology& topo, const CalibrationProfile& profile,
                                          bool nvls, bool sharp, const Program& program);

/// Plans one collective of `bytes` over the GPUs `group` (any order; regrouped by node).
/// A group of one GPU gives a plan with no phases and zero latency.
CollectivePlan plan_collective(Coll coll, double bytes, const std::vector<int>& group,
                               const CollectiveContext& ctx);
/// plan_collective(...).estimate_s without building the phases' flows (which only the
/// flow-level runs need): the analytic engine's per-group time.
double collective_estimate_s(Coll coll, double bytes, const std::vector<int>& group,
                             const CollectiveContext& ctx);

/// Forces an algorithm and protocol (tests, SimGrid cross-checks). Throws InputError when the
/// algorithm cannot run this collective on this group.
CollectivePlan plan_collective_with(Coll coll, double bytes, const std::vector<int>& group,
                                    const CollectiveContext& ctx, CollAlgo algo, NcclProto proto);

/// A point-to-point transfer of `bytes` from `src` to `dst`.
CollectivePlan plan_p2p(int src, int dst, double bytes, const CollectiveContext& ctx);

}  // namespace tutti
