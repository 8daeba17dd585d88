#pragma once
// Facility models: power, cooling and thermal throttling, cost, failures and checkpoints, storage.
// They turn one simulated training iteration (per-stream busy times of the busiest rank class)
// and the cluster's hardware into watts, joules, dollars, goodput and stall fractions.
// Every formula and its source is documented in docs/facility.md; units are SI throughout
// (W, J, s, B, B/s, USD).
//
// The models read a plain FacilityInputs struct (filled from Cluster / Workload / SimResult by
// facility_inputs() in the adapter, or by hand in tests) and user choices in FacilityOptions.
// evaluate_facility() chains them: power -> cooling fixed point (throttling) -> storage stall ->
// failures/checkpoints -> cost. Each stage is also callable alone for tests and the planner.
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tutti/core/progress.hpp"
#include "tutti/topologies/prices.hpp"

namespace tutti {

class Doc;

/// Valid input whose answer is "no", with the reason and what would help: the cooling /
/// throttling fixed point did not settle. Neither an input error (2) nor a bug (70): the CLI
/// prints it and exits 1.
class NoAnswerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ------------------------------------------------------------------------------------------
// Inputs

/// Per-GPU draw by activity. Compute-, memory- and communication-bound draws are fractions of
/// TDP. The cluster path (fill_cluster_inputs) takes them from topologies/catalog/gpu_power.json,
/// where each value cites its source (docs/facility.md "Power"); the defaults here are the same
/// values (tested) for hand-built inputs. Power of a state at clock factor f (1 = nominal):
/// idle_W + (demand - idle_W) * f^3 (DVFS: P_dyn ~ f V^2 with V ~ f), then capped.
struct GpuPowerModel {
  double tdp_W = 700;           ///< Board power limit (H100 SXM: 700 W).
  double idle_W = 75;           ///< Static/idle draw; also the floor of the DVFS model.
  double power_cap_W = 0;       ///< Configured cap (nvidia-smi -pl); 0 = TDP.
  double compute_frac = 1.0;    ///< Compute-bound kernels (GEMM) run at the power limit.
  double memory_frac = 0.65;    ///< Memory-bound kernels (est.).
  double comm_frac = 0.40;      ///< Communication only: copy engines, NVLink, NIC DMA (est.).
  double overlap_extra_W = 30;  ///< Added while communication overlaps compute (est.).
  double cap_W() const { return power_cap_W > 0 ? power_cap_W : tdp_W; }
};

/// The per-activity coefficients of topologies/catalog/gpu_power.json, each with its citation.
struct GpuPowerCoefficients {
  double compute_frac = 0, memory_frac = 0, comm_frac = 0;  ///< Fractions of TDP.
  double overlap_extra_W = 0;  ///< Added while communication overlaps compute.
  double idle_frac = 0;        ///< Idle draw as a fraction of TDP for GPUs without idle_power.
  /// Citation per coefficient, keyed as in the file ("compute_frac", ..., "overlap_extra").
  std::vector<std::pair<std::string, std::string>> sources;
  std::vector<std::string> estimates;  ///< Coefficients no public measurement fixes.
};
/// Strict parser of the gpu_power.json format: every coefficient in range and cited (a source
/// for each, nothing else); throws InputError naming the key otherwise.
GpuPowerCoefficients parse_gpu_power(const Doc& doc);
const GpuPowerCoefficients& builtin_gpu_power();
/// The GPU's power model: `tdp_W`, its catalog idle draw (0 = idle_frac x TDP) and the
/// coefficients.
GpuPowerModel gpu_power_model(const GpuPowerCoefficients& k, double tdp_W, double idle_W);

/// One iteration of the busiest rank class, seconds. Streams may overlap:
/// gemm_busy_s + memory_busy_s (the compute stream) <= iteration_s.
struct IterationTimes {
  double iteration_s = 0;
  double gemm_busy_s = 0;    ///< Compute-bound kernels.
  double memory_busy_s = 0;  ///< Memory-bound kernels (norms, activations, optimizer).
  double comm_busy_s = 0;    ///< Communication stream busy (overlapped or exposed).
};

/// Re-times an iteration with compute ops slowed by `compute_slowdown` (>= 1): either the
/// engine re-simulated with SimOptions::compute_slowdown, or rescale_times() (the default).
using Retimer = std::function<IterationTimes(double compute_slowdown)>;

/// Linear rescale: gemm and memory busy times * s, iteration + (gemm + memory) * (s - 1),
/// communication unchanged (conservative: assumes the compute stream is on the critical path).
IterationTimes rescale_times(const IterationTimes& t, double compute_slowdown);

/// Everything the facility models need, in SI. Counts are of the whole cluster.
struct FacilityInputs {
  std::string gpu_name;
  int gpus = 0, nodes = 0, gpus_per_node = 8;
  /// GPUs the job runs on (a job may use part of the cluster: placement fills NVLink domains in
  /// rank order); the other gpus - job_gpus draw idle power all along. 0 = every GPU.
  int job_gpus = 0;
  int nics = 0;      ///< Scale-out NICs.
  int switches = 0;  ///< Fabric switches.
  /// Switches whose failure disconnects ranks and so stops a synchronous job: the leaves (or
  /// routers) of a single-plane fabric, where each NIC has one path; 0 on a dual-plane fabric (each
  /// NIC on two leaves) and without a fabric. Spines and cores are multi-path (not counted).
  int blocking_switches = 0;
  int network_links = 0;             ///< Scale-out cables (NIC-leaf, leaf-spine, ...).
  int racks = 0;                     ///< Compute racks as laid out by the topology; 0 = derive.
  int nodes_per_rack = 0;            ///< 0 = floor(rack_power_W / node_max_power_W), at least 1.
  int reference_nodes_per_rack = 0;  ///< The node's reference-design density (0 = none); for notes.

