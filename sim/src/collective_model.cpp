#include "tutti/sim/collective_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tutti/core/error.hpp"

namespace tutti {

bool is_nccl_algorithm(CollAlgo a) {
  return a != CollAlgo::Hierarchical && a != CollAlgo::NodeLimited;  // NodeLimited: DeepEP
}

namespace {

constexpr int kMaxPairwisePhases = 16;
constexpr int kMaxDirectRanks = 64;
constexpr int kDirectSampledShifts = 8;

struct Geo {
  std::vector<std::vector<int>> nodes;  // group members per node, nodes in first-seen order
  std::vector<int> flat;                // members regrouped by node
  int n = 0, N = 0, k = 0;
  bool uniform = true;
};

Geo geometry(const std::vector<int>& group, const Topology& topo) {
  Geo g;
  g.n = static_cast<int>(group.size());
  g.flat.reserve(group.size());
  std::vector<int> node_ids;
  int max_node = -1;
  for (int r : group) {
    int nd = topo.domain_of(r);  // an NVLink domain is one "node" of the hierarchy
    // Groups usually list ranks in ascending order: same node as the last one, or a new node
    // above every node seen so far, both O(1); otherwise search (planner hot path).
    auto it = !node_ids.empty() && node_ids.back() == nd ? node_ids.end() - 1
              : nd > max_node                            ? node_ids.end()
                              : std::find(node_ids.begin(), node_ids.end(), nd);
    max_node = std::max(max_node, nd);
    if (it == node_ids.end()) {
      node_ids.push_back(nd);
      g.nodes.emplace_back();
      g.nodes.back().push_back(r);
    } else {
      g.nodes[static_cast<std::size_t>(it - node_ids.begin())].push_back(r);
    }
  }
  g.N = static_cast<int>(g.nodes.size());
  g.k = g.N ? static_cast<int>(g.nodes[0].size()) : 0;
  for (const auto& v : g.nodes) {
    if (static_cast<int>(v.size()) != g.k) g.uniform = false;
    for (int r : v) g.flat.push_back(r);
  }
  return g;
}

double min_capacity(const Topology& topo, const CalibrationProfile& prof,
                    const std::vector<std::uint32_t>& path, double* lat, bool* all_nvlink) {
  double c = std::numeric_limits<double>::infinity();
  *lat = 0;
  *all_nvlink = true;
  for (std::uint32_t l : path) {
    const Link& L = topo.links()[l];
    const TierModel& tm = prof.tier(L.tier);
    c = std::min(c, L.bandwidth_Bps * tm.bandwidth_efficiency);
    *lat += L.latency_s + tm.extra_latency_s;
    if (L.tier != Tier::NVLink) *all_nvlink = false;
  }
  return c;
}

// NCCL's log2i: floor(log2(x)) for x >= 1.
int log2i(double x) {
  int r = 0;
  while (x >= 2) {
    x /= 2;
    ++r;
  }
  return r;
}

bool nccl_algo_of(CollAlgo a, NcclAlgo* out) {
  switch (a) {
    case CollAlgo::Ring:
    case CollAlgo::Hierarchical:
    case CollAlgo::Chain:
      *out = NcclAlgo::Ring;
      return true;
    case CollAlgo::Tree:
      *out = NcclAlgo::Tree;
      return true;
    case CollAlgo::Nvls:
      *out = NcclAlgo::Nvls;
      return true;
    case CollAlgo::NvlsTree:
      *out = NcclAlgo::NvlsTree;
      return true;
    case CollAlgo::CollNet:
      *out = NcclAlgo::CollNet;
      return true;
    case CollAlgo::CollNetChain:
      *out = NcclAlgo::CollNetChain;
      return true;
    case CollAlgo::Pat:
      *out = NcclAlgo::Pat;
      return true;
    default:
      return false;
  }
}

double ring_bw(const Geo& g, const CollectiveContext& ctx) {
  if (g.N <= 1) return ctx.intra_bw_Bps;
  if (g.k <= 1 || !g.uniform) return ctx.inter_bw_Bps;
  return std::min(ctx.intra_bw_Bps, g.k * ctx.inter_bw_Bps);
}

// Wire bytes per payload byte of (algo, proto) on this geometry. 1 / the protocol's payload
// fraction, raised where a throughput ceiling other than the wire binds, so that flows (and the
// SimGrid replay of the same plan) take the ceiling's time on an idle fabric:
//   * the protocol's max_bandwidth: the payload rate on each GPU's bottleneck link (the ring's
//     per-GPU rate; the NIC for inter-node trees and in-network reductions) stays below it;
//   * NVLS: the S(1+1/k) per-port traffic moves at nvls_bandwidth_efficiency of the effective
//     NVLink rate, and the algorithm bandwidth S/t is at most nvls_max_bandwidth.
double wire_factor(CollAlgo algo, NcclProto proto, const Geo& g, const CollectiveContext& ctx,
                   double bytes = 0) {
  const NcclModel& m = ctx.profile->nccl;
  const NcclProtocol& P = m.protocols[static_cast<int>(proto)];
  double eff = P.bandwidth_efficiency;
  NcclAlgo na = NcclAlgo::Ring;
  if (nccl_algo_of(algo, &na)) {
    const double f = m.algorithms[static_cast<int>(na)].bandwidth_factor[static_cast<int>(proto)];
    if (f > 0) eff = f;
  }
  double w = 1.0 / eff;
  if (algo == CollAlgo::Tree && bytes > 0) {
    // NCCL's treeCorrectionFactor, indexed by log2i(bytes >> 6) in [0, 23).
    const double chunks = std::floor(bytes / 64);
    if (chunks >= 1) {
      const int ls = log2i(chunks);
      const double c =
          ls < 23 ? m.tree_size_correction[static_cast<int>(proto)][static_cast<std::size_t>(ls)]
                  : 1.0;
      if (c > 0) w /= c;
    }
  }
  if (algo == CollAlgo::Nvls || algo == CollAlgo::NvlsTree) {
    w /= m.nvls_bandwidth_efficiency;
    const double algbw = ctx.intra_bw_Bps / (w * (1.0 + 1.0 / g.k));
    if (m.nvls_max_bandwidth_Bps > 0 && algbw > m.nvls_max_bandwidth_Bps)
      w *= algbw / m.nvls_max_bandwidth_Bps;
    return w;
  }
  if (P.max_bandwidth_Bps > 0) {
    double link = ring_bw(g, ctx);
    if (g.N > 1 &&
        (algo == CollAlgo::Tree || algo == CollAlgo::CollNet || algo == CollAlgo::CollNetChain ||
         algo == CollAlgo::Hierarchical || algo == CollAlgo::Pat))
      link = ctx.inter_bw_Bps;
    if (algo == CollAlgo::Direct || algo == CollAlgo::Pairwise || algo == CollAlgo::P2P ||
        algo == CollAlgo::NodeLimited)
      link = g.N > 1 ? ctx.inter_bw_Bps : ctx.intra_bw_Bps;
    w = std::max(w, link / P.max_bandwidth_Bps);
  }
  return w;
}

// NCCL software latency of (algo, proto) for this collective and geometry: ncclTopoTuneModel's
// latencies[coll][a][p] (src/graph/tuning.cc), with the ring plateau of ncclTopoGetAlgoTime.
// intraLat is the algorithm's step latency on the node's link class; interLat its network step
// latency, or the tree's when every node holds one rank ("with ppn=1 latencies are fully
// exposed"). NCCL's graph latencyInter is 0 here: tutti adds each flow's path latency itself.
double fixed_latency(CollAlgo algo, NcclProto proto, Coll coll, const Geo& g,
                     const CollectiveContext& ctx, double bytes = 0) {
  const NcclModel& m = ctx.profile->nccl;
  const int p = static_cast<int>(proto);
  const int intra = static_cast<int>(ctx.intra_hw), net = static_cast<int>(NcclHw::Net);
  const int n = g.n, N = g.N, k = g.k;
  const bool one_per_node = N == n;
  auto A = [&](NcclAlgo a) -> const NcclAlgorithm& { return m.algorithms[static_cast<int>(a)]; };
  auto intra_lat = [&](NcclAlgo a) { return A(a).step_latency_s[intra][p]; };
  auto inter_lat = [&](NcclAlgo a) {
    return one_per_node ? A(NcclAlgo::Tree).step_latency_s[net][p] : A(a).step_latency_s[net][p];
  };
  switch (algo) {
    case CollAlgo::Ring: {
      const NcclAlgorithm& R = A(NcclAlgo::Ring);
      const int steps = coll == Coll::AllReduce ? 2 * (n - 1) : n - 1;
      const int net_steps = N > 1 ? (coll == Coll::AllReduce ? 2 * (N - 1) : N - 1) : 0;
      // Inter-node rings still launch every step through the proxy: the net overhead floors
      // the intra-node steps (x3 for Simple).
      const double overhead = N > 1 ? m.net_overhead_s * (proto == NcclProto::Simple ? 3 : 1) : 0.0;
      double lat = R.base_latency_s[p] +
                   (steps - net_steps) * std::max(intra_lat(NcclAlgo::Ring), overhead) +
                   net_steps * inter_lat(NcclAlgo::Ring);
      if (proto == NcclProto::Simple && N > 1 && coll == Coll::AllReduce &&
          bytes / (static_cast<double>(m.max_channels) * n) >= 64)
        lat *= m.ring_plateau_latency_factor;
      return lat;
    }
    case CollAlgo::Chain: {
      // Broadcast: NCCL's ring with the same channels on every rank adds one step latency.
      const NcclAlgorithm& R = A(NcclAlgo::Ring);
      return R.base_latency_s[p] + (N > 1 ? R.step_latency_s[net][p] : R.step_latency_s[intra][p]);
    }
    case CollAlgo::Hierarchical: {  // not NCCL: ring step latencies of its three stages
      const NcclAlgorithm& R = A(NcclAlgo::Ring);
      return R.base_latency_s[p] + 2 * (k - 1) * R.step_latency_s[intra][p] +
             2 * (N - 1) * R.step_latency_s[net][p];
    }
    case CollAlgo::Tree:
      return A(NcclAlgo::Tree).base_latency_s[p] +
             2 * ((k - 1) * intra_lat(NcclAlgo::Tree) + log2i(N) * inter_lat(NcclAlgo::Tree));
    case CollAlgo::Nvls:  // the base latency is replaced, not added to
      return intra_lat(NcclAlgo::Nvls) + (N > 1 ? inter_lat(NcclAlgo::Nvls) : 0.0);
    case CollAlgo::NvlsTree:
      return A(NcclAlgo::NvlsTree).base_latency_s[p] + intra_lat(NcclAlgo::NvlsTree) +
             2 * log2i(N) * inter_lat(NcclAlgo::NvlsTree);
    case CollAlgo::CollNet:
      return A(NcclAlgo::CollNet).base_latency_s[p] +
             2 * (std::min(1, k - 1) * intra_lat(NcclAlgo::CollNet) +
                  (k - 1) * m.collnet_direct_arity_latency_s) +
             inter_lat(NcclAlgo::CollNet);
    case CollAlgo::CollNetChain:
      return A(NcclAlgo::CollNetChain).base_latency_s[p] +
             2 * (k - 1) * intra_lat(NcclAlgo::CollNetChain) + inter_lat(NcclAlgo::CollNetChain);
    case CollAlgo::Pat:  // a logarithmic part and (still) a linear one
      return A(NcclAlgo::Pat).base_latency_s[p] + log2i(N) * (inter_lat(NcclAlgo::Pat) / 3.5) +
             n * m.pat_rank_latency_s;
    case CollAlgo::Direct:
    case CollAlgo::NodeLimited:
    case CollAlgo::P2P:
      return m.p2p_latency_s;
    case CollAlgo::Pairwise:
      return (n - 1) * m.p2p_latency_s;
  }
  return 0;
}

// Node-limited all-to-all (CollAlgo::NodeLimited): the fraction of a rank's send buffer S (t
// copies per token, t = top-k) on each fabric flow to a rail peer in another node, and on each
// NVLink flow to a domain-mate. A token goes once to each of its D destination nodes, D =
// min(M, N (1 - (1 - 1/N)^t)) (M the node limit; the expected distinct nodes of t uniform picks
// when M does not bind), its own node among them with probability 1/N per pick (so (N-1)/N of
// the D remote); the node it reaches forwards its copies to the experts' GPUs over NVLink, and
// copies for the sender's own node go there directly: all t copies but the 1/k that land on the
// receiving GPU itself cross NVLink, S/k per domain-mate.
struct NodeSplit {
  double inter = 0, intra = 0;
};
NodeSplit node_limited_split(const Geo& g, const CollectiveContext& ctx) {
  const double N = g.N, k = g.k, t = std::max(1, ctx.a2a_topk);
  const double D =
      std::min(static_cast<double>(ctx.a2a_max_nodes), N * (1.0 - std::pow(1.0 - 1.0 / N, t)));
  return {D / (t * N), 1.0 / k};
}

// Uncontended alpha-beta estimate of the transfer part (seconds), payload bytes S.
double transfer_estimate(CollAlgo algo, Coll coll, double S, const Geo& g,
                         const CollectiveContext& ctx, double S_net = 0) {
  const double n = g.n, N = g.N, k = g.k;
  switch (algo) {
    case CollAlgo::Ring: {
      double f = coll == Coll::AllReduce ? 2 * (n - 1) / n : (n - 1) / n;
      return f * S / ring_bw(g, ctx);
    }
    case CollAlgo::Chain:
      return S / ring_bw(g, ctx);
    case CollAlgo::Tree:
      return 2 * S /
             std::min(ctx.intra_bw_Bps > 0 ? ctx.intra_bw_Bps : 1e300, k * ctx.inter_bw_Bps);
    case CollAlgo::Nvls:
      // Inside one domain: every port moves S(1+1/k). Across domains (with SHARP): the same
      // inside each domain, pipelined with S/k per NIC to the switch and back.
      return std::max(S * (1 + 1 / k) / ctx.intra_bw_Bps,
                      N > 1 ? S_net / k / ctx.inter_bw_Bps : 0.0);
    case CollAlgo::NvlsTree:
      // NVLS inside each domain, pipelined with the trees across domains: S/k per NIC and
      // direction with two nodes, up to twice that with more (an inner node of a tree).
      return std::max(S * (1 + 1 / k) / ctx.intra_bw_Bps,
                      (N > 2 ? 2.0 : 1.0) * S_net / k / ctx.inter_bw_Bps);
    case CollAlgo::CollNetChain:
      // Pipelined chain through the node (an inner rank's port carries S up and S down each
      // way) and S/k per NIC.
      return std::max(k > 1 ? (k > 2 ? 2 : 1) * S / ctx.intra_bw_Bps : 0.0,
                      S / k / ctx.inter_bw_Bps);
    case CollAlgo::Pat:
      return (n - 1) / n * S / ctx.inter_bw_Bps;
    case CollAlgo::CollNet:
      return (k > 1 ? 2 * (k - 1) / k * S / ctx.intra_bw_Bps : 0) + S / k / ctx.inter_bw_Bps;
    case CollAlgo::Hierarchical:
      return 2 * (k - 1) / k * S / ctx.intra_bw_Bps + 2 * (N - 1) / N * (S / k) / ctx.inter_bw_Bps;
    case CollAlgo::Direct:
    case CollAlgo::Pairwise: {
      // Each rank sends S/n to every peer at once: its peers in its own NVLink domain over
      // NVLink, the rest over the fabric. The rank with the fewest domain-mates sends the most
      // across (the flows the engines route take the same split).
      if (g.N <= 1) return (n - 1) / n * S / ctx.intra_bw_Bps;
      std::size_t k_min = g.nodes[0].size();
      for (const auto& v : g.nodes) k_min = std::min(k_min, v.size());
      const double km = static_cast<double>(k_min);
      return std::max((km - 1) / n * S / ctx.intra_bw_Bps, (n - km) / n * S / ctx.inter_bw_Bps);
    }
    case CollAlgo::NodeLimited: {
      // The fabric carries S D/(t N) to each of the N-1 other nodes; NVLink S/k to each of the
      // k-1 domain-mates (node_limited_split).
      const NodeSplit x = node_limited_split(g, ctx);
      return std::max((k - 1) * x.intra / ctx.intra_bw_Bps, (N - 1) * x.inter / ctx.inter_bw_Bps) *
             S;
    }
    case CollAlgo::P2P:
      return S / (g.N > 1 ? ctx.inter_bw_Bps : ctx.intra_bw_Bps);
  }
  return 0;
}

// NCCL's enabling conditions (src/graph/tuning.cc ncclTopoTuneModel, src/enqueue.cc
// updateCollCostTable, src/init.cc), on tutti's geometry: N NVLink domains ("nodes") of k ranks.
bool algo_applies(CollAlgo algo, Coll coll, const Geo& g, const CollectiveContext& ctx,
                  bool forced = false) {
  const NcclModel& m = ctx.profile->nccl;
  const bool nvlink = ctx.intra_hw == NcclHw::NVLink;
  // NVLS needs multicast-capable NVSwitches (the catalog's node "nvls"), >= 2 GPUs per domain.
  const bool nvls = ctx.nvls && m.enable_nvls && nvlink && g.uniform && g.k >= 2;
  // CollNet: NCCL_COLLNET_ENABLE (and the SHARP plugin) on a fabric whose switches reduce,
  // at least NCCL_COLLNET_NODE_THRESHOLD = 2 nodes, at most NCCL_MAX_DIRECT_ARITY + 1 = 8
  // local ranks.
  const bool collnet = ctx.sharp && m.enable_sharp && g.N >= 2 && g.uniform && g.k <= 8;
  switch (algo) {
    case CollAlgo::Ring:
      return coll == Coll::AllReduce || coll == Coll::AllGather || coll == Coll::ReduceScatter;
    case CollAlgo::Chain:
      return coll == Coll::Broadcast;
    case CollAlgo::Tree:
      return coll == Coll::AllReduce && g.N > 1 && g.uniform && m.enable_tree;
    // Multi-node NVLS is NVLS + CollNet (updateCollCostTable: "NVLS && collNetSupport != 1 &&
    // nNodes > 1" is skipped).
    case CollAlgo::Nvls:
      return coll == Coll::AllReduce && nvls && (g.N == 1 || collnet);
    // NVLS tree: disabled on a single node (tuning.cc).
    case CollAlgo::NvlsTree:
      return coll == Coll::AllReduce && nvls && g.N > 1;
    // CollNet direct also needs NVSwitches in the node ("Disable CollNet+Direct if not on an
    // NVSwitch system"; an NVLink domain here).
    case CollAlgo::CollNet:
      return coll == Coll::AllReduce && collnet && (g.k == 1 || nvlink);
    case CollAlgo::CollNetChain:
      return coll == Coll::AllReduce && collnet;
    // PAT: all-gather and reduce-scatter, one GPU per node (ncclPatEnable), NCCL >= 2.23.
    case CollAlgo::Pat:
      return (coll == Coll::AllGather || coll == Coll::ReduceScatter) && g.N > 1 && g.N == g.n &&
             m.enable_pat;
    case CollAlgo::Hierarchical:
      return coll == Coll::AllReduce && g.N > 1 && g.k > 1 && g.uniform &&
             (forced || m.allow_hierarchical);
    case CollAlgo::Direct:
      return coll == Coll::AllToAll;
    case CollAlgo::Pairwise:
      return coll == Coll::AllToAll;
    case CollAlgo::NodeLimited:
      return coll == Coll::AllToAll && g.N > 1 && g.uniform && ctx.a2a_max_nodes > 0;
    case CollAlgo::P2P:
      return false;
  }
  return false;
}

// NCCL enables LL128 by default only where the ranks of a node talk over NVLink (typeIntra <=
// PATH_NVB; tuning.cc); NVLS, NVLS tree, CollNet and PAT run Simple only.
bool proto_applies(CollAlgo algo, NcclProto proto, const Geo& g, const CollectiveContext& ctx) {
  switch (algo) {
    case CollAlgo::Nvls:
    case CollAlgo::NvlsTree:
    case CollAlgo::CollNet:
    case CollAlgo::CollNetChain:
    case CollAlgo::Pat:
      return proto == NcclProto::Simple;
    default:
      break;
  }
  if (proto == NcclProto::LL128 && g.k > 1 && ctx.intra_hw != NcclHw::NVLink) return false;
  return true;
}

void intra_ring_phase(const Geo& g, double bytes, int repeat, CollectivePlan& plan) {
  if (g.k <= 1) return;
  CollPhase ph;
  ph.repeat = repeat;
  for (const auto& M : g.nodes) {
    int k = static_cast<int>(M.size());
    for (int i = 0; i < k; ++i) ph.flows.push_back({M[i], M[(i + 1) % k], bytes});
  }
  plan.phases.push_back(std::move(ph));
}

// Double binary tree flows between nodes on rail c (tree 1 mirrors tree 0), b bytes each way.
void tree_edges(const Geo& g, int c, double b, CollPhase& ph) {
  const int N = g.N;
  for (int t = 0; t < 2; ++t)
    for (int pos = 1; pos < N; ++pos) {
      int a = t == 0 ? pos : N - 1 - pos;
      int pp = (pos - 1) / 2;
      int p = t == 0 ? pp : N - 1 - pp;
      ph.flows.push_back({g.nodes[a][c], g.nodes[p][c], b});
      ph.flows.push_back({g.nodes[p][c], g.nodes[a][c], b});
    }
}

// NVLS inside every node: flows i->j (j != i) of S(1+1/k)/(k-1), so that every port carries
// S(1+1/k) each way.
void nvls_flows(const Geo& g, double S, CollPhase& ph) {
  const int k = g.k;
  const double b = S * (1.0 + 1.0 / k) / (k - 1);
  for (const auto& M : g.nodes)
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j)
        if (i != j) ph.flows.push_back({M[i], M[j], b});
}

void build_phases(CollectivePlan& plan, Coll coll, double S_wire, const Geo& g, double S_net,
                  const CollectiveContext& ctx) {
  const int n = g.n, N = g.N, k = g.k;
  switch (plan.algo) {
    case CollAlgo::Ring: {
      CollPhase ph;
      ph.repeat = coll == Coll::AllReduce ? 2 * (n - 1) : n - 1;
      if (N == 1 || k == 1 || !g.uniform) {
        plan.channels = 1;
        for (int i = 0; i < n; ++i)
          ph.flows.push_back({g.flat[i], g.flat[(i + 1) % n], S_wire / n});
      } else {
        plan.channels = k;
        double b = S_wire / (static_cast<double>(n) * k);
        for (int c = 0; c < k; ++c)
          for (int j = 0; j < N; ++j) {
            const auto& M = g.nodes[j];
            for (int i = 0; i + 1 < k; ++i)
              ph.flows.push_back({M[(c + i) % k], M[(c + i + 1) % k], b});
            ph.flows.push_back({M[(c + k - 1) % k], M[c], b});       // PXN hand-off
            ph.flows.push_back({M[c], g.nodes[(j + 1) % N][c], b});  // rail c to next node
          }
      }
      plan.phases.push_back(std::move(ph));
      break;
    }
    case CollAlgo::Chain: {
      CollPhase ph;
      for (int i = 0; i + 1 < n; ++i) ph.flows.push_back({g.flat[i], g.flat[i + 1], S_wire});
      plan.phases.push_back(std::move(ph));
      break;
    }
    case CollAlgo::Tree: {
      plan.channels = k;
      CollPhase ph;
      double b = S_wire / (2.0 * k);
      for (int c = 0; c < k; ++c) {
        tree_edges(g, c, b, ph);
        for (const auto& M : g.nodes)  // intra-node chain from local rank c, both directions
          for (int i = 0; i + 1 < k; ++i) {
            ph.flows.push_back({M[(c + i) % k], M[(c + i + 1) % k], 2 * b});
            ph.flows.push_back({M[(c + i + 1) % k], M[(c + i) % k], 2 * b});
          }
      }
      plan.phases.push_back(std::move(ph));
      break;
    }
    case CollAlgo::Nvls: {
      // Across nodes (NVLS + SHARP): pipelined with each rank's S/k slice reduced in the fabric
      // (modelled as for CollNet: a flow to the same local rank of the next node).
      CollPhase ph;
      nvls_flows(g, S_wire, ph);
      if (N > 1) {
        plan.channels = k;
        for (int j = 0; j < N; ++j)
          for (int i = 0; i < k; ++i)
            ph.flows.push_back({g.nodes[j][i], g.nodes[(j + 1) % N][i], S_net / k});
      }
      plan.phases.push_back(std::move(ph));
      break;
    }
    case CollAlgo::NvlsTree: {
      // NVLS inside every node, pipelined with double binary trees between nodes on every rail
      // (each NIC carries S/k of the node's partial sums, half per tree).
      plan.channels = k;
      CollPhase ph;
      nvls_flows(g, S_wire, ph);
      for (int c = 0; c < k; ++c) tree_edges(g, c, S_net / (2.0 * k), ph);
      plan.phases.push_back(std::move(ph));
      break;
    }
    case CollAlgo::CollNetChain: {
      // Per channel c: a chain through the node from local rank c (up and down, S/k each way,
      // pipelined) and rank c's S/k reduced in the fabric.
      plan.channels = k;
      CollPhase ph;
      const double b = S_wire / k;
      for (int c = 0; c < k; ++c)
        for (int j = 0; j < N; ++j) {
          const auto& M = g.nodes[j];
          for (int i = 0; i + 1 < k; ++i) {
            ph.flows.push_back({M[(c + i) % k], M[(c + i + 1) % k], b});
            ph.flows.push_back({M[(c + i + 1) % k], M[(c + i) % k], b});
          }
          ph.flows.push_back({M[c], g.nodes[(j + 1) % N][c], b});
        }
      plan.phases.push_back(std::move(ph));
      break;
    }
    case CollAlgo::Pat: {
      // Bruck-like distance doubling: at distance d every rank sends min(d, n-d) blocks of S/n
      // to rank i+d; n-1 blocks in ceil(log2 n) steps.
      for (int d = 1; d < n; d *= 2) {
        CollPhase ph;
        const double b = S_wire / n * std::min(d, n - d);
        for (int i = 0; i < n; ++i) ph.flows.push_back({g.flat[i], g.flat[(i + d) % n], b});
        plan.phases.push_back(std::move(ph));
      }
      break;
    }
    case CollAlgo::CollNet:
    case CollAlgo::Hierarchical: {
      plan.channels = k;
      intra_ring_phase(g, S_wire / k, k - 1, plan);
      CollPhase ph;
      if (plan.algo == CollAlgo::CollNet) {
        ph.repeat = 1;
        for (int j = 0; j < N; ++j)
          for (int i = 0; i < k; ++i)
            ph.flows.push_back({g.nodes[j][i], g.nodes[(j + 1) % N][i], S_wire / k});
      } else {
        ph.repeat = 2 * (N - 1);
        for (int j = 0; j < N; ++j)
          for (int i = 0; i < k; ++i)
            ph.flows.push_back({g.nodes[j][i], g.nodes[(j + 1) % N][i], S_wire / k / N});
      }
      plan.phases.push_back(std::move(ph));
      intra_ring_phase(g, S_wire / k, k - 1, plan);
      break;
    }
    case CollAlgo::Direct: {
      // Every peer when n-1 <= kDirectSampledShifts; else kDirectSampledShifts evenly spaced
      // shifts, each carrying (n-1)/kDirectSampledShifts peers' bytes (per-GPU volume exact).
      CollPhase ph;
      const int shifts = n - 1;
      const int k = std::min(shifts, kDirectSampledShifts);
      for (int p = 0; p < k; ++p) {
        int lo = 1 + static_cast<int>(static_cast<long long>(p) * shifts / k);
        int hi = 1 + static_cast<int>(static_cast<long long>(p + 1) * shifts / k);
        for (int i = 0; i < n; ++i)
          ph.flows.push_back({g.flat[i], g.flat[(i + lo) % n], S_wire / n * (hi - lo)});
      }
      plan.phases.push_back(std::move(ph));
      break;
    }
    case CollAlgo::NodeLimited: {
      // One phase: rail-aligned fabric flows to every other node and NVLink flows to every
      // domain-mate (node_limited_split), each set sampled like Direct's peers above 8 shifts.
      const NodeSplit x = node_limited_split(g, ctx);
      CollPhase ph;
      auto sampled = [&](int shifts, auto&& add) {
        const int m = std::min(shifts, kDirectSampledShifts);
        for (int p = 0; p < m; ++p) {
          const int lo = 1 + static_cast<int>(static_cast<long long>(p) * shifts / m);
          const int hi = 1 + static_cast<int>(static_cast<long long>(p + 1) * shifts / m);
          add(lo, hi - lo);
        }
      };
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < k; ++i) {
          sampled(N - 1, [&](int d, int w) {
            ph.flows.push_back({g.nodes[j][i], g.nodes[(j + d) % N][i], S_wire * x.inter * w});
          });
          sampled(k - 1, [&](int d, int w) {
            ph.flows.push_back({g.nodes[j][i], g.nodes[j][(i + d) % k], S_wire * x.intra * w});
          });
        }
      plan.phases.push_back(std::move(ph));
      break;
    }
    case CollAlgo::Pairwise: {
      int shifts = n - 1;
      int phases = std::min(shifts, kMaxPairwisePhases);
      for (int p = 0; p < phases; ++p) {
        // Shifts [lo, hi) are represented by their first one.
        int lo = 1 + static_cast<int>(static_cast<long long>(p) * shifts / phases);
        int hi = 1 + static_cast<int>(static_cast<long long>(p + 1) * shifts / phases);
        CollPhase ph;
        ph.repeat = hi - lo;
        for (int i = 0; i < n; ++i)
          ph.flows.push_back({g.flat[i], g.flat[(i + lo) % n], S_wire / n});
        plan.phases.push_back(std::move(ph));
      }
      break;
    }
    case CollAlgo::P2P:
      break;
  }
}

