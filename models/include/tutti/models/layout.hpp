#pragma once
// Parallel layout and numeric types shared by workloads, engines and the execution backend.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tutti/core/enum.hpp"

namespace tutti {

// Numeric formats. fp8: E4M3/E5M2 with per-tensor scales (Hopper's FP8, Transformer Engine's
// delayed/current scaling). The block-scaled formats carry one scale per block of elements
// (OCP Microscaling Formats (MX) v1.0: blocks of 32 with an E8M0 scale; NVIDIA NVFP4: blocks
// of 16 with an E4M3 scale and a per-tensor FP32 scale): mxfp8 (E4M3/E5M2 elements), mxfp6
// (E2M3/E3M2), mxfp4 and nvfp4 (E2M1). Their peaks are the catalog's per GPU: a GPU without a
// peak for a format has no tensor-core support for it (Hopper: fp8 only).
// clang-format off
#define TUTTI_DTYPE_VALUES(X) \
  X(FP32, "fp32") X(TF32, "tf32") X(BF16, "bf16") X(FP16, "fp16") X(FP8, "fp8") X(MXFP8, "mxfp8") \
  X(MXFP6, "mxfp6") X(MXFP4, "mxfp4") X(NVFP4, "nvfp4")
// clang-format on
TUTTI_ENUM(DType, int, TUTTI_DTYPE_VALUES);
/// Number of dtypes (the size of every per-dtype array).
inline constexpr int kNumDTypes = static_cast<int>(enum_count<DType>);
/// Bytes per element of a dtype, block scale factors included (fp8: 1, mxfp8: 1 + 1/32,
/// mxfp6: 0.75 + 1/32, mxfp4: 0.5 + 1/32, nvfp4: 0.5 + 1/16 (the per-tensor FP32 scale is
/// negligible), bf16/fp16: 2, tf32/fp32: 4).
double dtype_bytes(DType d);
/// Block-scaling overhead: scale-factor bytes per element (0 for unscaled formats and fp8).
double dtype_scale_bytes(DType d);
/// Elements per scale block (0 when the format has none): 32 for MX, 16 for NVFP4.
int dtype_block_elements(DType d);
/// True for the formats that training recipes use only inside GEMMs (fp8 and the block-scaled
/// ones): attention, element-wise ops, communication and master weights stay in BF16, and every
/// GEMM input is quantized first (a memory-bound cast the expansion adds).
bool is_gemm_only_dtype(DType d);

// clang-format off
#define TUTTI_RECOMPUTE_VALUES(X) X(None, "none") X(Selective, "selective") X(Full, "full")
// clang-format on
TUTTI_ENUM(Recompute, int, TUTTI_RECOMPUTE_VALUES);
/// The submodules selective recompute re-runs, Megatron-Core's --recompute-modules (names as
/// Megatron spells them; TransformerConfig.recompute_modules in
/// megatron/core/transformer/transformer_config.py): "core_attn" (the attention core; the
/// default), "moe_act" (the routed experts' activation function), "layernorm" (input_layernorm and
/// pre_mlp_layernorm), "mla_up_proj" (MLA up projection and RoPE), "mlp" (the dense MLP),
/// "moe" (the whole MoE layer: router, permutation, dispatch/combine all-to-all, experts, shared
/// experts), "shared_experts". moe_act, layernorm and mla_up_proj use output-discarding
/// checkpointing (the module's output is freed after its consumer ran and recomputed in
/// backward); the others keep only the module's input.
// clang-format off
#define TUTTI_RECOMPUTE_MODULE_VALUES(X) \
  X(CoreAttn, "core_attn") X(MoeAct, "moe_act") X(LayerNorm, "layernorm") \
  X(MlaUpProj, "mla_up_proj") X(Mlp, "mlp") X(Moe, "moe") X(SharedExperts, "shared_experts")
// clang-format on
TUTTI_ENUM(RecomputeModule, int, TUTTI_RECOMPUTE_MODULE_VALUES);
/// Bit of a module in Layout::recompute_modules.
constexpr unsigned recompute_bit(RecomputeModule m) {
  return 1u << static_cast<int>(m);
}
/// Parses "layernorm+moe" (module names joined by '+', Megatron's names) into a bit set; nullopt
/// naming nothing when a name is unknown (`bad` receives it).
std::optional<unsigned> parse_recompute_modules(std::string_view text, std::string* bad = nullptr);
/// "layernorm+moe": the modules of a bit set in declaration order ("" for none).
std::string recompute_modules_string(unsigned bits);
// clang-format off
#define TUTTI_PIPE_SCHEDULE_VALUES(X) X(OneFOneB, "1f1b") X(Interleaved, "interleaved") X(GPipe, "gpipe")
// clang-format on
TUTTI_ENUM(PipeSchedule, int, TUTTI_PIPE_SCHEDULE_VALUES);

/// A parallel layout. GPUs = tp * pp * dp * cp. Experts are sharded over ep ranks: with the
/// expert tensor parallelism equal to tp (the default), the ep ranks are taken from the
/// data-parallel ranks and ep divides dp; with etp = 1 (Megatron-Core "parallel folding",
/// --expert-tensor-parallel-size 1), the expert layers re-fold each stage's tp*cp*dp ranks as
/// ep (fastest) x edp, so ep may span tp x dp and must divide tp*cp*dp.
struct Layout {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  int etp = 0;  ///< Expert tensor parallelism: 0 = tp (default), or 1 (parallel folding).
  int vp = 1;   ///< Virtual stages per rank (interleaved 1F1B when > 1).
  /// Data-parallel sharding stage. 0: plain DDP (gradient all-reduce, replicated optimizer);
  /// 1: optimizer states sharded (Megatron distributed optimizer: gradient reduce-scatter, then
  /// parameter all-gather after the step); 2: gradients sharded too (same traffic as 1, less
  /// memory); 3: parameters sharded (FSDP / ZeRO-3: per-layer all-gather before use, gradient
  /// reduce-scatter after each layer's backward).
  int zero = 1;
  /// Hybrid sharding (FSDP HYBRID_SHARD / HSDP, Megatron-FSDP's outer data-parallel group): states
  /// are sharded inside groups of `shard_group` consecutive data-parallel ranks (dp*cp ranks
  /// when cp > 1) and replicated across the dp*cp/shard_group groups; the reduce-scatters and
  /// all-gathers run inside a group, and an all-reduce of the gradient shard runs across the
  /// groups. 0 = one group of all data-parallel ranks. Dense weights only: MoE expert weights
  /// stay sharded over their expert-data-parallel group.
  int shard_group = 0;
  /// zero=3: FSDP reshard_after_forward. 1: parameters are freed after each layer's forward and
  /// gathered again for its backward; 0: kept from forward to backward (no backward all-gather,
  /// the stage's whole unsharded parameters in memory). -1 (default) = torchtitan's default:
  /// 1 without pipelining, 0 with it. See reshard_after_forward().
  int reshard = -1;
  bool fsdp = false;  ///< PyTorch FSDP naming of zero=3 (changes comm schedule names only).
  bool sequence_parallel = true;  ///< Megatron SP (only meaningful when tp > 1).
  /// Megatron --tp-comm-overlap (Transformer Engine userbuffers): the SP all-gathers and
  /// reduce-scatters run chunked, concurrently with the adjacent GEMMs (needs sp and tp > 1).
  bool tp_overlap = false;
  int micro_batch = 1;  ///< Sequences per micro-batch.
  PipeSchedule schedule = PipeSchedule::OneFOneB;
  Recompute recompute = Recompute::None;
  /// With recompute = selective: the modules re-run in backward (bits of RecomputeModule).
  /// 0 = Megatron's default list, core_attn alone (what selective meant before module lists).
  unsigned recompute_modules = 0;

