#pragma once
#include "tutti/core/enum.hpp"
// The capacity planner behind `tutti plan`: "we must pre-train this model on this many tokens
// within this many days, with this budget and this machine room; what should we buy?"
//
// How a search runs:
//   1. parse_plan_request() reads a request (strict JSON, schemas/plan_request.schema.json).
//   2. Planner enumerates the search space in one deterministic order: hardware choices
//      (node type x GPU count x fabric x oversubscription x InfiniBand/RoCE x storage tier),
//      then for each choice the parallel layouts that are structurally valid (degrees divide
//      the GPU count, heads, layers, batch), then the acquisition (buy, rent) innermost.
//      Every configuration has a global index in [0, Planner::size()).
//   3. Planner::screen(begin, end) evaluates one slice of that index space with the analytic
//      engine: memory per GPU first (layouts that do not fit are dropped before any timing),
//      then iteration time, time to train, power, energy and cost, then the constraints. It keeps
//      only what can be merged exactly: counts, the Pareto frontier of the feasible
//      configurations, the best few by the objective, and the nearest miss. The slice function
//      is MPI-free; cli/plan.cpp deals the hardware choices' slices round-robin to the MPI ranks
//      (cli/plan_mpi.cpp gathers them) and merges them on rank 0; merge() is exact, so any
//      number of ranks gives the same answer as one process, byte for byte.
//   4. Planner::finish() re-simulates the finalists with the flow-level engine (contention on
//      the routed fabric), picks the recommended configuration and builds the report.
//
// Units: SI inside (seconds, bytes, watts, joules, US dollars).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tutti/core/progress.hpp"
#include "tutti/models/layout.hpp"
#include "tutti/sim/result.hpp"
#include "tutti/topologies/prices.hpp"

