#pragma once
// Engines: predict one training iteration (and the whole run) of a Program on a cluster.
//
//   native    flow-level discrete-event engine (DES). Runs every rank class of the Program with
//             its streams and dependencies; compute ops take op_time_s (compute_model.hpp);
//             collectives and send/recv become flows on routed paths that share links max-min
//             fairly (network.hpp, CM02). Symmetry: one class stands for all its ranks (they run
//             in lock-step), and a collective of a class starts the same collective in every group
//             of that class at once, so every flow crossing the fabric is routed and shares links
//             with all concurrent traffic. Collectives whose groups stay inside one node are
//             routed for the representative node only (other nodes' links carry an identical,
//             disjoint copy). Lock-step ring steps run as macro flows (collective_model.hpp),
//             paced in chunks of steps where contention moves a collective's bottleneck from one
//             flow to another (per-step barriers then cost a sum of per-step maxima); when ECMP
//             collisions make the data-parallel replicas of a class see different contention, the
//             class runs one timeline per replica. Rates are re-solved only for the component of
//             links that changed.
//             Send/Recv rendezvous: the transfer starts when both sides have been issued; the
//             stream continues after issuing a send/recv (like NCCL group calls), while ops that
//             depend on it wait for its completion.
//   analytic  closed forms, no events: per stage, the compute of one micro-batch (forward and
//             backward) plus the exposed collectives on its critical path, alpha-beta collective
//             times with the tuner's per-tier bandwidths, the pipeline bubble (p-1)/(v*m) of the
//             schedule, and the tail of data-parallel collectives not hidden by the backward pass.
//             Agrees with the native engine within 2% when the fabric is not congested.
//   simgrid   SimGrid (issue 6), through simulate_simgrid in simgrid_engine.hpp.
//
// The planner's fast path is AnalyticJob: per-stage costs in closed form (no Program expansion),
// evaluated by analytic_iteration() in well under a microsecond per configuration.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tutti/core/enum.hpp"
#include "tutti/core/progress.hpp"
#include "tutti/models/program.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/result.hpp"
#include "tutti/sim/trace.hpp"
#include "tutti/topologies/hardware.hpp"
#include "tutti/topologies/topology.hpp"