  GpuPowerModel gpu;
  double node_overhead_W = 0;   ///< CPUs, DRAM, fans, NICs per node at load.
  double node_max_power_W = 0;  ///< Nameplate per node (power provisioning).
  double network_power_W = 0;   ///< Switches + optics + NICs outside nodes (from the BOM).
  double storage_power_W = 0;

  // Facility.
  std::string facility_name;
  bool liquid = false;
  double pue = 1.3;
  double rack_power_W = 40e3;    ///< Power a rack may draw (placement).
  double rack_cooling_W = 40e3;  ///< Heat the room removes per rack.
  double total_cooling_W = 0;    ///< Heat the room removes in total; 0 = unlimited.
  double electricity_usd_per_J = 0;
  double buildout_usd_per_W = 0;  ///< Facility capex per W of provisioned IT power.

  // The simulated iteration and the run.
  IterationTimes times;
  double iterations = 0;  ///< Iterations to train.
  double tokens_per_iteration = 0, samples_per_iteration = 0;

  // Prices.
  double gpu_price_usd = 0;
  double node_price_usd = 0;     ///< Whole server with its GPUs; 0 = gpus_per_node * gpu price.
  double network_capex_usd = 0;  ///< Switches, NICs, optics, cables (BOM).
  double storage_capex_usd = 0;
  double cloud_usd_per_gpu_hour = 0;  ///< 0 = unknown (no cloud comparison).
  double rack_usd_per_s = 0;  ///< Rack space / colocation per compute rack (0 = not charged).
  /// Where each price came from (catalog, estimate, user, none): servers (node or GPU price),
  /// network and storage (their BOM lines), build-out, electricity, rental, rack space.
  PriceOrigin servers_origin = PriceOrigin::Catalog, network_origin = PriceOrigin::Catalog,
              storage_origin = PriceOrigin::Catalog, buildout_origin = PriceOrigin::Catalog,
              electricity_origin = PriceOrigin::Catalog, cloud_origin = PriceOrigin::None,
              rack_origin = PriceOrigin::None;
  std::string prices_file;  ///< The user's prices file applied ("" = catalog only).