CollectivePlan make_plan(Coll coll, double bytes, const Geo& g, const CollectiveContext& ctx,
                         CollAlgo algo, NcclProto proto, bool phases = true) {
  CollectivePlan plan;
  plan.algo = algo;
  plan.proto = proto;
  const double wire = bytes * wire_factor(algo, proto, g, ctx, bytes);
  const double net =
      bytes / ctx.profile->nccl.protocols[static_cast<int>(proto)].bandwidth_efficiency;
  plan.fixed_latency_s = fixed_latency(algo, proto, coll, g, ctx, bytes);
  plan.estimate_s = plan.fixed_latency_s + transfer_estimate(algo, coll, wire, g, ctx, net);
  if (phases) build_phases(plan, coll, wire, g, net, ctx);
  return plan;
}

// Path latency the engines add to a plan (each phase step waits for its slowest flow, path
// latency included): NCCL's hwLat tables have no such term, but tutti adds the wire on top, so the
// tuner counts it too (else a many-step ring can be chosen over a tree it then loses to).
double path_latency(CollAlgo algo, Coll coll, const Geo& g, const CollectiveContext& ctx) {
  const int n = g.n, N = g.N, k = g.k;
  const double intra = ctx.intra_lat_s, inter = N > 1 ? ctx.inter_lat_s : ctx.intra_lat_s;
  switch (algo) {
    case CollAlgo::Ring:
      return (coll == Coll::AllReduce ? 2 * (n - 1) : n - 1) * inter;
    case CollAlgo::Pat:
      return log2i(2.0 * n - 1) * inter;
    case CollAlgo::CollNet:
      return 2 * (k - 1) * intra + inter;
    case CollAlgo::Hierarchical:
      return 2 * (k - 1) * intra + 2 * (N - 1) * inter;
    case CollAlgo::Pairwise:
      return std::min(n - 1, kMaxPairwisePhases) * inter;
    default:
      return std::max(intra, inter);  // one pipelined phase
  }
}