namespace tutti {

struct Workload;
struct Cluster;

/// The native engine's data-parallel replica timelines (simulate --replicas):
///   Grouped  replicas whose transfers meet the same link loads share a timeline (the default;
///            the output names the approximation where the data-parallel collectives' flows
///            would set more apart);
///   Strict   the groups refined by the data-parallel collectives' flows too: per-replica exact;
///   Each     one timeline per replica (the reference the others are tested against).
/// Expert parallelism runs one lock-stepped timeline per stage whatever the mode (Strict and Each
/// are refused there, by simulate(); other engines have no replica timelines, and the CLI refuses
/// --replicas with them).
// clang-format off
#define TUTTI_REPLICA_MODE_VALUES(X) X(Grouped, "grouped") X(Strict, "strict") X(Each, "each")
// clang-format on
TUTTI_ENUM(ReplicaMode, std::uint8_t, TUTTI_REPLICA_MODE_VALUES);

/// Options of simulate() (the CLI's flags).
struct SimOptions {
  std::string engine = "native";                ///< "native" | "analytic" | "simgrid".
  ReplicaMode replicas = ReplicaMode::Grouped;  ///< Native engine (ReplicaMode).
  std::string calibration;                      ///< Profile path; empty = default_calibration().
  TraceOptions trace;             ///< Chrome/Perfetto trace (native engine); path empty = none.
  double compute_slowdown = 1.0;  ///< >= 1: multiplies every compute op (thermal throttling).
  std::uint64_t seed = 1;         ///< ECMP hash seed.
  bool check_memory = true;       ///< false: predict even when the memory estimate exceeds HBM
                                  ///< (validation of runs known to have fit).
  ProgressFn progress;  ///< SimGrid engine: (ops done, ops) as they finish; empty = silent.
};

/// The hardware an engine needs, independent of how the cluster file is written.
struct SimCluster {
  std::string name;
  std::shared_ptr<const Topology> topology;
  GpuSpec gpu;
  bool nvls = false;   ///< NVSwitch in-switch reduction available.
  bool sharp = false;  ///< Fabric switches with SHARP in-network reduction.
};

/// The engines' view of a cluster file: topology, GPU, NVLS (NVSwitch nodes with Hopper or
/// later GPUs) and SHARP (InfiniBand switches that support it).
SimCluster sim_cluster(const Cluster& cluster);

/// Simulates `workload` with layout `layout` on `cluster` (the CLI's entry point):
/// check_layout (InputError with the reason when infeasible or out of memory), expand_program,
/// then the engine named by options.engine ("native" or "analytic"; "simgrid" is run through
/// simulate_simgrid, simgrid_engine.hpp). Fills time_to_train from the workload's tokens or
/// samples to train and memory_per_gpu_bytes. Throws InputError for a bad engine name, a
/// calibration file that does not parse, or a layout that needs more GPUs than the cluster has.
SimResult simulate(const Workload& workload, const Cluster& cluster, const Layout& layout,
                   const SimOptions& options);

/// Options of the Program-level entry points.
struct ProgramSimOptions {
  double compute_slowdown = 1.0;
  std::uint64_t seed = 1;
  TraceOptions trace;          ///< Written by the native engine (trace.hpp); path empty = none.
  double tokens_to_train = 0;  ///< For time_to_train_s (0: use samples_to_train).
  double samples_to_train = 0;
  int max_bottleneck_links = 10;
  /// Native engine: one timeline per data-parallel replica instead of one per group of replicas
  /// that meet the same link loads (the groups are exact; this is the reference tests compare to).
  bool per_replica = false;
  /// Native engine: refine the replica groups by the flows of collectives over DP-like groups too
  /// (those join every replica of a stage). Provably per-replica exact, but it sets apart almost
  /// every replica of a large fabric; by default they are left out (engine.cpp, replica_groups).
  bool strict_replica_groups = false;
  /// Native engine: when set, receives the number of timelines per rank class it ran (replica
  /// groups: 1 when every replica meets the same contention, up to dp).
  int* replica_timelines = nullptr;
  /// Native engine: with one timeline per stage, simulate the flows inside a node in one node of
  /// the stage and mirror the others (exact where its checks hold, engine.cpp Des::route; the run
  /// falls back to every flow where they do not). False: every flow (tests compare the two).
  bool mirror_nodes = true;
  /// Native engine, with mirror_nodes: also simulate the flows between the nodes of an EP group
  /// (a run of whole nodes, several per stage) that stay inside it in one EP group of the stage and
  /// mirror the others, while no other flow crosses their links (engine.cpp Des::route; the run
  /// falls back to node mirroring where a check fails). False: node mirroring only.
  bool mirror_ep_groups = true;
  /// Native engine: when set, receives the number of flows it mirrored instead of simulating.
  std::size_t* mirrored_flows = nullptr;
  /// Native engine: a collective whose flows stay on links no other timeline's flows cross
  /// (a tensor-parallel group inside one node) takes the duration of its first undisturbed run
  /// when it runs alone on those links again, without simulating its flows (exact where its
  /// checks hold, engine.cpp "Private runs"; the run falls back to every flow where they do
  /// not). False: every run simulated (tests compare the two).
  bool memo_private = true;
  /// Native engine: when set, receives the number of collective runs it took from the memo.
  std::size_t* memo_runs = nullptr;
  /// Native engine, with mirror_nodes and memo_private, no expert parallelism: when the traffic
  /// between nodes and the links it crosses map onto themselves when every GPU is replaced by the
  /// next GPU of its node (local index i -> i + 1 mod GPUs per node: the rails of a rail-optimized
  /// or rail-symmetric fabric), simulate only the flows from each node's first GPU and mirror the
  /// others, with the links every rail shares (spine and core bundles) at 1/(GPUs per node) of
  /// their capacity (exact where its checks hold, engine.cpp Des::quotient_rails; the run falls
  /// back to every rail where they do not). False: every rail (tests compare the two).
  bool quotient_rails = true;
  /// Native engine: when set, receives the number of flows between nodes left to rail symmetry
  /// (0: the rail quotient was off or did not apply).
  std::size_t* rail_images = nullptr;
  /// Native engine: when set, receives the mirroring the run ended with: 2 nodes and EP groups, 1
  /// nodes only, 0 none (a failed check restarts the run one level down).
  int* mirror_level = nullptr;
  /// SimGrid engine: (ops done, ops) as they finish, called in the forked child that runs SimGrid
  /// (a ProgressBar's callback draws from there; it clears its line when done reaches the total).
  ProgressFn progress;
};

/// Native event engine on a hand-built or expanded Program. Throws InputError for a Program
/// whose ranks do not fit the cluster, for bad trace filters or a trace over
/// options.trace.max_bytes (check_trace, before simulating); InternalError if the Program
/// deadlocks (unmatched send/recv, dependency cycle).
SimResult simulate_program(const Program& program, const SimCluster& cluster,
                           const CalibrationProfile& profile,
                           const ProgramSimOptions& options = {});

/// Analytic engine on a Program (closed forms over its ops; see AnalyticJob).
SimResult simulate_program_analytic(const Program& program, const SimCluster& cluster,
                                    const CalibrationProfile& profile,
                                    const ProgramSimOptions& options = {});

// ---- Analytic fast path (planner) -------------------------------------------------------------

/// Per pipeline stage, per micro-batch (and per virtual chunk when interleaved, summed over
/// chunks): seconds on the critical path of the compute stream.
struct AnalyticStage {
  double fwd_s = 0;      ///< Forward compute + exposed blocking comm (TP/CP/EP) of one micro-batch.
  double bwd_s = 0;      ///< Backward (incl. recompute) + exposed blocking comm.
  double p2p_s = 0;      ///< One activation send/recv between stages (0 for the last stage).
  double dp_comm_s = 0;  ///< Gradient/parameter collectives per iteration (alpha-beta).
  EnumArray<GroupDim, double> dp_comm_dim_s{};  ///< dp_comm_s by group (DP, DPxCP, EDP).
  double dp_overlap_s = 0;  ///< Backward time available to hide dp_comm_s behind.
  double optimizer_s = 0;   ///< Optimizer step and other per-iteration compute.
  EnumArray<GroupDim, double>
      exposed_s{};  ///< Blocking comm per GroupDim inside fwd_s + bwd_s (for the breakdown).
  EnumArray<MoePart, double> moe_s{};  ///< Busy time per MoePart over the iteration.
  // Per-iteration busy time of the stage's streams (all micro-batches), for the power model:
  double gemm_busy_s = 0;    ///< Compute-bound ops (GEMM, attention).
  double memory_busy_s = 0;  ///< Memory-bound ops (norms, activations, optimizer).
  double comm_busy_s = 0;    ///< Collectives and pipeline sends (summed; streams may overlap).
};

struct AnalyticJob {
  std::vector<AnalyticStage> stages;  ///< pp entries.
  int microbatches = 1;               ///< m per iteration per pipeline.
  int virtual_stages = 1;             ///< v (interleaved 1F1B).
  PipeSchedule schedule = PipeSchedule::OneFOneB;
};

struct AnalyticTime {
  double iteration_s = 0;
  double compute_s = 0;  ///< On the critical stage.
  double bubble_s = 0;
  EnumArray<GroupDim, double> exposed_s{};
  double other_s = 0;
  EnumArray<MoePart, double> moe_s{};  ///< The critical stage's MoE part busy times.
};

/// Closed-form iteration: critical stage i* = argmax (fwd+bwd); steady state m*(fwd+bwd) of
/// the slowest stage, fill/drain (p-1)/v * (fwd+bwd) (+ p2p per boundary), plus the part of the
/// DP collectives that the last backward chunk cannot hide, plus the optimizer. No allocation.
AnalyticTime analytic_iteration(const AnalyticJob& job);
/// Records `t` in `r`: engine "analytic", iteration_time_s and the breakdown (compute, bubble,
/// other, exposed comm per GroupDim). Leaves every other field alone.
void record_analytic_time(const AnalyticTime& t, SimResult& r);

/// Uncontended time of one collective (tuner's choice, alpha-beta), for building AnalyticJobs.
double collective_time_s(Coll coll, double bytes, const std::vector<int>& group,
                         const CollectiveContext& ctx);

/// One collective in every group of `dim` of the stage whose first rank is `first`, at once: one
/// max-min run on an idle fabric (simulate_collectives, ECMP seed `seed`), concurrent groups
/// sharing NICs and switch links. With pp = 1, simulate_program_analytic list-schedules the class's
/// ops on their streams with these times and attributes the timeline with the native engine's rules
/// (attribute_timeline); collectives of two streams sharing links (a DP-stream gather beside an EP
/// all-to-all) are not modelled.
double stage_collective_time_s(Coll coll, double bytes, GroupDim dim, const Layout& layout,
                               int first, const CollectiveContext& ctx, std::uint64_t seed = 1);

/// Summarises a Program into an AnalyticJob (pp > 1 and the planner): collectives timed alone, in
/// one group (collective_time_s; all groups per configuration would cost the planner minutes).
/// `seed` unused.
AnalyticJob analytic_job(const Program& program, const SimCluster& cluster,
                         const CalibrationProfile& profile, double compute_slowdown = 1.0,
                         std::uint64_t seed = 1);

/// Runs collective plans concurrently on an otherwise idle fabric, each as the engine runs it
/// (its fixed latency, then its phases in order, each phase macro flows routed with the engine's
/// ECMP hash and paced as the engine paces a plan's first run), and returns the time at which the
/// last one finishes (seconds).
/// `finish_s`, when given, receives each plan's own finish time. For tests and cross-validation.
double simulate_collectives(const std::vector<CollectivePlan>& plans, const Topology& topo,
                            const CalibrationProfile& profile, std::uint64_t seed = 1,
                            std::vector<double>* finish_s = nullptr);

/// The ECMP hash the engines use for a flow src -> dst (deterministic in `seed`).
std::uint64_t flow_hash(std::uint64_t seed, int src_gpu, int dst_gpu);

/// Fills rates, MFU, time to train from an iteration time (shared by every engine).
void finish_result(SimResult& r, const Program& program, const SimCluster& cluster,
                   const CalibrationProfile& profile, const ProgramSimOptions& options);

}  // namespace tutti
