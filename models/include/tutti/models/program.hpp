#pragma once
// The Program: the contract between workloads and every engine (docs/design.md "Data flow").
// One Program describes one training iteration (one optimizer step over the global batch).
//
// Ranks that do the same work are described once as a RankClass with a multiplicity: with the
// Megatron rank order (tp fastest, then cp, then dp, then pp slowest; EP groups are carved out of
// dp x cp), all ranks of one pipeline stage run the same op list, so a Program has one class per
// pipeline stage (pp classes), whatever the GPU count. A 16,384-GPU job stays small.
//
// Communication ops name their group by parallel dimension (GroupDim); the concrete ranks of a
// group are a formula of the layout (group_ranks), never stored.
#include <cstdint>
#include <string>
#include <vector>

#include "tutti/core/enum.hpp"
#include "tutti/models/layout.hpp"

namespace tutti {

/// Op kinds (table: name in traces and stats).
///   Gemm        C[m,n] += A[m,k] B[k,n], `batch` independent GEMMs of that shape.
///   Attention   Fused attention (flash-style): batch*heads, seq_q, seq_kv, head_dim.
///   MemBound    Element-wise / norm / softmax / optimizer step: `bytes` moved through HBM.
///   Collective  NCCL-style collective over a group (see Coll, GroupDim).
///   Send        Point-to-point to pipeline stage (stage + peer_delta); matched by `tag`.
///               Eager: starts when its deps are met and its stream reaches it, without
///               waiting for the receiver; the bytes flow from then.
///   Recv        Point-to-point from pipeline stage (stage + peer_delta); matched by `tag`.
///               Completes when the matching Send's bytes have arrived.
// clang-format off
#define TUTTI_OP_KIND_VALUES(X) \
  X(Gemm, "gemm") X(Attention, "attention") X(MemBound, "membound") X(Collective, "collective") \
  X(Send, "send") X(Recv, "recv")
// clang-format on
TUTTI_ENUM(OpKind, std::uint8_t, TUTTI_OP_KIND_VALUES);

// clang-format off
// The collectives nccl-tests times, in the order both Coll and CollOp (coll_op.hpp) list them:
// the one table of their names.
#define TUTTI_COLL_TIMED_VALUES(X)                                                        \
  X(AllReduce, "all_reduce") X(AllGather, "all_gather") X(ReduceScatter, "reduce_scatter") \
  X(AllToAll, "alltoall")
#define TUTTI_COLL_VALUES(X) TUTTI_COLL_TIMED_VALUES(X) X(Broadcast, "broadcast")
// clang-format on
TUTTI_ENUM(Coll, std::uint8_t, TUTTI_COLL_VALUES);
/// nccl-tests' bus bandwidth factor for `n` ranks (its doc/PERFORMANCE.md): busbw = algbw * factor;
/// all_reduce 2(n-1)/n, all_gather / reduce_scatter / alltoall (n-1)/n, broadcast 1. 0 when n <= 0.
/// The one definition: the bench (exec), the calibration fit and `tutti topo --collectives` use it.
double bus_factor(Coll c, int n);

/// The parallel dimension a communication group spans. DPxCP is the data-parallel gradient group
/// when context parallelism is on (Megatron reduces gradients over dp*cp ranks). EDP is the
/// expert-data-parallel group of MoE expert weights: the dp*cp/ep ranks that hold the same
/// experts (same tp, pp and position in their EP group), over which expert gradients are reduced.
/// DPShard and DPReplica are hybrid sharding's groups (Layout::shard_group): shard_group
/// consecutive data-parallel ranks (in DPxCP order), and the ranks at the same position in every
/// sharding group.
/// Per-dimension quantities are EnumArray<GroupDim, T> (core/enum.hpp), sized by this table.
// clang-format off
#define TUTTI_GROUP_DIM_VALUES(X) \
  X(TP, "tp") X(CP, "cp") X(DP, "dp") X(DPxCP, "dpxcp") X(EP, "ep") X(PP, "pp") X(EDP, "edp") \
  X(DPShard, "dp_shard") X(DPReplica, "dp_replica")
// clang-format on
TUTTI_ENUM(GroupDim, std::uint8_t, TUTTI_GROUP_DIM_VALUES);

/// Streams as Megatron-LM / FSDP schedule them: one compute stream and one per comm kind, so
/// DP gradient reduction overlaps backward compute, and PP sends overlap the next micro-batch.
// clang-format off
#define TUTTI_STREAM_VALUES(X)                                                             \
  X(Compute, "compute") X(CommTP, "comm_tp") X(CommCP, "comm_cp") X(CommDP, "comm_dp") \
  X(CommEP, "comm_ep") X(CommPP, "comm_pp")
// clang-format on
TUTTI_ENUM(Stream, std::uint8_t, TUTTI_STREAM_VALUES);
constexpr int kNumStreams = static_cast<int>(enum_count<Stream>);

// clang-format off
#define TUTTI_PHASE_VALUES(X) \
  X(Forward, "forward") X(Backward, "backward") X(Recompute, "recompute") X(Optimizer, "optimizer") X(Other, "other")
// clang-format on
TUTTI_ENUM(Phase, std::uint8_t, TUTTI_PHASE_VALUES);

/// Which part of a mixture-of-experts layer an op belongs to (None outside MoE layers), so that
/// every engine reports the MoE layer's parts separately (SimResult::Breakdown::moe_s).
/// Router: the router GEMM and its gating (softmax/sigmoid + top-k). Permute: the token
/// permutations around the all-to-alls (gathers/scatters of the hidden states, top-k copies).
/// ExpertGemm: the routed experts' grouped GEMMs and activation. SharedExpert: the shared
/// experts' MLP. AllToAll: the EP dispatch and combine all-to-alls (forward and backward).
/// Per-part quantities are EnumArray<MoePart, T>.
// clang-format off
#define TUTTI_MOE_PART_VALUES(X)                                                         \
  X(None, "none") X(Router, "router") X(Permute, "permute") X(ExpertGemm, "expert_gemm") \
  X(SharedExpert, "shared_expert") X(AllToAll, "alltoall")
// clang-format on
TUTTI_ENUM(MoePart, std::uint8_t, TUTTI_MOE_PART_VALUES);

/// Which GEMM dimension of a grouped (per-expert) GEMM holds the tokens (Op::grouped).
// clang-format off
#define TUTTI_GROUPED_DIM_VALUES(X) X(None, "none") X(M, "m") X(K, "k")
// clang-format on
TUTTI_ENUM(GroupedDim, std::uint8_t, TUTTI_GROUPED_DIM_VALUES);

struct Op {
  OpKind kind = OpKind::MemBound;
  Stream stream = Stream::Compute;
  DType dtype = DType::BF16;
  Phase phase = Phase::Other;
  Coll coll = Coll::AllReduce;    ///< Collective only.
  GroupDim group = GroupDim::TP;  ///< Collective only.
  std::uint16_t name = 0;         ///< Index into Program::names ("layer.qkv", "dp.grad_rs").
  std::int16_t peer_delta = 0;    ///< Send/Recv: peer stage = this stage + peer_delta.
  std::uint32_t group_size = 1;   ///< Collective: ranks in the group.
  std::uint32_t tag = 0;          ///< Send/Recv: a Send and a Recv with equal tags match.
  std::uint32_t microbatch = 0;   ///< Which micro-batch (for traces and schedules).
  // Shapes. Gemm: m, n, k, batch. Attention: batch = micro_batch*heads, m = seq_q, n = seq_kv,
  // k = head_dim (causal flag in `causal`).
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  bool causal = false;
  /// Attention: the original FlashAttention kernel (training.flash_attention_version 1), which
  /// engines run at the calibration's compute.flash_attention_1_speed of the attention rate.
  bool flash_v1 = false;
  /// Gemm: runs alongside a TP collective under Megatron --tp-comm-overlap (Transformer Engine
  /// userbuffers), sharing the SMs with it; engines slow it by the calibration's
  /// compute.tp_overlap_gemm_slowdown.
  bool tp_overlap = false;
  /// Gemm: a grouped GEMM over `batch` experts (Megatron-Core GroupedMLP, DeepGEMM). M: the
  /// tokens per expert are the m dimension (forward, dgrad); K: they are the k dimension (wgrad).
  /// Engines time it on 2*m*n*k*batch (m or k = the busiest expert's tokens, all groups padded
  /// to it) while `flops` keeps the useful (mean-load) FLOPs, and apply the calibration's
  /// grouped-GEMM factor tokens / (tokens + compute.grouped_gemm_half_tokens).
  GroupedDim grouped = GroupedDim::None;
  MoePart moe_part = MoePart::None;  ///< The MoE layer part this op belongs to.
  double flops = 0;  ///< FLOPs this op executes on this rank (2mnk*batch for a Gemm).
  /// MemBound: bytes read+written in HBM. Collective: the buffer size as nccl-tests reports
  /// "size" (all_reduce: the buffer; all_gather: the gathered output; reduce_scatter: the full
  /// input; all_to_all: the whole send buffer). Send/Recv: message bytes.
  double bytes = 0;
  /// Indices (into this class's `ops`) of ops that must finish before this one starts,
  /// stored as a range in RankClass::deps. Ops on one stream also run in order.
  std::uint32_t dep_begin = 0, dep_count = 0;
};

/// All ranks of one pipeline stage: the same ops, `multiplicity` times.
struct RankClass {
  int stage = 0;                    ///< Pipeline stage (0..pp-1).
  std::uint32_t multiplicity = 1;   ///< Number of ranks in this class (tp*cp*dp).
  std::vector<Op> ops;              ///< In program order.
  std::vector<std::uint32_t> deps;  ///< Dependency lists, ranges referenced by Op::dep_*.
};

struct Program {
  Layout layout;
  int world = 1;                   ///< Total ranks (GPUs).
  std::vector<RankClass> classes;  ///< One per pipeline stage, in stage order.
  std::vector<std::string> names;  ///< Op name table.
  // Iteration-level facts, for rates and MFU.
  double tokens_per_iteration = 0;          ///< global_batch * seq_len (0 for non-token models).
  double samples_per_iteration = 0;         ///< global_batch.
  double model_flops_per_iteration = 0;     ///< Without recompute (MFU numerator).
  double hardware_flops_per_iteration = 0;  ///< With recompute (HFU numerator).
  DType dtype = DType::BF16;
  /// Node-limited MoE routing (TransformerSpec::moe_max_nodes, 0 = off) and the top-k it limits:
  /// the engines' collective model plans the EP all-to-alls with per-node de-duplication.
  int moe_top_k = 0, moe_max_nodes = 0;

  /// Interns a name, returning its index for Op::name.
  std::uint16_t intern(const std::string& name);
};

/// Global rank of the rank with coordinates (tp, cp, dp, pp) in the Megatron order.
int rank_of(const Layout& l, int tp, int cp, int dp, int pp);

/// Coordinates of a global rank.
struct RankCoords {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};
RankCoords coords_of(const Layout& l, int rank);

/// The global ranks of the `dim` group that contains `rank`, in ring order.
/// O(group size). EP groups are `ep` consecutive dp indices (within the same tp, cp, pp); EDP
/// groups are the dp indices with the same dp % ep, times every cp index. Folded layouts
/// (Layout::folded, etp = 1): EP groups are `ep` consecutive ranks of the stage (spanning tp,
/// then cp and dp), EDP groups the stage's ranks with the same position in their EP group.
std::vector<int> group_ranks(const Layout& l, int rank, GroupDim dim);

// to_string / parse_enum for OpKind, Coll, GroupDim, Stream, Phase, MoePart and GroupedDim come
// from their tables (core/enum.hpp).

}  // namespace tutti