double plan_estimate(CollAlgo algo, NcclProto proto, Coll coll, double bytes, const Geo& g,
                     const CollectiveContext& ctx) {
  const double net =
      bytes / ctx.profile->nccl.protocols[static_cast<int>(proto)].bandwidth_efficiency;
  return fixed_latency(algo, proto, coll, g, ctx, bytes) +
         transfer_estimate(algo, coll, bytes * wire_factor(algo, proto, g, ctx, bytes), g, ctx,
                           net);
}

}  // namespace

CollectiveContext make_collective_context(const Topology& topo, const CalibrationProfile& profile,
                                          bool nvls, bool sharp) {
  CollectiveContext c;
  c.topo = &topo;
  c.profile = &profile;
  c.nvls = nvls;
  c.sharp = sharp;
  std::vector<std::uint32_t> path;
  bool nvl = true;
  if (topo.domain_gpus() > 1 && topo.num_gpus() > 1) {
    topo.route(0, 1, 0, path);
    c.intra_bw_Bps = min_capacity(topo, profile, path, &c.intra_lat_s, &nvl);
    c.intra_hw = nvl ? NcclHw::NVLink : NcclHw::PCI;
  }
  if (topo.num_gpus() > topo.domain_gpus()) {
    topo.route(0, topo.domain_gpus(), 0, path);
    bool dummy;
    c.inter_bw_Bps = min_capacity(topo, profile, path, &c.inter_lat_s, &dummy);
  }
  if (c.intra_bw_Bps <= 0) c.intra_bw_Bps = c.inter_bw_Bps;
  if (c.inter_bw_Bps <= 0) c.inter_bw_Bps = c.intra_bw_Bps;
  if (c.intra_bw_Bps <= 0) c.intra_bw_Bps = c.inter_bw_Bps = 1e12;  // single GPU: never used
  return c;
}

