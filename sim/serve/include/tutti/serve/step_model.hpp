#pragma once
// Time of one serving iteration (one forward pass of a continuous batch) on one replica, from
// tutti's compute model (op_time_s: GEMMs become weight-read bound GEMVs when few tokens are in
// the batch; decode attention is a memory-bound read of the KV cache at the calibrated HBM
// bandwidth) and collective model (TP all-reduce twice per layer, EP all-to-all dispatch and
// combine, PP activation sends, logits all-gather), on the replica's GPUs of the topology.
//
// Per layer and GPU (t = tp, T = tokens in the batch, kvg = max(1, kv_heads / t) KV heads held):
//   qkv    GEMM m=T n=(heads/t + 2 kvg) hd k=h        o-proj GEMM m=T n=h k=heads hd / t
//   attention (prefill chunks p_i at context c_i): FLOPs 4 (heads/t) hd sum p_i (c_i + (p_i+1)/2)
//   attention (decodes, context L_j): MemBound, bytes sum L_j * 2 kvg hd * kv_bytes
//   MLP    dense: gate+up GEMM m=T n=2 ffn/t k=h, down m=T n=h k=ffn/t;
//          MoE: router GEMM m=T n=E k=h, grouped expert GEMMs over the experts a rank holds that
//          receive tokens (E/ep per rank, each split tp/ep ways; the busiest expert's tokens x
//          moe_imbalance), shared experts as a dense MLP; EP all-to-all (dispatch + combine) of
//          T top_k h / ep per rank when ep > 1.
//   norms and residuals: MemBound 6 T h bytes (estimate: 2 RMSNorms + residual add, read+write)
// LM head GEMM m=S (sequences that emit a token) n=vocab/t k=h, logits all-gather over TP.
// Pipeline parallelism: one batch passes the pp stages in turn (+ pp-1 activation sends), so an
// iteration's latency (total_s) is the whole model's; each stage holds layers/pp of the layers, so
// the replica can start the next batch one stage later (interval_s = the compute of one stage,
// taken as 1/pp of the whole, plus one send) and holds up to pp batches in flight (vLLM's virtual
// engines).
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tutti/models/workload.hpp"
#include "tutti/serve/config.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/engine.hpp"

namespace tutti::serve {

/// What one iteration computes, summed over its sequences.
struct BatchShape {
  std::int64_t prefill_tokens = 0;    ///< New tokens of prefill chunks.
  double prefill_attn_pairs = 0;      ///< sum p_i (c_i + (p_i+1)/2): causal query-key pairs.
  double prefill_context_tokens = 0;  ///< sum (c_i + p_i): KV the prefill attention reads.
  std::int64_t decodes = 0;           ///< Sequences decoding one token.
  double decode_context_tokens = 0;   ///< sum L_j: KV the decode attention reads.
  std::int64_t logits = 0;            ///< Sequences that emit a token this iteration.
  std::int64_t tokens() const { return prefill_tokens + decodes; }
};

/// One op of an iteration on one GPU of the replica, run `times` times in a row (layers).
struct StepOp {
  Op op;
  int times = 1;
};

/// One iteration's time and where it went (seconds, on one GPU of the replica).
struct StepTime {
  double total_s = 0;
  double gemm_s = 0;    ///< Compute-bound kernels (FLOP time above HBM time).
  double memory_s = 0;  ///< Memory-bound kernels (weight-read GEMVs, decode attention, norms).
  double comm_s = 0;    ///< TP/EP collectives and PP sends (not overlapped with compute).
  /// Time until the replica can start its next batch: total_s when pp = 1; with pp > 1 one
  /// stage's share, (total_s - the pp-1 sends) / pp + one send.
  double interval_s = 0;
};

/// Memory facts of one GPU of a replica.
struct ReplicaMemory {
  double weights_bytes = 0;     ///< Parameters / (tp pp) in the serving dtype.
  double activation_bytes = 0;  ///< Reserve for one iteration's activations and logits (estimate).
  double kv_bytes = 0;          ///< HBM x utilization - weights - activations.
  double kv_bytes_per_token = 0;  ///< One token of one sequence, this GPU's layers and KV heads.
  std::int64_t kv_blocks = 0;     ///< floor(kv_bytes / (block_tokens x kv_bytes_per_token)).
};

class StepModel {
 public:
  /// Throws InputError when the model is not a decoder-only transformer, tp does not divide the
  /// heads, ep does not divide tp or the experts, pp does not divide... (message says what fits),
  /// or the replica does not fit the cluster's GPUs.
  StepModel(const Workload& w, const Serving& s, const SimCluster& cluster,
            const CalibrationProfile& profile);

  /// Time of one iteration: the sum over ops() of op_time_s / gemv_time_s (compute) and
  /// collective_time_s / plan_p2p (communication). Caches collective times per byte count and
  /// reuses its op buffer (no allocation once warm).
  StepTime time(const BatchShape& b);
  /// The ops of one iteration on one GPU, in order (the list time() sums and step_program()
  /// replays). Collectives name their group: TP (group_size tp), EP (group_size ep), or the
  /// expert-TP group (AllReduce over tp/ep ranks, group TP with group_size tp/ep); PP hand-offs
  /// are Send ops. The reference stays valid until the next call.
  const std::vector<StepOp>& ops(const BatchShape& b);
  /// The iteration as a Program for `tutti exec` replay (one stage of tp ranks, every op
  /// expanded `times` times, each op after the previous one). Throws InputError for pp > 1 or
  /// 1 < ep < tp (groups a training Layout cannot name).
  Program step_program(const BatchShape& b);
  /// KV-cache transfer of `tokens` context tokens from a prefill replica to a decode replica
  /// (every GPU sends its shard to its peer in parallel; point-to-point plan of the collective
  /// model).
  double kv_transfer_s(std::int64_t tokens) const;
  /// The memory of one GPU; kv_blocks <= 0 means the weights do not fit.
  const ReplicaMemory& memory() const { return mem_; }
  /// KV bytes of one token over the whole model (all layers and KV heads), for transfers.
  double kv_bytes_per_token_model() const { return kv_model_bytes_; }

 private:
  double coll_s(int which, double bytes);
  void add_op(const Op& op, StepTime& t, double times) const;

  const Workload* w_;
  Serving s_;
  SimCluster cluster_;
  const CalibrationProfile* profile_;
  CollectiveContext ctx_;
  std::vector<int> tp_group_, ep_group_, etp_group_;
  int prefill_gpu0_ = 0, decode_gpu0_ = 0;
  ReplicaMemory mem_;
  double kv_model_bytes_ = 0;
  int dense_layers_ = 0, moe_layers_ = 0;
  std::unordered_map<std::int64_t, double> coll_cache_[5];
  std::vector<StepOp> ops_;
};

}  // namespace tutti::serve
