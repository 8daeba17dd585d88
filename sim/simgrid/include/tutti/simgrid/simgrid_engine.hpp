#pragma once
// The SimGrid reference engine (issue 6): the same Program as the native engine, run on the
// SimGrid 3.32 platform of the same cluster with SimGrid's flow-level network model (CM02,
// cross-traffic off, TCP-gamma 0, weight-S 0) and plain max-min sharing. SimGrid is linked
// privately: this header includes none of it.
//
// What is shared with the native engine, so that only the network differs:
//   * compute ops take op_time_s(op, gpu, profile) * compute_slowdown (SimGrid Execs on the GPU
//     host; a host has enough cores that overlapping ops do not slow each other, as natively);
//   * collectives are the native collective model's plans (plan_collective / plan_p2p): the
//     fixed NCCL latency first, then each phase's `repeat` lock-step steps, each step starting
//     all its flows together and waiting for all of them (SimGrid Comms between GPU hosts);
//   * link capacities and latencies are FlowNetwork's (bandwidth x tier efficiency, latency +
//     tier extra), routes are Topology::route with flow_hash(seed, src, dst);
//   * the scheduling rules of simulate_program (streams in order, dependencies, collective
//     rendezvous, send/recv rendezvous that does not block the issuing stream).
// What differs: SimGrid runs every rank and every flow explicitly (no symmetry, no macro flows),
// and its own max-min solver shares the links.
//
// CM02 weighs max-min shares by route latency (network_cm02.cpp: the LMM penalty of a flow is
// its latency). To get plain max-min like the native engine, the SimGrid links carry zero
// latency and each flow first waits its route latency on a SimGrid timer (using no bandwidth
// meanwhile, which is what CM02 does during latency), then transfers.
//
// Every SimGrid run happens in a forked child process (SimGrid 3.32 allows one engine per
// process and keeps global state).
#include <string>
#include <vector>

#include "tutti/sim/engine.hpp"

namespace tutti {

/// Above this many GPUs simulate_simgrid refuses (InputError), and above kSimgridMaxMinutes of
/// estimated run time.
constexpr int kSimgridMaxGpus = 1024;
constexpr double kSimgridMaxMinutes = 20;
/// Flows (SimGrid comms) this engine simulates per CPU-second with `gpus` GPUs, fitted to
/// bench/simgrid.md (2-core machine class: 134k/s at 64 GPUs, 37.7k/s at 256). The rate falls
/// with the number of comms in flight: SimGrid 3.32 removes each finished host-to-host comm from
/// a list of all of them (O(in-flight)). Used for the refusal estimate.
double simgrid_flows_per_cpu_second(int gpus);

/// Run statistics of one SimGrid run.
struct SimgridStats {
  double flows = 0;   ///< SimGrid comms simulated.
  double execs = 0;   ///< SimGrid execs simulated.
  double wall_s = 0;  ///< Wall time of the SimGrid run (platform build + run), in the child.
  double peak_rss_bytes = 0;  ///< Peak resident memory of the child process.
};

/// The SimGrid counterpart of simulate_collectives (engine.hpp): runs the plans concurrently
/// on an otherwise idle fabric, each as its fixed latency then its phases in order, every step
/// of every phase replayed flow by flow. Returns when the last one finishes (seconds); fills
/// `finish_s` (each plan's finish time) and `stats` when given.
double simulate_collectives_simgrid(const std::vector<CollectivePlan>& plans, const Topology& topo,
                                    const CalibrationProfile& profile, std::uint64_t seed = 1,
                                    std::vector<double>* finish_s = nullptr,
                                    SimgridStats* stats = nullptr);

/// Flows the SimGrid engine would simulate for this Program (every rank, every step).
double simgrid_flow_count(const Program& program, const SimCluster& cluster,
                          const CalibrationProfile& profile);

/// The SimGrid counterpart of simulate_program: the same SimResult (engine "simgrid"). The
/// breakdown is taken on the rank that finishes last (the native engine: the class that finishes
/// last), bottleneck links from the bytes every flow carried.
/// Throws InputError when the program has more than kSimgridMaxGpus ranks or the estimated run
/// (simgrid_flow_count / simgrid_flows_per_cpu_second) exceeds kSimgridMaxMinutes, with that
/// estimate;
/// InternalError if the Program deadlocks.
SimResult simulate_program_simgrid(const Program& program, const SimCluster& cluster,
                                   const CalibrationProfile& profile,
                                   const ProgramSimOptions& options = {},
                                   SimgridStats* stats = nullptr);

/// simulate() with engine "simgrid": expands the workload under `layout` and runs
/// simulate_program_simgrid on the cluster (same checks, calibration and options as the native
/// engine's simulate(); the trace option is not supported and ignored). Throws InputError as
/// simulate() does, and when the run is beyond the SimGrid engine's limits (see above).
SimResult simulate_simgrid(const Workload& workload, const Cluster& cluster, const Layout& layout,
                           const SimOptions& options);

/// What SimGrid itself sees in a platform file (for checking exports).
struct SimgridPlatformProbe {
  int host_count = 0;
  int link_count = 0;  ///< Declared links (SimGrid's own __loopback__ not counted).
  std::vector<std::string> route_links;  ///< Link names of the route src -> dst, in order.
  double route_latency_s = 0;            ///< Summed latency of that route, as SimGrid computes it.
};

/// Loads the SimGrid platform XML at `path` with simgrid::s4u::Engine (in a child process) and
/// reports its host count, link count, and the route from host `src_host` to host `dst_host`.
/// Throws InputError when SimGrid rejects the file or a host is missing.
SimgridPlatformProbe probe_simgrid_platform(const std::string& path, const std::string& src_host,
                                            const std::string& dst_host);

}  // namespace tutti
