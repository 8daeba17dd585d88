#pragma once
// Workloads: what is trained (model), how (training recipe), and optionally how it is split over
// GPUs (parallel layout). Read from strict JSON (schemas/workload.schema.json, models/README.md),
// counted (parameters, FLOPs, memory per GPU) and expanded into the Program (program.hpp).
//
// Units: FLOPs are floating-point operations (a multiply-add is 2), bytes are bytes, counts are
// plain numbers. Every function here is deterministic and allocation-light.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tutti/models/layout.hpp"
#include "tutti/models/program.hpp"

namespace tutti {

/// Transformer: decoder-only LM (GPT, Llama, Mixtral, DeepSeek), causal attention, LM head;
/// Encoder: BERT-style, bidirectional attention, MLM head, pooler; ViT: vision transformer, patch
/// embedding GEMM, bidirectional attention, class head; ResNet: bottleneck blocks, convolutions
/// counted as im2col GEMMs; DLRM: recommendation, embedding tables (table-wise sharded), MLPs.
// clang-format off
#define TUTTI_MODEL_FAMILY_VALUES(X) \
  X(Transformer, "transformer") X(Encoder, "encoder") X(ViT, "vit") X(ResNet, "resnet") X(DLRM, "dlrm")
// clang-format on
TUTTI_ENUM(ModelFamily, std::uint8_t, TUTTI_MODEL_FAMILY_VALUES);

/// How the router's expert load is balanced (model.moe_balancing): an auxiliary balance loss
/// (Switch/GShard; Megatron-Core --moe-router-load-balancing-type aux_loss, the default), the
/// auxiliary-loss-free expert bias (Wang et al. 2024; DeepSeek-V3; Megatron-Core
/// --moe-router-enable-expert-bias) or a router forced to a uniform load for benchmarking
/// (Megatron-Core --moe-router-force-load-balancing). It sets the default moe_imbalance.
// clang-format off
#define TUTTI_MOE_BALANCING_VALUES(X) \
  X(AuxLoss, "aux_loss") X(LossFree, "loss_free") X(Forced, "forced")
// clang-format on
TUTTI_ENUM(MoeBalancing, std::uint8_t, TUTTI_MOE_BALANCING_VALUES);

/// Default busiest-expert load over the mean for each balancing (1 + MaxVio). Wang et al. 2024,
/// "Auxiliary-Loss-Free Load Balancing Strategy for Mixture-of-Experts", arXiv:2408.15664,
/// Table 2 (3B model, 64 routed experts top-6, 200B tokens): MaxVio_global 0.52 with the
/// auxiliary loss (alpha = 0.001, Megatron-Core's usual --moe-aux-loss-coeff 1e-3) and 0.04
/// Loss-Free. MaxVio = (max_i load_i - mean) / mean over the validation set. Forced: 1.0.
/// tutti applies the busiest expert's figure to the busiest EP rank (exact when each rank holds
/// one expert; an upper bound of the rank's share when it holds several, while MaxVio of one
/// training batch, which sets a step's time, is higher than the global figure: Figure 3).
double moe_default_imbalance(MoeBalancing b);

enum class Optimizer : std::uint8_t { Adam, SGD };

/// Transformer-family architecture (transformer, encoder, vit).
struct TransformerSpec {
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;        ///< GQA groups (== heads for MHA).
  int head_dim = 0;        ///< Defaults to hidden / heads.
  int ffn_hidden = 0;      ///< Dense MLP inner size (gate and up each have this size when gated).
  std::int64_t vocab = 0;  ///< 0 for ViT.
  bool gated_mlp = false;  ///< SwiGLU-style (gate, up, down) when true; GeLU (up, down) otherwise.
  bool tied_embeddings = false;
  bool bias = false;      ///< Linear layers carry biases (GPT-3, BERT, ViT).
  bool layernorm = true;  ///< LayerNorm (weight+bias) when true, RMSNorm (weight) otherwise.
  bool dropout = false;   ///< Dropout after attention and MLP (Korthikanti's masks are counted).
  int max_positions = 0;  ///< Learned position embeddings (0: rotary, no parameters).
  // MoE (experts == 0: dense).
  int experts = 0;
  int top_k = 0;
  int shared_experts = 0;
  int moe_ffn_hidden = 0;
  int dense_layers = 0;  ///< The first `dense_layers` layers use the dense MLP (DeepSeek-V3: 3).
  /// Every `moe_layer_freq`-th layer after the dense ones is MoE, the others dense (Llama 4
  /// Maverick: 2, HF interleave_moe_layer_step). 1: all of them.
  int moe_layer_freq = 1;
  /// Expert capacity as a multiple of the mean tokens per expert (Megatron
  /// --moe-expert-capacity-factor); 0 = dropless (every routed token is computed).
  double moe_capacity_factor = 0;
  /// Router balancing; sets the default moe_imbalance (moe_default_imbalance).
  MoeBalancing moe_balancing = MoeBalancing::AuxLoss;
  /// Load skew: tokens of the busiest expert (and the busiest EP rank's all-to-all share) over the
  /// mean. Lock-step EP makes the busiest set the time. Default moe_default_imbalance(balancing),
  /// capped at experts / top_k (stated in the output). With a capacity factor the effective skew
  /// is min(imbalance, capacity factor).
  double moe_imbalance = 1.0;
  bool moe_imbalance_set = false;  ///< Stated in the workload (false: the balancing's default).
  /// Dtype of the tokens sent to the experts (forward dispatch and the backward all-to-all that
  /// carries gradients into the experts). DeepSeek-V3 dispatches FP8 (1 byte per element plus one
  /// fp32 scale per 128) and combines in BF16. Defaults to the training dtype.
  DType moe_dispatch_dtype = DType::BF16;
  bool moe_dispatch_dtype_set = false;
  /// Node-limited routing (DeepSeek-V3 Section 2.1.2, M = 4; Megatron-Core
  /// --moe-router-group-topk with --moe-router-num-groups = the EP group's nodes; Hugging Face
  /// `topk_group`) with DeepEP's per-node de-duplication: each token crosses the fabric at most
  /// once per destination node and at most to this many nodes, then is forwarded over NVLink.
  /// 0 = off (every top-k copy is its own all-to-all transfer).
  int moe_max_nodes = 0;
  /// Effective per-expert load over the mean: min(imbalance, capacity) or imbalance if dropless.
  double moe_load_factor() const { return moe_load_factor_at(moe_imbalance); }
  /// The same for a given skew (the serving model, whose default stays balanced).
  double moe_load_factor_at(double imbalance) const {
    return moe_capacity_factor > 0 ? std::min(imbalance, moe_capacity_factor) : imbalance;
  }
  // Encoder extras.
  int type_vocab = 0;   ///< Token-type embeddings (BERT: 2).
  bool pooler = false;  ///< BERT pooler + NSP head.
  // ViT extras.
  int image_size = 0, patch_size = 0, channels = 3, classes = 0;