namespace tutti {

struct PerfCache;  // Engine figures shared between slices (sim/plan/src/plan_eval.cpp).

// clang-format off
#define TUTTI_NETWORK_VALUES(X) X(InfiniBand, "infiniband") X(RoCE, "roce")
// clang-format on
TUTTI_ENUM(Network, std::uint8_t, TUTTI_NETWORK_VALUES);
// clang-format off
#define TUTTI_ACQUISITION_VALUES(X) X(Buy, "buy") X(Rent, "rent")
// clang-format on
TUTTI_ENUM(Acquisition, std::uint8_t, TUTTI_ACQUISITION_VALUES);
/// What "recommended" minimises among the configurations that meet every constraint.
// clang-format off
#define TUTTI_OBJECTIVE_VALUES(X) X(Cost, "cost") X(Time, "time") X(Energy, "energy")
// clang-format on
TUTTI_ENUM(Objective, std::uint8_t, TUTTI_OBJECTIVE_VALUES);

/// What a bought configuration's cost is, for ranking and the total-cost budget:
///   Run       the owned cost of the run: capex amortised over the hardware life at the stated
///             utilisation + the run's opex (the same figure `tutti simulate` reports) [default];
///   Purchase  the whole purchase + the run's opex (the run pays for the cluster outright).
/// A rented configuration costs its rental either way. The capex budget always checks the purchase.
// clang-format off
#define TUTTI_COST_BASIS_VALUES(X) X(Run, "run") X(Purchase, "purchase")
// clang-format on
TUTTI_ENUM(CostBasis, std::uint8_t, TUTTI_COST_BASIS_VALUES);

/// The parallel layouts to try for each hardware choice. Empty lists take the defaults
/// documented in schemas/plan_request.schema.json.
struct LayoutSpace {
  std::vector<int> tp, pp, cp, ep, vp, micro_batch, zero;
  /// Hybrid sharding group sizes (0 = shard over all data-parallel ranks) and, for zero=3,
  /// reshard_after_forward values (0, 1).
  std::vector<int> shard_group, reshard;
  std::vector<Recompute> recompute;
};

/// An existing machine room the cluster must fit in (0 = no limit).
struct RoomLimits {
  int racks = 0;              ///< Racks available.
  double rack_power_W = 0;    ///< Power a rack may draw.
  double rack_cooling_W = 0;  ///< Heat the room can remove per rack.
};

/// A planning request, as read from a request file and/or command-line flags.
struct PlanRequest {
  std::string file = "<request>";  ///< Name used in messages.
  // Workload.
  std::string workload;       ///< Workload file as given (models/*.json).
  std::string workload_path;  ///< The same, resolved to an existing file when possible.
  double tokens = 0;          ///< Tokens to train; 0 = the workload's own figure.
  // Constraints (0 = none).
  double deadline_s = 0;
  double capex_budget_usd = 0;       ///< Purchase price of everything bought.
  double total_cost_budget_usd = 0;  ///< Capex (or rental) plus the run's opex.
  double power_cap_W = 0;            ///< Facility power (IT power x PUE) at peak.
  RoomLimits room;
  int gpus_min = 1, gpus_max = 65536;
  // Options to search.
  std::vector<int> gpu_counts;       ///< Explicit GPU counts; empty = {1,1.25,1.5} x 2^k nodes.
  std::vector<std::string> gpus;     ///< GPU or node catalog ids (a GPU id picks its node).
  std::vector<std::string> fabrics;  ///< Scale-out fabric generators.
  std::vector<double> oversubscription;
  std::vector<Network> networks;
  std::vector<std::string> storage;  ///< Storage catalog ids.
  std::vector<Acquisition> acquisition;
  std::string facility;  ///< Facility preset id ("" = the catalog default).
  LayoutSpace layouts;
  // How to search.
  Objective objective = Objective::Cost;
  CostBasis cost_basis = CostBasis::Run;  ///< "cost_basis" (default "run").
  double hardware_life_years = 5;         ///< "hardware_life" (default 5 y): amortisation.
  double utilization = 1.0;               ///< "utilization" (default 1): share of the year in use.
  /// The user's prices: the request's "prices" section, or `--prices FILE` (which replaces it).
  std::optional<Prices> prices;
  int finalists = 4;  ///< Configurations re-simulated with the flow-level engine.
  bool prune = true;  ///< Skip hardware choices that provably cannot meet the constraints.
};

/// Reads a request file, applying `KEY.PATH=VALUE` overrides first (strict: unknown keys, wrong
/// types, bad units are InputError naming the key path). A relative workload path resolves
/// against the request file's folder, then the current directory, then the source tree.
PlanRequest load_plan_request(const std::string& path,
                              const std::vector<std::string>& overrides = {});
/// Same from parsed JSON (`name` is used in messages; relative paths resolve against `base_dir`).
PlanRequest parse_plan_request(const nlohmann::json& j, const std::string& name,
                               const std::string& base_dir = ".");
/// The built-in example request (Llama 3 70B on 2T tokens in 30 days, H100 vs H200 vs B200,
/// rail-optimized InfiniBand vs RoCE, a capex budget) as JSON text.
const std::string& example_plan_request();
/// The request as JSON (units as strings), for the output's "request" echo.
void to_json(nlohmann::json& j, const PlanRequest& r);

/// One hardware choice: a cluster the planner can build with make_cluster().
struct HardwareChoice {
  std::string node;  ///< Node catalog id.
  std::string gpu;   ///< GPU catalog id of that node.
  int nodes = 0;
  int gpus = 0;
  std::string fabric;
  double oversubscription = 1;
  Network network = Network::InfiniBand;
  std::string storage;
};

/// Constraint violations, as bits of Evaluation::violations.
enum Violation : std::uint32_t {
  kMemory = 1u << 0,  ///< Does not fit in GPU memory.
  kDeadline = 1u << 1,
  kCapex = 1u << 2,
  kTotalCost = 1u << 3,
  kPowerCap = 1u << 4,
  kRoomRacks = 1u << 5,    ///< Needs more racks than the room has.
  kRoomCooling = 1u << 6,  ///< One node draws more than a rack may draw or the room may cool.
  kNoPrice = 1u << 7,      ///< Cannot be costed: no rental price (rent), no purchase price (buy).
};
constexpr int kNumViolations = 8;
const char* violation_name(int bit);  ///< "memory", "deadline", ...

/// What the bottleneck of an iteration is (the largest part of its breakdown).
const char* bottleneck_name(const Breakdown& b);

/// One evaluated configuration. Trivially copyable: ranks exchange these as raw bytes.
struct Evaluation {
  std::uint64_t index = 0;     ///< Global configuration index (the deterministic order).
  std::uint32_t hardware = 0;  ///< Index into Planner::hardware().
  Acquisition acquisition = Acquisition::Buy;
  bool native = false;             ///< Timed by the flow-level engine (else analytic).
  std::uint16_t gpu_group = 0;     ///< Index of the hardware's GPU id in PlanRequest::gpus.
  std::uint16_t fabric_group = 0;  ///< Index of its (fabric, oversubscription, network) choice.
  Layout layout;
  std::uint32_t violations = 0;  ///< Bit set of Violation; 0 = feasible.
  double violation = 0;          ///< Worst relative excess over a limit (0 when feasible).
  double memory_per_gpu_bytes = 0;
  double iteration_time_s = 0;
  double time_to_train_s = 0;
  double mfu = 0;
  Breakdown breakdown;
  double capex_usd = 0;       ///< Purchase price (0 when rented).
  double run_opex_usd = 0;    ///< Electricity and upkeep over the run (buy), rental (rent).
  double total_cost_usd = 0;  ///< The cost ranked on: by the request's cost basis (see CostBasis).
  double owned_run_usd = 0;   ///< Owned cost of the run (amortised; buy), 0 when rented.
  double rental_usd = 0;      ///< Rental for the run at the GPU's rental price (0 = no price).
  double breakeven_utilization = 0;  ///< Owned = rented at this utilisation (0 = no rental price).
  double energy_J = 0;               ///< Facility energy of the run (IT energy x PUE).
  double energy_J_per_token =
      0;  ///< energy_J / training tokens, J per token; 0 = not a token model.
  double avg_it_power_W = 0;
  double peak_facility_power_W = 0;
  bool feasible() const { return violations == 0; }
};

/// What a slice of the search keeps; merges exactly (see merge()).
struct ScreenResult {
  std::uint64_t configurations = 0;  ///< Configurations in the slice.
  std::uint64_t simulated = 0;       ///< Given to the analytic engine (fit in memory, not pruned).
  std::uint64_t pruned = 0;          ///< Skipped by a bound (provably infeasible).
  std::uint64_t invalid = 0;         ///< Layouts the workload model rejects (check_layout).
  std::uint64_t feasible = 0;
  std::array<std::uint64_t, kNumViolations> violated{};  ///< Per violation bit.
  std::vector<Evaluation> pareto;                        ///< Feasible and not dominated, by index.
  std::vector<Evaluation> best;     ///< The best max(finalists, 1) feasible by the objective.
  std::vector<Evaluation> nearest;  ///< The infeasible configuration closest to feasible (0/1).
  /// The best feasible configuration by the objective of each GPU type (gpu_group) and of each
  /// fabric choice (fabric_group), by group: the runners-up on other hardware.
  std::vector<Evaluation> best_per_gpu, best_per_fabric;
  std::vector<std::uint32_t> unbuildable;  ///< Hardware choices whose cluster cannot be built.
  // Best values seen among configurations that fit in memory (for the "nothing fits" reason).
  double min_time_to_train_s = 0, min_capex_usd = 0, min_total_cost_usd = 0,
         min_peak_facility_power_W = 0;
};

/// Merges slice results in the order given (rank order); the result equals screening the union.
ScreenResult merge(const std::vector<ScreenResult>& parts, Objective objective, int finalists);
/// Serialises a slice result to bytes and back (for MPI; exact, doubles as raw bits).
std::string serialize(const ScreenResult& r);
ScreenResult deserialize(const std::string& bytes);

/// True when `a` is at least as good as `b` on time, total cost and energy and better on one.
bool dominates(const Evaluation& a, const Evaluation& b);
/// True when `a` ranks before `b` for the objective (ties: the other two metrics, then index).
bool better_for(Objective o, const Evaluation& a, const Evaluation& b);

/// The final answer.
struct PlanResult {
  bool found = false;      ///< A configuration meets every constraint.
  Evaluation recommended;  ///< When found.
  /// Frontier over (time, total cost, energy), by time, of the configurations finish() timed
  /// with the flow-level engine (the screening frontier, the finalists and the runners-up per GPU
  /// type and fabric): the recommendation, picked from the same set, lies on it. Each row's
  /// Evaluation::native says which engine timed it (analytic where the flow-level engine could not
  /// run it, or with finalists = 0).
  std::vector<Evaluation> pareto;
  std::vector<Evaluation>
      finalists;  ///< The best by the objective, re-simulated with the flow-level engine.
  /// Runners-up on other hardware: the best feasible configuration of each GPU type and of each
  /// fabric choice other than the recommendation's, timed like the rest (by GPU, then by fabric;
  /// no duplicates).
  std::vector<Evaluation> alternatives;
  std::uint64_t retimed = 0;  ///< Configurations finish() timed with the flow-level engine.
  ScreenResult screen;        ///< Merged counts.
  std::string reason;         ///< When !found: why, with the nearest miss.
};

/// Progress callback: (configurations done in this slice, slice size). Called every few
/// thousand configurations; must be cheap.
// ProgressFn: core/progress.hpp.

/// The search. Construction loads the workload and the catalog and enumerates the space;
/// throws InputError for a bad request (unknown GPU id, unknown fabric, empty space).
class Planner {
 public:
  explicit Planner(PlanRequest request);
  ~Planner();
  Planner(const Planner&) = delete;
  Planner& operator=(const Planner&) = delete;