  // Checkpoints and data.
  double checkpoint_bytes = 0;  ///< Model + optimizer state of one checkpoint.
  double storage_read_Bps = 0, storage_write_Bps = 0;  ///< Aggregate; 0 = unknown.
  double input_bytes_per_token = 4;                    ///< Tokenised text, uint32 ids (est.).
  double input_bytes_per_sample = 0;  ///< Used when > 0 instead of per-token bytes.
  double node_scaleout_Bps =
      0;                    ///< One node's scale-out NICs together (peer reload, in-memory ckpt).
  double gpu_host_Bps = 0;  ///< One GPU's PCIe path to host memory (async snapshot).
};

/// User choices with their defaults (docs/facility.md). All validated by check_options().
struct FacilityOptions {
  double hardware_life_years = 5;           ///< Amortisation of servers, network, storage.
  double facility_life_years = 15;          ///< Amortisation of the build-out (est.).
  double maintenance_frac_per_year = 0.05;  ///< Of hardware capex per year (est.).
  double utilization = 1.0;                 ///< Share of hours the owned cluster does paid work.
  double min_clock_factor = 0.2;  ///< Lowest DVFS clock / nominal before cooling "does not fit".
  /// Most re-timings the cooling fixed point may take before it answers "did not settle"
  /// (NoAnswerError: exit 1 with the bracket it reached). The bracket halves every two steps.
  int max_retimings = 60;
  /// Called with (re-timings so far, re-timings expected in all) while the cooling fixed point has
  /// run for more than a second (the CLI draws a progress bar on stderr); empty = silent.
  ProgressFn progress;
  std::string reliability_profile = "llama3";
  /// Site-measured failure rates instead of the profile's: MTBF of one node and/or of one GPU
  /// (0 = not given). When either is given the profile's rates are not used; both add up.
  double node_mtbf_s = 0, gpu_mtbf_s = 0;
  /// Recovery = detection + restart + reload. detect_s < 0: counted in the restart time.
  double detect_s = -1;
  /// Where the state is reloaded from after a failure: "" = inside the profile's restart time,
  /// "storage" (checkpoint bytes / storage read bandwidth) or "peer" (each node's share from a
  /// peer's memory over its scale-out NICs, as in-memory checkpointing does).
  std::string reload;
  /// How a checkpoint is taken: "sync" (the write to storage is on the critical path, default),
  /// "async" (only the snapshot to host memory over PCIe stops training; the write runs in the
  /// background and bounds the interval from below), "memory" (in-memory: each node sends its
  /// share to a peer over the scale-out NICs; no storage write on the critical path).
  std::string checkpoint_mode = "sync";
  double restart_s = -1;             ///< < 0: the profile's restart time.
  double checkpoint_interval_s = 0;  ///< 0: Young's optimum sqrt(2 C M).
  int monte_carlo_trials = 1000;     ///< 0 disables the Monte-Carlo estimate.
  double power_cap_W = 0;            ///< > 0: overrides the GPU power cap (nvidia-smi -pl).
  /// Grid carbon intensity: a region of topologies/catalog/grid_carbon.json ("grid=us"), or
  /// carbon_kg_per_kWh >= 0 given directly ("carbon=0.2", kg CO2 per kWh), which wins.
  std::string grid_region = "world";
  double carbon_kg_per_kWh = -1;
  std::uint64_t seed = 1;
};
/// Throws InputError naming the option when a value is out of range.
void check_options(const FacilityOptions& o);
/// Parses the `--facility` flag, comma-separated KEY=VALUE on top of `base`:
///   life=5 (hardware years), facility_life=15, maintenance=0.05 (of capex per year),
///   utilization=0.8, power_cap=500W, min_clock=0.2, profile=llama3, restart=10min,
///   interval=30min (checkpoint interval; "young" for the optimum), trials=1000,
///   grid=world (carbon region), carbon=0.2 (kg CO2 per kWh; overrides the region),
///   retimings=60 (most re-timings of the cooling fixed point), node_mtbf=30d, gpu_mtbf=50000h
///   (site failure rates), detect=2min, reload=storage|peer, checkpoint=sync|async|memory.
/// Throws InputError (file "--facility") naming the bad item and what was expected.
FacilityOptions parse_facility_flag(std::string_view text, FacilityOptions base = {});

// ------------------------------------------------------------------------------------------
// Power

/// One constant-power piece of the iteration timeline (lock-step across the cluster).
struct PowerSegment {
  std::string state;  ///< "compute+comm", "compute", "memory+comm", "memory", "comm", "idle"
  double start_s = 0, duration_s = 0;
  double gpu_W = 0;  ///< One GPU.
  double it_W = 0;   ///< Whole cluster IT power (GPUs + node overhead + network + storage).
};

struct PowerResult {
  double clock_factor = 1;             ///< Clock the timeline ran at (1 = nominal).
  std::vector<PowerSegment> timeline;  ///< Covers [0, iteration_s) without gaps.
  double iteration_s = 0;
  double gpu_avg_W = 0, gpu_peak_W = 0, gpu_min_W = 0;
  double node_avg_W = 0;  ///< One node (its GPUs + overhead), time-averaged.
  double avg_it_W = 0, peak_it_W = 0, min_it_W = 0;
  double nameplate_it_W = 0;  ///< Nodes at nameplate + network + storage (provisioning).
  double network_W = 0, storage_W = 0;
  double facility_W = 0;       ///< avg_it_W * PUE.
  double peak_facility_W = 0;  ///< peak_it_W * PUE.
  double swing_W = 0;          ///< peak_it_W - min_it_W: synchronous step swing of the IT load.
  double swing_period_s = 0;   ///< One training step (lock-step phases repeat every iteration).
  double energy_per_iteration_J = 0;           ///< IT energy: integral of the timeline.
  double energy_per_iteration_facility_J = 0;  ///< * PUE.
};

/// Per-GPU demand of each state at `clock_factor`, capped (exposed for tests).
double gpu_state_power_W(const GpuPowerModel& m, double demand_W, double clock_factor,
                         bool scales_with_clock);
/// Highest clock factor (<= 1) at which compute-bound kernels fit under the power cap.
double power_cap_clock_factor(const GpuPowerModel& m);
/// Builds the piecewise-constant timeline of one iteration and its averages.
PowerResult compute_power(const FacilityInputs& in, const IterationTimes& t, double clock_factor);
/// Integral of the IT power timeline, joules.
double timeline_energy_J(const std::vector<PowerSegment>& timeline);

// ------------------------------------------------------------------------------------------
// Cooling and throttling

struct CoolingResult {
  std::string facility_name;  ///< The facility preset's name.
  bool liquid = false;
  int nodes_per_rack = 0, racks = 0;
  double heat_per_rack_W = 0;  ///< At the throttled operating point.
  double heat_per_rack_unthrottled_W = 0;
  double rack_cooling_W = 0, total_heat_W = 0, total_cooling_W = 0;  ///< total_cooling 0 = none.
  double rack_power_W =
      0;  ///< Power a rack may draw (the preset's or the file's): sets the density.
  double throttle_factor = 1;   ///< GPU clock / nominal at the operating point (1 = none).
  double power_cap_factor = 1;  ///< Part of the throttle that comes from the power cap.
  double compute_slowdown = 1;  ///< 1 / throttle_factor: compute ops take this much longer.
  bool fits = true;             ///< false: even at min_clock_factor the heat exceeds the cooling.
  int fixed_point_iterations = 0;
  IterationTimes times;  ///< Iteration at the operating point.
  double time_to_train_unthrottled_s = 0, time_to_train_s = 0;
};

/// Nodes per rack: in.nodes_per_rack when set, else floor(rack_power_W / node_max_power_W) >= 1.
int nodes_per_rack(const FacilityInputs& in);
/// Finds the clock factor f at which heat per rack <= rack cooling and total heat <= total
/// cooling, as a fixed point between power and speed: re-time at slowdown 1/f, recompute power,
/// solve for the largest f that fits, repeat until the slowdown moves less than 1e-6 relative.
/// `retime` defaults to rescale_times() of in.times; it is not called when nothing throttles
/// (in.times is the full-clock iteration). Also applies the power cap.
CoolingResult solve_cooling(const FacilityInputs& in, const FacilityOptions& o,
                            const Retimer& retime = {});

// ------------------------------------------------------------------------------------------
// Storage and data loading

struct StorageResult {
  double required_read_Bps = 0;   ///< Input bytes per iteration / iteration time.
  double available_read_Bps = 0;  ///< 0 = unknown (then no stall is assumed, and said).
  double stall_fraction = 0;      ///< Share of the stretched iteration spent waiting for data.
  double iteration_s = 0;         ///< max(iteration, input bytes / available read).
  double checkpoint_burst_Bps = 0, checkpoint_burst_s = 0, checkpoint_bytes_per_node = 0;
};
StorageResult compute_storage(const FacilityInputs& in, const IterationTimes& t);

// ------------------------------------------------------------------------------------------
// Failures and checkpoints

/// One failure class of a profile, with its rate per unit (a GPU, a node, a NIC, a link...).
struct FailureClass {
  std::string id;  ///< "gpu", "hbm", "software", "network", "host", "nic", ...
  /// Unit it scales with: "gpu", "node", "nic", "link" (scale-out cable), "switch" (counted in a
  /// cluster as FacilityInputs::blocking_switches: a switch failure stops every rank behind it).
  std::string per;
  double failures = 0;         ///< Observed count in the source.
  double rate_per_unit_s = 0;  ///< failures / (units observed * duration).
  std::string causes;          ///< The source's causes lumped into this class.
};
struct ReliabilityProfile {
  std::string id, name, source;
  double observed_s = 0;                                          ///< Observation window.
  double gpus = 0, nodes = 0, nics = 0, links = 0, switches = 0;  ///< Units observed.
  double restart_s = 0;
  std::vector<FailureClass> classes;
};
/// Parses reliability profiles (topologies/catalog/reliability.json format, strict).
std::vector<ReliabilityProfile> parse_reliability(const Doc& doc);
/// The built-in profiles (embedded catalog). Throws InputError listing ids on a miss.
const ReliabilityProfile& reliability_profile(const std::string& id);
const std::vector<ReliabilityProfile>& builtin_reliability_profiles();

/// Young's interval sqrt(2 C M) [Young 1974]. C = checkpoint write time, M = MTBF.
double young_interval_s(double checkpoint_s, double mtbf_s);
/// Daly's first-order interval sqrt(2 C M) - C (C < M/2), else M [Daly 2006].
double daly_interval_s(double checkpoint_s, double mtbf_s);
/// Expected wall time to finish `work_s` of failure-free work with checkpoints every
/// `interval_s` of work costing `checkpoint_s`, exponential failures of mean `mtbf_s`, each
/// costing `restart_s` plus on average half a segment (first order):
///   W = work (1 + C/tau) / (1 - (R + (tau + C)/2) / M); +inf when the denominator <= 0.
double expected_wall_time_s(double work_s, double interval_s, double checkpoint_s, double restart_s,
                            double mtbf_s);

struct MonteCarloResult {
  int trials = 0;
  std::uint64_t seed = 0;
  double p50_s = 0, p90_s = 0, mean_s = 0;
  double mean_failures = 0;
};
/// Seeded simulation of the same process (exponential failures, lost work since the last
/// completed checkpoint, restart time). Deterministic for a seed on every platform.
MonteCarloResult monte_carlo_time_to_train(double work_s, double interval_s, double checkpoint_s,
                                           double restart_s, double mtbf_s, int trials,
                                           std::uint64_t seed);

struct FailureRate {
  std::string id, per, causes;
  double units = 0;  ///< Units of this kind in the cluster.
  double failures_per_day = 0;
  /// Share of the expected wall time lost to this class's failures (its share of the restarts
  /// and rework, in proportion to its rate); with ReliabilityResult::checkpoint_loss these sum to
  /// 1 - goodput.
  double goodput_loss = 0;
};
struct ReliabilityResult {
  std::string profile;
  std::vector<FailureRate> rates;
  double failures_per_day = 0;
  double mtbf_s = 0;
  double checkpoint_bytes = 0, checkpoint_write_s = 0;
  double checkpoint_interval_s = 0;  ///< Used (Young's unless set).
  double young_interval_s = 0, daly_interval_s = 0;
  double restart_s = 0;  ///< Recovery per failure: detection + restart + reload.
  double detect_s = 0,
         reload_s = 0;          ///< Parts of restart_s when given (0 = inside the restart time).
  std::string rates_source;     ///< "profile <id>" or "user MTBF".
  std::string checkpoint_mode;  ///< sync | async | memory.
  double checkpoint_critical_s =
      0;              ///< Checkpoint time on the critical path (what training waits for).
  double work_s = 0;  ///< Failure-free time to train.
  double expected_failures = 0;
  double goodput = 0;  ///< work / expected wall time.
  double effective_time_to_train_s = 0;
  double checkpoint_overhead_s = 0, rework_s = 0, restart_total_s = 0;  ///< Where time goes.
  double checkpoint_loss = 0;  ///< Share of the expected wall time spent on checkpoints.
  MonteCarloResult monte_carlo;
};
/// Scales the profile's per-unit rates to the cluster's counts, then sizes checkpoints.
ReliabilityResult compute_reliability(const FacilityInputs& in, const FacilityOptions& o,
                                      double work_s);

// ------------------------------------------------------------------------------------------
// Cost

struct CostResult {
  double servers_usd = 0, network_usd = 0, storage_usd = 0, facility_usd = 0;
  double capex_usd = 0;
  double amortized_usd_per_year = 0;    ///< Hardware / life + facility / facility life.
  double electricity_usd_per_year = 0;  ///< At the training draw for `utilization` of the year.
  double maintenance_usd_per_year = 0;
  double opex_usd_per_year = 0;  ///< Electricity + maintenance.
  double usd_per_gpu_hour = 0;   ///< Owned, at the options' utilisation.
  /// Owned cost of the run: (amortised capex + maintenance + rack space) per year / utilisation
  /// for the run's wall time, plus its electricity. The same basis as usd_per_gpu_hour.
  double cost_per_run_usd = 0;
  double energy_cost_per_run_usd = 0;
  double usd_per_million_tokens = 0;  ///< 0 when the workload has no tokens.
  double cloud_usd_per_gpu_hour = 0;
  double cloud_cost_per_run_usd = 0;   ///< 0 when the catalog has no rental price.
  double breakeven_utilization = 0;    ///< Owned = rented at this utilisation (> 1: never).
  double rack_space_usd_per_year = 0;  ///< Racks x rack-space price (part of opex).
  /// Origins: capex is the weakest of its four parts; the run's owned cost adds electricity.
  PriceOrigin servers_origin = PriceOrigin::Catalog, network_origin = PriceOrigin::Catalog,
              storage_origin = PriceOrigin::Catalog, facility_origin = PriceOrigin::Catalog,
              capex_origin = PriceOrigin::Catalog, electricity_origin = PriceOrigin::Catalog,
              owned_origin = PriceOrigin::Catalog, cloud_origin = PriceOrigin::None,
              rack_origin = PriceOrigin::None;
};
/// `run_wall_s`: effective time to train; `run_energy_facility_J`: facility energy of the run.
CostResult compute_cost(const FacilityInputs& in, const FacilityOptions& o, const PowerResult& p,
                        double run_wall_s, double run_energy_facility_J);

// ------------------------------------------------------------------------------------------
// Energy both ways and CO2 (sim/facility/src/facility_energy.cpp)

/// One grid region's yearly average carbon intensity (topologies/catalog/grid_carbon.json).
struct GridRegion {
  std::string id, name, source;
  double kg_per_J = 0;  ///< kg CO2 per joule of electricity (0.48 kg/kWh = 1.33e-7 kg/J).
};
/// Strict parser of the grid_carbon.json format; `default_id` receives its "default".
std::vector<GridRegion> parse_grid_carbon(const Doc& doc, std::string* default_id = nullptr);
const std::vector<GridRegion>& builtin_grid_regions();
/// Throws InputError (file "--facility", key "grid") listing the regions on a miss.
const GridRegion& grid_region(const std::string& id);

/// A run's energy counted both ways, side by side:
///   physical   the integral of the IT power timeline (all GPUs, idle ones included, node
///              overhead, network, storage; stalls, checkpoints, restarts and rework) x PUE;
///   model card GPU-hours of the job x the GPU power limit (TDP or the cap) x PUE, the
///              convention model cards report (it ignores everything but the GPUs and assumes
///              they draw their limit all along).
struct EnergyAccounting {
  double physical_it_J = 0, physical_facility_J = 0;
  double model_card_J = 0;
  double gpu_hours = 0;  ///< Job GPUs x the effective wall time.
  double tokens = 0;
  double physical_J_per_token = 0, model_card_J_per_token = 0;  ///< Facility energy; 0 = no tokens.
  std::string grid, grid_name, grid_source;  ///< Region id ("user" when given directly).
  double kg_co2_per_J = 0;
  double physical_co2_kg = 0, model_card_co2_kg = 0;
};
/// `run_wall_s`: the effective time to train; `energy_it_J`: the run's IT energy.
EnergyAccounting account_energy(const FacilityInputs& in, const FacilityOptions& o,
                                double run_wall_s, double energy_it_J);

// ------------------------------------------------------------------------------------------
// Everything together

struct FacilityResult {
  PowerResult power;  ///< At the throttled operating point.
  CoolingResult cooling;
  StorageResult storage;
  ReliabilityResult reliability;
  CostResult cost;
  double energy_per_run_J = 0;           ///< Facility energy (IT * PUE) incl. failure overhead.
  double energy_per_run_it_J = 0;        ///< IT energy incl. failure overhead.
  double time_to_train_s = 0;            ///< After throttling and data stalls, before failures.
  double effective_time_to_train_s = 0;  ///< Including checkpoints, rework and restarts.
  EnergyAccounting energy;               ///< Physical vs model-card energy, per token, CO2.
  std::vector<std::string> notes;        ///< Assumptions that matter for this case.
  FacilityOptions options;               ///< The options used (reported as "assumptions").
};

// ------------------------------------------------------------------------------------------
// Adapters (sim/facility/src/facility_adapter.cpp)

struct Workload;
struct Cluster;
struct SimResult;

/// One checkpoint: parameters x (weight bytes + optimizer-state bytes per parameter), the same
/// accounting as the memory model (bf16 + fp32 master + Adam m, v = 14 B/param).
double checkpoint_bytes(const Workload& w);
/// Bytes the input pipeline reads per sample: token models 4 B per token (uint32 ids, est.),
/// images their decoded uint8 pixels (est.), DLRM 4 B per dense feature and per table id.
double input_bytes_per_sample(const Workload& w);
/// Sets checkpoint_bytes, tokens/samples per iteration and input bytes per sample.
void fill_workload_inputs(FacilityInputs& in, const Workload& w);
/// Everything the facility models take from the cluster, the same for `tutti simulate` and the
/// planner: name and counts (GPUs, nodes, NICs, switches, racks, scale-out links), GPU TDP and idle
/// draw (10% of TDP when the catalog has none), node and BOM power, facility preset, GPU/node
/// prices, BOM capex, cloud price and storage bandwidth x units. Leaves the workload alone.
void fill_cluster_inputs(FacilityInputs& in, const Cluster& c);
/// The nodes each switch failure cuts off: one entry per switch that is the only attachment of
/// some NIC (every access link of that NIC enters it), listing those NICs' nodes, sorted; in
/// switch device order. Leaves of a single-plane fabric (or routers) appear; spines, cores and the
/// leaves of a dual-plane fabric do not. Its size is FacilityInputs::blocking_switches.
std::vector<std::vector<int>> switch_failure_domains(const Cluster& c);
/// Everything from the cluster (GPU/node power and prices, BOM network and storage capex and
/// power, storage bandwidth x units, facility preset, racks, component counts), the workload
/// (fill_workload_inputs) and one simulated iteration (busy times, iterations to train).
FacilityInputs facility_inputs(const Workload& w, const Cluster& c, const SimResult& r);
/// The per-stream busy times and iteration time of a simulated iteration (for a Retimer).
IterationTimes iteration_times(const SimResult& r);

struct Layout;
struct SimOptions;
/// The facility models for a run that `simulate(w, c, l, so)` returned as `r`: inputs from
/// facility_inputs(); when the GPUs throttle, the iteration is re-simulated with
/// SimOptions::compute_slowdown (x the one already in `so`, no trace) at each fixed-point step.
/// With so.engine == "simgrid" the iteration is rescaled instead (rescale_times): SimGrid is too
/// slow to repeat inside the fixed point. `o.seed` is used as given (the CLI passes --seed). Throws
/// what simulate() and evaluate_facility() throw.
FacilityResult facility_for_run(const Workload& w, const Cluster& c, const Layout& l,
                                const SimOptions& so, const SimResult& r, const FacilityOptions& o);

/// Runs all models. Throws InputError for out-of-range options or inputs (e.g. no GPUs).
FacilityResult evaluate_facility(const FacilityInputs& in, const FacilityOptions& o,
                                 const Retimer& retime = {});

/// JSON keys: power{avg_it_W, peak_it_W, facility_W, swing_W, swing_period_s, ...},
/// energy_per_run_J, cooling{throttle_factor, heat_per_rack_W, ...}, cost{capex_usd, ...},
/// reliability{mtbf_s, checkpoint_interval_s, checkpoint_write_s, goodput, ...},
/// storage{required_read_Bps, available_read_Bps, stall_fraction, ...}.
/// `with_timeline` adds power.timeline (segments).
nlohmann::json facility_to_json(const FacilityResult& r, bool with_timeline = true);
/// Human-readable lines for the `tutti simulate` table (no trailing newlines).
std::vector<std::string> facility_table_lines(const FacilityResult& r);
/// "checkpoints 0.31%, gpu 0.29%, ...": the share of the expected wall time lost to checkpoints
/// and to each failure class, largest first (the `goodput loss by cause` line of the table).
std::string goodput_loss_text(const ReliabilityResult& f);

}  // namespace tutti