  int hd() const { return head_dim > 0 ? head_dim : hidden / heads; }
  bool is_moe() const { return experts > 0; }
  bool layer_is_moe(int layer) const {
    return experts > 0 && layer >= dense_layers && (layer - dense_layers) % moe_layer_freq == 0;
  }
};

/// ResNet with bottleneck blocks (ResNet-50: blocks {3, 4, 6, 3}, width 64).
struct ResNetSpec {
  std::vector<int> blocks;
  int width = 64;
  int image_size = 224;
  int channels = 3;
  int classes = 1000;
};

/// DLRM (Naumov et al. 2019): dense features -> bottom MLP; sparse features -> embedding tables;
/// pairwise dot interaction; top MLP. Tables are sharded table-wise over all ranks.
struct DlrmSpec {
  int dense_features = 13;
  int embedding_dim = 128;
  std::vector<std::int64_t> table_rows;
  std::vector<int> bottom_mlp;  ///< Output sizes of the bottom MLP layers (last == embedding_dim).
  std::vector<int> top_mlp;     ///< Output sizes of the top MLP layers (last == 1).
};

struct ModelSpec {
  ModelFamily family = ModelFamily::Transformer;
  TransformerSpec tf;  ///< Transformer, Encoder, ViT.
  ResNetSpec resnet;   ///< ResNet.
  DlrmSpec dlrm;       ///< DLRM.
  bool token_model() const {
    return family == ModelFamily::Transformer || family == ModelFamily::Encoder;
  }
};

struct TrainingSpec {
  int seq_len = 1;                 ///< Tokens per sequence (1 for ResNet/DLRM; patches+1 for ViT).
  std::int64_t global_batch = 1;   ///< Sequences (samples) per optimizer step.
  int micro_batch = 1;             ///< Sequences per micro-batch (the layout may override).
  DType dtype = DType::BF16;       ///< Compute / activation / weight dtype.
  DType grad_dtype = DType::BF16;  ///< Gradient buffers and their reduction (Megatron bf16: fp32).
  Optimizer optimizer = Optimizer::Adam;
  Recompute recompute = Recompute::None;
  bool flash_attention = true;  ///< Fused attention: the s^2 softmax activations are never stored.
  /// Fused-attention kernel generation: 2 = FlashAttention-2 and later (the default), 1 = the
  /// original FlashAttention (2022 to mid-2023), which reaches about half of FA2's rate.
  int flash_attention_version = 2;
  /// LoRA / adapter fine-tuning: the base weights are frozen (no weight-gradient GEMMs, gradient
  /// reduction or optimizer step for them; the small adapters are not modelled).
  bool frozen_weights = false;
  double tokens_to_train = 0;   ///< Token models; 0 if not given.
  double samples_to_train = 0;  ///< Non-token models (or derived from tokens / seq_len).
};

struct Workload {
  std::string name;
  std::string source;  ///< Citation of the architecture / recipe.
  std::string file;    ///< File it was read from ("" when built in code).
  ModelSpec model;
  TrainingSpec training;
  std::optional<Layout> layout;  ///< The file's "parallel" section, if any.
  bool layout_has_dp = false;    ///< Whether the file's layout named dp explicitly.
};

// ---- Reading ---------------------------------------------------------------------------------

/// Reads a workload file through core/config.hpp (unknown keys, missing keys, wrong types and bad
/// units are InputErrors naming file and key path). `overrides` are `--set KEY.PATH=VALUE`.
Workload load_workload(const std::string& path, const std::vector<std::string>& overrides = {});
/// Same from JSON text; `name` stands for the file name in messages.
Workload parse_workload(const std::string& text, const std::string& name,
                        const std::vector<std::string>& overrides = {});

/// The layout to use: the file's "parallel" section (or defaults from the training recipe), then
/// `parallel_flag` ("tp=8,pp=4,..."; empty for none) on top. When `gpus` > 0 and dp was not named
/// by the flag, dp = gpus / (tp*pp*cp) (InputError if that does not divide); when dp is named,
/// gpus must equal the product. Throws InputError; does not check memory (see check_layout).
Layout resolve_layout(const Workload& w, const std::string& parallel_flag = "", int gpus = 0);

/// A job on part of a cluster of `cluster_gpus` GPUs (placement fills NVLink domains in rank
/// order). When the flag names dp the layout is resolve_layout's and may use fewer GPUs than the
/// cluster. Otherwise (a dp in the file yields, as in resolve_layout) dp is the largest value with
/// tp*pp*cp*dp <= cluster_gpus that passes check_layout (the global batch divides by micro_batch *
/// dp, ep divides dp * cp, ...): e.g. 512 of a 576-GPU GB200 NVL72 cluster for a 512-sequence batch
/// at tp 8, pp 4 would be dp 16. When the file's ep fits no dp (ep must divide dp under etp = tp:
/// DeepSeek-V3's ep 64 at pp 16 on a 576-GPU cluster, dp <= 36) and the flag does not name ep, ep
/// is halved (ep/2, ep/4,
/// ..., dividing the expert count): the largest ep that fits, at its largest dp; `note` (when
/// given) then says which ep was fitted and why. Throws InputError when no dp >= 1 fits, naming the
/// batch and the model-parallel size.
Layout fit_layout(const Workload& w, const std::string& parallel_flag, int cluster_gpus,
                  std::string* note = nullptr);

// ---- Counting --------------------------------------------------------------------------------

/// Total trainable parameters.
double params(const Workload& w);
/// Dtype of the tokens an MoE layer sends to its experts: model.moe_dispatch_dtype, else the
/// training dtype (BF16 under FP8 training: FP8 recipes quantize only inside the GEMMs).
DType moe_dispatch_dtype(const Workload& w);

/// Parameters used per token (MoE: top_k routed + shared experts); == params() for dense models.
double active_params(const Workload& w);
/// Tokens (token models) or samples to train; 0 when the file gives neither.
double tokens_to_train(const Workload& w);
/// Tokens per iteration: global_batch * seq_len (0 for non-token models).
double tokens_per_iteration(const Workload& w);

/// Model FLOPs of one iteration (forward + backward over the global batch, no recompute).
/// Transformers follow Narayanan et al. 2021 (eq. 3): per layer and token, 3x the forward GEMM
/// FLOPs plus 12*s*heads*head_dim for attention (the full s x s product, as published MFU tables
/// count it), plus the LM/classification head; generalised to GQA, gated MLPs and MoE (routed
/// top_k + shared experts + router). Dense GPT: 72*B*s*l*h^2*(1 + s/(6h) + V/(12lh)).
/// ResNet/DLRM: 3x the forward GEMM FLOPs (convolutions as im2col GEMMs, MLPs, interaction).
double model_flops_per_iteration(const Workload& w);
/// model_flops_per_iteration / tokens per iteration (per sample for non-token models).
double model_flops_per_token(const Workload& w);
/// FLOPs the GPUs execute in one iteration under `l`: model FLOPs with causal attention counted
/// at half the square (what a causal fused kernel does), attention backward at 2x forward, plus
/// recompute (selective: the attention core forward again, or the GEMMs of the listed modules;
/// full: each layer's forward again).
/// Equals the sum of Op::flops over the Program (times multiplicities).
double hardware_flops_per_iteration(const Workload& w, const Layout& l);

/// Hardware FLOPs as Megatron-LM papers count them when they report achieved TFLOP/s per GPU:
/// Narayanan et al. 2021 eq. 3 (full s x s attention, backward = 2x forward) plus recompute
/// (full: every layer's forward again, giving 96*B*s*l*h^2*(1 + s/(6h) + V/(16lh)) for dense
/// GPT; selective: the attention core's forward again, Korthikanti et al. 2022). Generalised to
/// GQA, gated MLPs and MoE like model_flops_per_iteration. A selective module list
/// (`recompute_modules`, Megatron-Core's --recompute-modules) adds the attention core only when
/// it lists core_attn: the other modules exist only in Megatron-Core, whose reported TFLOP/s
/// (megatron/training/training.py num_floating_point_operations) counts no recompute at all.
double megatron_flops_per_iteration(const Workload& w, Recompute recompute,
                                    unsigned recompute_modules = 0);

/// Memory of one GPU (one pipeline stage class), in bytes.
struct MemoryBreakdown {
  int stage = 0;                 ///< Pipeline stage this breakdown is for.
  double weights_bytes = 0;      ///< Model weights held (ZeRO-3/FSDP: the local shard).
  double gradients_bytes = 0;    ///< Gradient buffers (ZeRO-2/3: the local shard).
  double optimizer_bytes = 0;    ///< Optimizer states incl. fp32 master weights (ZeRO>=1: shard).
  double activations_bytes = 0;  ///< Stored activations of the in-flight micro-batches.
  double temporary_bytes = 0;    ///< Transient buffers (see models/README.md).
  double total_bytes = 0;
  double activations_per_layer_bytes = 0;  ///< One layer, one micro-batch (Korthikanti's term).
  double in_flight_microbatches = 0;       ///< Layer-weighted micro-batches alive at the peak.
  int layers = 0;                          ///< Transformer layers on this stage.
};

/// Activation bytes one transformer layer stores for one micro-batch on one GPU (Korthikanti et
/// al. 2022, with s = seq_len / cp, b = micro_batch, t = tp, a = heads): recompute none:
/// s*b*h*(34 + 5*a*s/h) without TP; with TP and SP: s*b*h*(34/t + 5*a*s/(h*t)); with TP without
/// SP: s*b*h*(10 + 24/t + 5*a*s/(h*t)); selective: the 5as/h term is dropped; full: 2*s*b*h (/t
/// with SP). Flash attention also drops the 5as/h term. Generalised to GQA/gated/MoE/dropout-free
/// layers from the same per-tensor accounting (models/README.md). 16-bit activations; masks 1 B.
double activation_bytes_per_layer(const Workload& w, const Layout& l, int layer = 0);

/// Memory of every pipeline stage (index = stage).
std::vector<MemoryBreakdown> memory_per_stage(const Workload& w, const Layout& l);
/// The stage that needs the most memory.
MemoryBreakdown memory_per_gpu(const Workload& w, const Layout& l);

/// Throws InputError when the layout cannot run this workload: degrees that do not divide heads,
/// kv heads, experts, layers, the global batch or the sequence; a schedule it cannot use; or
/// (when hbm_bytes > 0) memory above hbm_bytes. The message says why and what would fit.
void check_layout(const Workload& w, const Layout& l, double hbm_bytes = 0);

/// Micro-batches per pipeline per iteration: global_batch / (micro_batch * dp).
int microbatches(const Workload& w, const Layout& l);

/// Layers of virtual pipeline stage v (0 .. pp*vp-1): [first, first+count). Uneven splits give
/// the extra layers to the middle stages first (Llama 3 405B: 126 layers on 16 stages -> 7 on the
/// first and last, 8 elsewhere), then the last, then the first.
struct LayerRange {
  int first = 0, count = 0;
};
LayerRange stage_layers(const Workload& w, const Layout& l, int virtual_stage);

// ---- Program ---------------------------------------------------------------------------------

/// Expands one training iteration into the Program (program.hpp): per pipeline stage, in
/// schedule order (1F1B, interleaved 1F1B with vp chunks, or GPipe), each micro-batch's forward
/// and backward ops with TP/CP/EP collectives, PP send/recv, DP gradient reduction bucketed and
/// overlapped with backward, ZeRO-3 parameter gathers, recompute, and the optimizer step.
/// Calls check_layout(w, l) first (no memory check). O(ops); see models/README.md for sizes.
Program expand_program(const Workload& w, const Layout& l);

/// Counts for reports: op counts by kind, and collective bytes by (kind, group, size).
struct ProgramSummary {
  struct CollectiveTotal {
    Coll coll = Coll::AllReduce;
    GroupDim group = GroupDim::TP;
    std::uint32_t group_size = 1;
    std::uint64_t ops = 0;          ///< Ops in the Program (each class counted once).
    double bytes_per_rank_max = 0;  ///< Largest per-rank total over the classes.
    double bytes_all_ranks = 0;     ///< Sum over ranks (class totals x multiplicity).
  };
  std::uint64_t ops = 0;                           ///< Ops in the Program.
  EnumArray<OpKind, std::uint64_t> ops_by_kind{};  ///< Ops of each kind.
  double p2p_bytes_all_ranks = 0;                  ///< Send bytes summed over ranks.
  double flops_all_ranks = 0;                      ///< Sum of Op::flops over ranks.
  std::vector<CollectiveTotal> collectives;        ///< Sorted by (coll, group, size).
};
ProgramSummary summarize(const Program& p);

}  // namespace tutti
