#pragma once
#include "tutti/core/enum.hpp"
// The calibration profile: every parameter of tutti's compute, network and collective models in
// one place, so that measurements (`tutti calibrate`, issue 9) can replace the published defaults.
//
// File format (schemas/calibration.schema.json; documented example: sim/calibration/default.json):
//   {
//     "name": "default", "source": "...", "notes": "...",
//     "compute": {
//       "gemm":      {"efficiency_max": 0.75, "half_flops": 0, "half_time": "3.5us", "half_dim":
//       152,
//                     "bandwidth_efficiency": 0.85, "launch_overhead": "4us"},
//       "attention": {"efficiency_max": 0.55, "half_flops": 4e9,
//                     "bandwidth_efficiency": 0.85, "launch_overhead": "6us"},
//       "membound":  {"bandwidth_efficiency_max": 0.85, "half_bytes": "4MiB", "launch_overhead":
//       "3us"}, "devices": {"h100-sxm": {"peak": {"bf16": "989.4TFLOPS"}, "hbm_bandwidth":
//       "3.35TB/s",
//                                "gemm_efficiency": {"fp8": 0.68}, "attention_efficiency": 0.35,
//                                "source": "..."}}
//     },
//     "network": {"tiers": {"nvlink": {"bandwidth_efficiency": 0.85, "latency": "0us"}, ...}},
//     "nccl": {
//       "protocols": {"ll": {"bandwidth_efficiency": 0.5, "max_bytes": "64KiB",
//                            "max_bandwidth": "87.7GB/s"}, "ll128": {...},
//                     "simple": {...}},
//       "algorithms": {"ring": {"base_latency": {"ll": "6.6us", ...},
//                               "step_latency": {"nvlink": {"ll": "0.6us", ...}, "pci": {...},
//                                                "net": {...}}},
//                      "tree": {..., "bandwidth_factor": {"ll": 0.2421, "ll128": 0.8625, "simple":
//                      0.92}}, "nvls": {...}, "collnet": {...}, "nvls_tree": {...},
//                      "collnet_chain": {...}, "pat": {...}},   (these three optional)
//       "p2p_latency": "5us", "enable_tree": true, "enable_nvls": true, "enable_sharp": false,
//       "max_channels": 32, "nvls_bandwidth_efficiency": 0.835, "nvls_max_bandwidth": "474GB/s",
//       optional: "enable_pat": true, "non_nccl_algorithms": ["hierarchical"], "net_overhead":
//       "1us", "ring_plateau_latency_factor": 1.4, "collnet_direct_arity_latency": "0.4us",
//       "pat_rank_latency": "2.8us", "tree_size_correction": {"ll": [24 factors], "ll128": [...],
//       "simple": [...]}
//     }
//   }
// Any object may also carry "fitted_to": [...] (FittedTo below): what its values were fitted to.
// Every key is required except "notes", "fitted_to", each kernel's "half_time",
// "tp_overlap_gemm_slowdown", "flash_attention_1_speed", "grouped_gemm_half_tokens", "devices" (and
// each device's "peak"/"hbm_bandwidth"/ "gemm_efficiency"/"attention_efficiency"/"source"), and
// per-algorithm protocol entries (an absent protocol means the algorithm does not run it).
#include <array>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tutti/models/layout.hpp"
#include "tutti/topologies/hardware.hpp"
#include "tutti/topologies/topology.hpp"