CollectiveContext make_collective_context(const Topology& topo, const CalibrationProfile& profile,
                                          bool nvls, bool sharp, const Program& program) {
  CollectiveContext c = make_collective_context(topo, profile, nvls, sharp);
  c.a2a_topk = program.moe_top_k;
  c.a2a_max_nodes = program.moe_max_nodes;
  return c;
}

CollectivePlan plan_collective_with(Coll coll, double bytes, const std::vector<int>& group,
                                    const CollectiveContext& ctx, CollAlgo algo, NcclProto proto) {
  Geo g = geometry(group, *ctx.topo);
  if (g.n <= 1) return CollectivePlan{};
  if (!algo_applies(algo, coll, g, ctx, true))
    throw InputError(std::string("collective algorithm ") + to_string(algo) + " cannot run " +
                     to_string(coll) + " on this group of " + std::to_string(g.n) + " GPUs");
  return make_plan(coll, bytes, g, ctx, algo, proto);
}

namespace {
CollectivePlan tune(Coll coll, double bytes, const std::vector<int>& group,
                    const CollectiveContext& ctx, bool phases) {
  Geo g = geometry(group, *ctx.topo);
  CollectivePlan best;
  if (g.n <= 1) return best;
  if (coll == Coll::AllToAll) {
    CollAlgo a = algo_applies(CollAlgo::NodeLimited, coll, g, ctx) ? CollAlgo::NodeLimited
                 : g.n <= kMaxDirectRanks                          ? CollAlgo::Direct
                                                                   : CollAlgo::Pairwise;
    return make_plan(coll, bytes, g, ctx, a, NcclProto::Simple, phases);
  }
  double best_t = std::numeric_limits<double>::infinity();
  CollAlgo best_a = CollAlgo::Ring;
  NcclProto best_p = NcclProto::Simple;
  // NCCL's order (NCCL_ALGO_TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT;
  // protocols LL, LL128, Simple): the first of equal estimates wins. Hierarchical (not NCCL)
  // last, and only when the profile asks for it.
  const CollAlgo cands[] = {CollAlgo::Tree,     CollAlgo::Ring,         CollAlgo::Chain,
                            CollAlgo::CollNet,  CollAlgo::CollNetChain, CollAlgo::Nvls,
                            CollAlgo::NvlsTree, CollAlgo::Pat,          CollAlgo::Hierarchical};
  for (CollAlgo a : cands) {
    if (!algo_applies(a, coll, g, ctx)) continue;
    NcclAlgo na = NcclAlgo::Ring;
    nccl_algo_of(a, &na);
    const NcclAlgorithm& A = ctx.profile->nccl.algorithms[static_cast<int>(na)];
    for (int p = 0; p < kNumProtos; ++p) {
      NcclProto proto = static_cast<NcclProto>(p);
      if (!A.supports(proto) || !proto_applies(a, proto, g, ctx)) continue;
      const NcclProtocol& P = ctx.profile->nccl.protocols[p];
      if (P.max_bytes > 0 && bytes > P.max_bytes) continue;
      double t = plan_estimate(a, proto, coll, bytes, g, ctx) + path_latency(a, coll, g, ctx);
      if (t < best_t) {
        best_t = t;
        best_a = a;
        best_p = proto;
      }
    }
  }
  check_internal(best_t < std::numeric_limits<double>::infinity(),
                 "collective tuner: no algorithm applies");
  return make_plan(coll, bytes, g, ctx, best_a, best_p, phases);
}
}  // namespace

CollectivePlan plan_collective(Coll coll, double bytes, const std::vector<int>& group,
                               const CollectiveContext& ctx) {
  return tune(coll, bytes, group, ctx, true);
}

double collective_estimate_s(Coll coll, double bytes, const std::vector<int>& group,
                             const CollectiveContext& ctx) {
  return tune(coll, bytes, group, ctx, false).estimate_s;
}

CollectivePlan plan_p2p(int src, int dst, double bytes, const CollectiveContext& ctx) {
  CollectivePlan plan;
  plan.algo = CollAlgo::P2P;
  plan.proto = NcclProto::Simple;
  plan.fixed_latency_s = ctx.profile->nccl.p2p_latency_s;
  bool cross = ctx.topo->domain_of(src) != ctx.topo->domain_of(dst);
  plan.estimate_s = plan.fixed_latency_s + bytes / (cross ? ctx.inter_bw_Bps : ctx.intra_bw_Bps);
  CollPhase ph;
  ph.flows.push_back({src, dst, bytes});
  plan.phases.push_back(std::move(ph));
  return plan;
}

}  // namespace tutti
