#pragma once
// Parallel layout and numeric types shared by workloads, engines and the execution backend.
#include <string>
#include <string_view>

namespace tutti {

enum class DType { FP32, TF32, BF16, FP16, FP8 };
/// Bytes per element of a dtype (fp8: 1, bf16/fp16: 2, tf32/fp32: 4).
double dtype_bytes(DType d);
const char* to_string(DType d);

enum class Recompute { None, Selective, Full };
enum class PipeSchedule { OneFOneB, Interleaved, GPipe };

/// A parallel layout. GPUs = tp * pp * dp * cp. Experts are sharded over ep ranks: with the
/// expert tensor parallelism equal to tp (the default), the ep ranks are taken from the
/// data-parallel ranks and ep divides dp; with etp = 1 (Megatron-Core "parallel folding",
/// --expert-tensor-parallel-size 1), the expert layers re-fold each stage's tp*cp*dp ranks as
/// ep (fastest) x edp, so ep may span tp x dp and must divide tp*cp*dp.
struct Layout {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  int etp = 0;  ///< Expert tensor parallelism: 0 = tp (default), or 1 (parallel folding).
  int vp = 1;         ///< Virtual stages per rank (interleaved 1F1B when > 1).
  int zero = 1;       ///< ZeRO stage 0..3 (3 == FSDP full sharding).
  bool fsdp = false;  ///< PyTorch FSDP naming of zero=3 (changes comm schedule names only).
  bool sequence_parallel = true;  ///< Megatron SP (only meaningful when tp > 1).
  /// Megatron --tp-comm-overlap (Transformer Engine userbuffers): the SP all-gathers and
  /// reduce-scatters run chunked, concurrently with the adjacent GEMMs (needs sp and tp > 1).
  bool tp_overlap = false;
  int micro_batch = 1;            ///< Sequences per micro-batch.
  PipeSchedule schedule = PipeSchedule::OneFOneB;
  Recompute recompute = Recompute::None;

  int gpus() const { return tp * pp * dp * cp; }
  /// Tensor-parallel degree of the expert weights (etp, or tp when etp is 0).
  int expert_tp() const { return etp > 0 ? etp : tp; }
  /// True when the expert layers fold the stage's ranks (etp = 1 with tp > 1): EP groups span
  /// tp x cp x dp, tokens stay sequence-parallel through the MoE layer.
  bool folded() const { return etp == 1 && tp > 1; }
  /// Ranks that hold the same experts (expert-data-parallel group size).
  int edp() const { return tp * cp * dp / (expert_tp() * ep); }
};

/// Parses "tp=8,pp=4,cp=1,ep=1,etp=1,zero=1,vp=2,mb=1,dp=4,sp=1,tp_overlap=0,recompute=selective,
/// schedule=1f1b"
/// on top of `base`. Throws InputError (file "--parallel") naming the bad item.
Layout parse_layout_flag(std::string_view text, Layout base = {});
const char* to_string(Recompute r);     ///< "none", "selective", "full"
const char* to_string(PipeSchedule s);  ///< "1f1b", "interleaved", "gpipe"
std::string to_string(const Layout& l);  ///< "tp=8,pp=4,dp=2,cp=1,ep=1,vp=1,zero=1,mb=1,..."

}  // namespace tutti