namespace tutti {

/// eff(x) = eff_max * x / (x + half): rises from 0 towards eff_max; half = the size at which the
/// efficiency is half of eff_max. half == 0 gives a constant eff_max.
struct EfficiencyCurve {
  double eff_max = 1.0;
  double half = 0.0;
  double at(double x) const { return half <= 0 ? eff_max : eff_max * x / (x + half); }
};

/// One kernel family's roofline parameters.
struct KernelModel {
  EfficiencyCurve flops;  ///< Fraction of peak FLOP/s, as a function of the op's FLOPs.
  double half_dim = 0;    ///< GEMM: extra factor d/(d+half_dim), d = min(m, n, k) (skinny shapes).
  /// When > 0, replaces flops.half by half_time * (the op's peak * eff_max): the efficiency curve
  /// becomes a fixed time per kernel (pipeline fill and drain, the last partial wave), so it
  /// scales with the device's speed instead of staying at one FLOP count.
  double half_time_s = 0;
  /// GEMM: output tile edge (0 = none): m and n are rounded up to whole tiles, the idle part of
  /// the last tile row/column counts as lost (tile quantization: factor m/ceil(m/tile)/tile).
  double tile = 0;
  /// GEMM: extra factor k/(k + half_k) (0 = none): each output tile's main loop runs k/64 steps
  /// after a fixed pipeline fill and before a fixed epilogue, so a short k wastes a fixed share.
  double half_k = 0;
  EfficiencyCurve bandwidth;     ///< Fraction of HBM bandwidth, as a function of bytes moved.
  double launch_overhead_s = 0;  ///< Added to every kernel of this family.
  /// GPU ids whose microbenchmarks this family's flops_efficiency_max (GEMM: the BF16 rate) and
  /// bandwidth_efficiency_max were fitted to or read from ("measured_on"). On any other device
  /// without its own override the family's values are defaults (calibration_defaults).
  std::vector<std::string> measured_on;
};

/// Replaces catalog numbers for one device id ("h100-sxm") or "*" (every device), e.g. a CPU host
/// whose measured peak is what `tutti calibrate` found. Zero means "keep the catalog value".
struct DeviceOverride {
  std::string gpu;
  std::array<double, kNumDTypes> peak_flops{};  ///< Indexed by DType.
  double hbm_bw_Bps = 0;
  /// GEMM efficiency_max of this device per DType (replaces the gemm family's flops_efficiency_max;
  /// 0 = keep it): what cuBLAS reaches on large GEMMs differs per generation and dtype.
  std::array<double, kNumDTypes> gemm_efficiency{};
  double attention_efficiency =
      0;               ///< Replaces the attention family's flops_efficiency_max (0 = keep).
  std::string source;  ///< Where this device's numbers come from.
};

/// Per link tier: achieved fraction of the link's bandwidth and extra latency per hop.
struct TierModel {
  double bandwidth_efficiency = 1.0;
  double extra_latency_s = 0;
  std::vector<std::string>
      measured_on;  ///< GPU ids whose links' measurements set it ("measured_on").
};

// clang-format off
#define TUTTI_NCCL_PROTO_VALUES(X) X(LL, "ll") X(LL128, "ll128") X(Simple, "simple")
// clang-format on
TUTTI_ENUM(NcclProto, std::uint8_t, TUTTI_NCCL_PROTO_VALUES);
constexpr int kNumProtos = 3;
/// NCCL's algorithms (src/graph/tuning.cc, NCCL_NUM_ALGORITHMS): ring, (double binary) tree,
/// NVLS (NVSwitch in-switch reduction), CollNet direct (SHARP in-network reduction, keyed
/// "collnet"), NVLS tree (NVLS inside each NVLink domain, trees across them), CollNet chain and
/// PAT (parallel aggregated trees, all-gather / reduce-scatter with one GPU per node).
// clang-format off
#define TUTTI_NCCL_ALGO_VALUES(X)                                                              \
  X(Ring, "ring") X(Tree, "tree") X(Nvls, "nvls") X(CollNet, "collnet") X(NvlsTree, "nvls_tree") \
  X(CollNetChain, "collnet_chain") X(Pat, "pat")
// clang-format on
TUTTI_ENUM(NcclAlgo, std::uint8_t, TUTTI_NCCL_ALGO_VALUES);
constexpr int kNumNcclAlgos = 7;
/// Hardware class of a step (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET).
enum class NcclHw : std::uint8_t { NVLink, PCI, Net };

struct NcclProtocol {
  double bandwidth_efficiency = 1.0;  ///< Payload fraction on the wire (LL: 8 of 16 bytes).
  double max_bytes = 0;               ///< Largest collective size that may use it (0 = no limit).
  /// Ceiling on the payload rate per GPU link (bytes/s; 0 = none): a limit of the GPU side of
  /// the protocol, not of the wire (LL: flag-checked 8-byte stores; NCCL's llMaxBw).
  double max_bandwidth_Bps = 0;
};

struct NcclAlgorithm {
  /// Per protocol: fixed latency per collective call (s); negative = protocol unsupported.
  std::array<double, kNumProtos> base_latency_s{-1, -1, -1};
  /// [hw][proto]: latency per algorithm step (s).
  std::array<std::array<double, kNumProtos>, 3> step_latency_s{};
  /// Per protocol: payload fraction of the bus bandwidth this algorithm reaches (NCCL's per
  /// algorithm/protocol refinements in ncclTopoTuneModel: tree x0.92, tree LL /3.8, PAT x0.75,
  /// ...). 0 = the protocol's bandwidth_efficiency. File key "bandwidth_factor" (optional).
  std::array<double, kNumProtos> bandwidth_factor{};
  bool supports(NcclProto p) const { return base_latency_s[static_cast<int>(p)] >= 0; }
};

struct NcclModel {
  std::array<NcclProtocol, kNumProtos> protocols;
  std::array<NcclAlgorithm, kNumNcclAlgos> algorithms;
  double p2p_latency_s = 5e-6;  ///< Fixed cost of a send/recv pair (and each all-to-all step).
  bool enable_tree = true, enable_nvls = true;
  /// NCCL_COLLNET_ENABLE: CollNet (SHARP) and multi-node NVLS run only when this is true and the
  /// fabric's switches reduce in the network. NCCL's default is off (init.cc: collnetEnable 0).
  bool enable_sharp = true;
  /// NCCL_PAT_ENABLE (default 2 = on where NCCL can: one GPU per node). File key optional.
  bool enable_pat = true;
  /// Algorithms beyond NCCL that the tuner may pick ("non_nccl_algorithms": ["hierarchical"]).
  /// Off by default: the tuner chooses among NCCL's own algorithms only.
  bool allow_hierarchical = false;
  /// NCCL's per-step network post overhead on multi-node rings (getNetOverhead; x3 for Simple).
  double net_overhead_s = 0;
  /// Factor on a multi-node Simple ring all-reduce's latency (NCCL's "plateau effect of ring").
  double ring_plateau_latency_factor = 1.0;
  /// CollNet direct: latency per local rank of the in-node scatter ("arity serialization").
  double collnet_direct_arity_latency_s = 0;
  /// PAT: latency per rank ("still a linear part").
  double pat_rank_latency_s = 0;
  /// NCCL's treeCorrectionFactor: factor on the tree all-reduce bandwidth per protocol, at
  /// log2(bytes / 64) = 0..23 (mid sizes run below the model). 1 = none.
  std::array<std::array<double, 24>, kNumProtos> tree_size_correction{};
  int max_channels = 32;
  /// NVLS (NVLink SHARP) runs its S(1+1/k) per-port multimem traffic at this fraction of the
  /// effective NVLink rate (the ring's), and its algorithm bandwidth S/t per GPU is at most
  /// nvls_max_bandwidth_Bps (0 = no ceiling).
  double nvls_bandwidth_efficiency = 1.0;
  double nvls_max_bandwidth_Bps = 0;
  std::string source;
  /// GPU ids whose NCCL measurements nvls_bandwidth_efficiency was fitted to ("measured_on").
  std::vector<std::string> measured_on;
};

/// What one object of the profile was fitted to: its "fitted_to" array. Entries are
/// "case:<validation case id>", "source:<source key>" or "file:<repo-relative path>" (a file that
/// must exist, e.g. sim/calibration/microbench/gemm-mamf.json). `tutti validate` scores cases that
/// a constant was fitted to apart from the rest; `tutti calibrate defaults` refits the "file:"
/// ones.
struct FittedTo {
  std::string path;                  ///< Key path of the object ("compute.gemm"; "" = the root).
  std::vector<std::string> targets;  ///< The entries, in file order.
};

struct CalibrationProfile {
  std::string name = "default";
  std::string source;  ///< Where the numbers come from (publications or the calibration run).
  std::string file;    ///< File it was loaded from ("" for the built-in default).
  KernelModel gemm, attention, membound;
  /// Factor (>= 1) on a GEMM that runs alongside a TP collective under Megatron --tp-comm-overlap
  /// (Op::tp_overlap): Transformer Engine userbuffers take SMs from it for the communication.
  double tp_overlap_gemm_slowdown = 1.0;
  /// Rate of the original FlashAttention kernel (Op::flash_v1) as a fraction of the attention
  /// family's (FlashAttention-2-class) rate on the same device.
  double flash_attention_1_speed = 1.0;
  /// Grouped (per-expert) GEMMs (Op::grouped) run at the GEMM model's rate times
  /// tokens / (tokens + grouped_gemm_half_tokens), tokens = the busiest expert's rows (m of the
  /// forward and dgrad, k of the wgrad). 0: no penalty.
  double grouped_gemm_half_tokens = 0;
  std::vector<DeviceOverride> devices;
  std::array<TierModel, 8> tiers;  ///< Indexed by Tier.
  NcclModel nccl;
  std::vector<FittedTo> fitted_to;  ///< Every "fitted_to" in the file, in reading order.