  int gpus() const { return tp * pp * dp * cp; }
  /// Tensor-parallel degree of the expert weights (etp, or tp when etp is 0).
  int expert_tp() const { return etp > 0 ? etp : tp; }
  /// True when the expert layers fold the stage's ranks (etp = 1 with tp > 1): EP groups span
  /// tp x cp x dp, tokens stay sequence-parallel through the MoE layer.
  bool folded() const { return etp == 1 && tp > 1; }
  /// Ranks that hold the same experts (expert-data-parallel group size).
  int edp() const { return tp * cp * dp / (expert_tp() * ep); }
  /// Ranks of one sharding group (shard_group, or every data-parallel rank when 0).
  int shard_size() const { return shard_group > 0 ? shard_group : dp * cp; }
  /// Whether zero=3 frees gathered parameters after forward (reshard resolved: -1 gives
  /// pp == 1, torchtitan's apply_fsdp default `reshard_after_forward = not pp_enabled`).
  bool reshard_after_forward() const { return reshard < 0 ? pp == 1 : reshard == 1; }
  /// Whether backward re-runs the forward of module `m` (selective recompute with `m` in the
  /// module list; full recompute re-runs whole layers and is not a module).
  bool recomputes(RecomputeModule m) const {
    if (recompute != Recompute::Selective) return false;
    return recompute_modules == 0 ? m == RecomputeModule::CoreAttn
                                  : (recompute_modules & recompute_bit(m)) != 0;
  }
};

/// Parses "tp=8,pp=4,cp=1,ep=1,etp=1,zero=1,vp=2,mb=1,dp=4,sp=1,tp_overlap=0,recompute=selective,
/// schedule=1f1b,shard_group=8,reshard=0,recompute_modules=layernorm+moe"
/// on top of `base`. Throws InputError (file "--parallel") naming the bad item.
Layout parse_layout_flag(std::string_view text, Layout base = {});
// to_string / parse_enum for DType, Recompute and PipeSchedule come from their tables.
std::string to_string(const Layout& l);  ///< "tp=8,pp=4,dp=2,cp=1,ep=1,vp=1,zero=1,mb=1,..."
/// The compact form tables and reports show: "tp4 pp4 dp32 cp2 vp4 mb1 z1 sg2 none" (cp, ep, etp,
/// vp, sg (shard group) and rs (reshard) only when they are not the default; recompute last:
/// none, sel or full). The one formatter for a layout in a table column.
std::string to_compact_string(const Layout& l);

}  // namespace tutti