  const PlanRequest& request() const;
  const std::vector<HardwareChoice>& hardware() const;
  /// Number of configurations (hardware x layouts x acquisitions).
  std::uint64_t size() const;
  /// The contiguous slice of [0, size()) that part `part` of `parts` screens.
  static std::pair<std::uint64_t, std::uint64_t> slice(std::uint64_t size, int part, int parts);
  /// The configurations of hardware choice `h`: [first, last) of the global index.
  std::pair<std::uint64_t, std::uint64_t> hardware_range(std::uint32_t h) const;

  /// Screens configurations [begin, end) with the analytic engine. Deterministic; no I/O.
  ScreenResult screen(std::uint64_t begin, std::uint64_t end,
                      const ProgressFn& progress = {}) const;
  /// Screens several slices (sharing the engine figures between them) and merges them;
  /// `progress` receives the count done over all of them.
  ScreenResult screen(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& slices,
                      const ProgressFn& progress = {}) const;
  /// Re-simulates the best screened configurations with the flow-level engine and picks the
  /// recommended one. `merged` is the merge of all slices.
  /// `progress` receives (configurations timed, configurations to time at most).
  PlanResult finish(const ScreenResult& merged, const ProgressFn& progress = {}) const;

  /// JSON report: request, workload, recommended, pareto, finalists, evaluated, feasible,
  /// simulated, pruned, violations, reason; each configuration with its bill of materials,
  /// layout, iteration breakdown, bottleneck, power and cooling.
  nlohmann::json to_json(const PlanResult& r) const;
  /// The same for people: a summary and a table (fixed-width text).
  std::string to_text(const PlanResult& r) const;
  /// One CSV row per Pareto configuration (recommended first), with a header line.
  std::string to_csv(const PlanResult& r) const;

  struct Impl;  ///< Implementation detail (sim/plan/src/plan_impl.hpp).

 private:
  ScreenResult screen_impl(std::uint64_t begin, std::uint64_t end, const ProgressFn& progress,
                           bool prune, PerfCache* cache) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tutti