  /// The override for `gpu_id` (exact id first, then "*"), or nullptr.
  const DeviceOverride* device(const std::string& gpu_id) const;
  const TierModel& tier(Tier t) const { return tiers[static_cast<int>(t)]; }
};

/// The built-in profile: parsed from sim/calibration/default.json embedded at build time.
/// Its numbers come from published microbenchmarks and NCCL's own tuning tables (see the file's
/// "source" fields), never fitted to end-to-end training results.
const CalibrationProfile& default_calibration();

/// Reads a profile strictly (core/config.hpp): unknown/missing keys, wrong types, bad units and
/// out-of-range values throw InputError naming the file and key path.
CalibrationProfile load_calibration(const std::string& path);
/// The profile a `--calibration PATH` flag selects: load_calibration(path), or a copy of the
/// built-in default when `path` is empty.
CalibrationProfile calibration_for(const std::string& path);
/// Same, from JSON text (`name` appears in error messages).
CalibrationProfile parse_calibration(const std::string& text, const std::string& name);

/// The profile in the file format above (round-trips through parse_calibration).
void to_json(nlohmann::json& j, const CalibrationProfile& p);

// to_string / parse_enum for NcclProto and NcclAlgo come from their tables (core/enum.hpp).

/// One value of the compute or collective model that device `gpu` takes from a generic default:
/// neither the device's own override nor a microbenchmark of that device stands behind it.
struct CalibrationDefault {
  std::string key;   ///< Profile key path: "compute.attention.flops_efficiency_max", ...
  std::string what;  ///< What it models: "attention (fused, fwd+bwd)", "BF16 GEMM", ...
  double value = 0;  ///< The value the device gets.
  std::string
      basis;  ///< Where the generic value comes from: "measured on h100-sxm-80gb", "estimate".
};

/// The one place that decides which compute and collective model values are defaults for `gpu`
/// under `profile` (used by simulate, plan, report, validate and `catalog show`). A value is a
/// default when the profile has no override for the device (compute.devices.<id>) and the
/// generic value's measured_on does not name the device. Checked: GEMM efficiency for each
/// training dtype the GPU has a peak for (bf16, fp8 and the block-scaled ones), fused attention,
/// memory-bound kernels (HBM), and, where the GPU has a scale-up link, the NVLink/xGMI tier's
/// bandwidth efficiency and (NVIDIA) the NVLS efficiency. Deterministic order.
std::vector<CalibrationDefault> calibration_defaults(const CalibrationProfile& profile,
                                                     const GpuSpec& gpu);

/// "fused attention efficiency 0.55 (estimate); ..." ("" when none).
std::string calibration_defaults_text(const std::vector<CalibrationDefault>& d);
/// "b200: calibration defaults used (...): <calibration_defaults_text>" or "" when none: the
/// one-line notice the commands print (stderr beside text output).
std::string calibration_defaults_line(const std::string& gpu_id,
                                      const std::vector<CalibrationDefault>& d);

/// The JSON field the commands emit: [{"key", "what", "value", "basis"}, ...].
nlohmann::json calibration_defaults_json(const std::vector<CalibrationDefault>& d);

}  // namespace tutti
