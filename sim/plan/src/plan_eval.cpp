// The planner's adapter to the rest of tutti: catalog and cluster generators (topologies/),
// memory and Program expansion (models/), the analytic and flow-level engines, and the facility
// models (power, cooling, failures, cost). The only plan*.cpp file that knows those APIs.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "plan_impl.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

struct HardwareModel {
  HardwareChoice choice;
  Cluster cluster;
  SimCluster sim;
  FacilityInputs base;      ///< Everything but the iteration times.
  FacilityOptions options;  ///< Screening: no Monte-Carlo.
  double peak_flops = 0;    ///< Dense peak of the workload's dtype, one GPU.
  double capex_usd = 0;     ///< Purchase (servers, network, storage, build-out).
  int racks = 0;            ///< Compute racks in the room (0 when no room was given).
  double min_time_s = 0;    ///< Lower bound on the time to train (90% of 6N FLOPs at peak).
  double tokens = 0;        ///< Tokens to train.
};

NodeChoice resolve_node(const std::string& id) {
  const Catalog& cat = Catalog::builtin();
  auto pick = [](const NodeSpec& n) {
    NodeChoice c;
    c.node = n.id;
    c.gpu = n.gpu;
    c.gpus_per_node = n.gpus;
    c.nvlink_domain = std::max(1, n.nvlink_domain_gpus);
    return c;
  };
  for (const auto& n : cat.nodes())
    if (n.id == id) return pick(n);
  for (const auto& g : cat.gpus())
    if (g.id == id && !g.usual_node.empty()) return pick(cat.usual_node(id));
  for (const auto& n : cat.nodes())
    if (n.gpu == id) return pick(n);
  std::string known;
  for (const auto& n : cat.nodes())
    known += (known.empty() ? "" : ", ") + n.id + " (" + n.gpu + ")";
  throw InputError("search.gpus", id, "\"" + id + "\"", "a node or GPU catalog id: " + known);
}

std::string default_storage() {
  const auto& s = Catalog::builtin().storages();
  return s.empty() ? std::string() : s.front().id;
}

SpaceFacts space_facts(const Workload& w) {
  SpaceFacts f;
  const auto& t = w.model.tf;
  f.transformer = !(w.model.family == ModelFamily::ResNet || w.model.family == ModelFamily::DLRM);
  f.layers = std::max(1, t.layers);
  f.heads = std::max(1, t.heads);
  f.kv_heads = std::max(1, t.kv_heads > 0 ? t.kv_heads : t.heads);
  f.ffn_hidden = std::max(1, t.ffn_hidden);
  f.moe_ffn_hidden = t.moe_ffn_hidden;
  f.experts = t.experts;
  f.seq_len = std::max(1, w.training.seq_len);
  f.global_batch = static_cast<int>(std::min<std::int64_t>(w.training.global_batch, 1 << 30));
  return f;
}

namespace {

// The facility models' view of a cluster and workload (iteration times filled per layout).
FacilityInputs facility_inputs_of(const Workload& w, const Cluster& c) {
  // The same inputs `tutti simulate` gives the facility models (one adapter for both paths).
  FacilityInputs in;
  fill_cluster_inputs(in, c);
  fill_workload_inputs(in, w);
  return in;
}

}  // namespace

std::shared_ptr<const HardwareModel> build_hardware(const HardwareChoice& h, const PlanRequest& r,
                                                    const Workload& w) {
  auto m = std::make_shared<HardwareModel>();
  m->choice = h;
  ClusterParams p;
  p.name = fmt::format("{}x{}", h.nodes, h.node);
  p.node = h.node;
  p.nodes = h.nodes;
  p.fabric = h.nodes > 1 ? h.fabric : "none";
  p.oversubscription = h.oversubscription;
  p.transport = to_string(h.network);
  p.storage = h.storage;
  p.storage_units = std::max(1, (h.nodes + 31) / 32);  // catalog storage tiers are per 32-node SU
  p.facility = r.facility;
  p.diameter = false;  // never shown by the planner (bench/plan.md: the route walk's cost)
  try {
    m->cluster = make_cluster(p);
  } catch (const InputError&) {
    // Smaller switches (40-port HDR) cannot hold 32-node scalable units: try 16-node units.
    if (h.nodes <= 1 || (p.nodes_per_su > 0 && p.nodes_per_su <= 16)) throw;
    p.nodes_per_su = 16;
    m->cluster = make_cluster(p);
  }
  if (r.prices) apply_prices(m->cluster, *r.prices);
  const Cluster& c = m->cluster;
  m->sim = sim_cluster(c);
  m->peak_flops = c.gpu.peak(w.training.dtype);
  if (m->peak_flops <= 0)
    throw InputError(
        fmt::format("{} has no {} peak in the catalog", c.gpu.id, to_string(w.training.dtype)));

  FacilityInputs& in = m->base;
  in = facility_inputs_of(w, c);
  in.job_gpus = h.gpus;  // a job on part of the cluster: the other GPUs idle
  if (r.room.racks > 0) {
    if (r.room.rack_power_W > 0) in.rack_power_W = r.room.rack_power_W;
    if (r.room.rack_cooling_W > 0) in.rack_cooling_W = r.room.rack_cooling_W;
    in.nodes_per_rack = 0;  // derive from the room's rack power
    in.racks = 0;
  }
  m->options.monte_carlo_trials = 0;
  m->options.hardware_life_years = r.hardware_life_years;
  m->options.utilization = r.utilization;
  // Capex does not depend on the layout (servers, network, storage, build-out for nameplate).
  PowerResult p0 = compute_power(in, IterationTimes{1.0, 0, 0, 0}, 1.0);
  m->capex_usd = compute_cost(in, m->options, p0, 0, 0).capex_usd;
  m->tokens = tokens_to_train(w);
  m->min_time_s = 0.9 * 6.0 * active_params(w) * m->tokens / (h.gpus * m->peak_flops);
  int per_rack = nodes_per_rack(in);
  m->racks = in.racks > 0 ? in.racks : (h.nodes + per_rack - 1) / per_rack;
  return m;
}

std::uint32_t hardware_violations(const HardwareModel& hw, const PlanRequest& r, Acquisition a) {
  std::uint32_t v = 0;
  const FacilityInputs& in = hw.base;
  if (a == Acquisition::Buy) {
    if (r.capex_budget_usd > 0 && hw.capex_usd > r.capex_budget_usd) v |= kCapex;
    // On the purchase basis the run pays at least the purchase; on the run basis it may not.
    if (r.cost_basis == CostBasis::Purchase && r.total_cost_budget_usd > 0 &&
        hw.capex_usd > r.total_cost_budget_usd)
      v |= kTotalCost;
    if (r.room.racks > 0 && hw.racks > r.room.racks) v |= kRoomRacks;
  }
  // Even at 90% of 6N FLOPs per token at peak, with no failures, the run takes this long.
  if (r.deadline_s > 0 && hw.min_time_s > r.deadline_s) v |= kDeadline;
  (void)in;
  return v;
}

namespace {

// One stage of a reduced Program, analysed: the analytic engine's per-stage figures plus the
// GEMM/memory-bound split of one micro-batch's compute (for the power model).
struct StageFigures {
  AnalyticStage st;
  double gemm_s = 0, mem_s = 0;
};

std::vector<StageFigures> analyse(const Program& prog, const SimCluster& sim,
                                  const CalibrationProfile& prof) {
  AnalyticJob job = analytic_job(prog, sim, prof);
  std::vector<StageFigures> out(job.stages.size());
  for (std::size_t c = 0; c < job.stages.size(); ++c) {
    out[c].st = job.stages[c];
    for (const Op& op : prog.classes[c].ops) {
      if (op.microbatch != 0) continue;
      if (op.kind == OpKind::Gemm || op.kind == OpKind::Attention)
        out[c].gemm_s += op_time_s(op, sim.gpu, prof);
      else if (op.kind == OpKind::MemBound)
        out[c].mem_s += op_time_s(op, sim.gpu, prof);
    }
  }
  return out;
}

// a + t * (b - a), field by field.
StageFigures lerp(const StageFigures& a, const StageFigures& b, double t) {
  auto f = [t](double x, double y) { return x + t * (y - x); };
  StageFigures r;
  r.st.fwd_s = f(a.st.fwd_s, b.st.fwd_s);
  r.st.bwd_s = f(a.st.bwd_s, b.st.bwd_s);
  r.st.p2p_s = f(a.st.p2p_s, b.st.p2p_s);
  r.st.dp_comm_s = f(a.st.dp_comm_s, b.st.dp_comm_s);
  for (GroupDim d : enum_values<GroupDim>())
    r.st.dp_comm_dim_s[d] = f(a.st.dp_comm_dim_s[d], b.st.dp_comm_dim_s[d]);
  r.st.dp_overlap_s = f(a.st.dp_overlap_s, b.st.dp_overlap_s);
  r.st.optimizer_s = f(a.st.optimizer_s, b.st.optimizer_s);
  for (GroupDim d : enum_values<GroupDim>())
    r.st.exposed_s[d] = f(a.st.exposed_s[d], b.st.exposed_s[d]);
  for (MoePart p : enum_values<MoePart>()) r.st.moe_s[p] = f(a.st.moe_s[p], b.st.moe_s[p]);
  r.gemm_s = f(a.gemm_s, b.gemm_s);
  r.mem_s = f(a.mem_s, b.mem_s);
  return r;
}

// True when every transformer layer has the same ops, so stage costs are affine in the layer
// count (dense models, or MoE models whose every layer is MoE).
bool homogeneous_layers(const Workload& w) {
  const auto& m = w.model;
  if (!(m.family == ModelFamily::Transformer || m.family == ModelFamily::Encoder ||
        m.family == ModelFamily::ViT))
    return false;
  return !(m.tf.experts > 0 && (m.tf.dense_layers > 0 || m.tf.moe_layer_freq > 1));
}

}  // namespace

// Per-stage figures for layout `l`, one entry per pipeline stage.
//
// The analytic engine's stage figures are those of one micro-batch plus the per-iteration DP
// collectives and optimizer, and with identical layers they are affine in the stage's layer
// count. So instead of expanding the whole Program (hundreds of microseconds for a 70B model),
// the planner expands two tiny ones with the same tp, cp, dp, ep, micro-batch, recompute and
// ZeRO stage: one and two layers per stage, one micro-batch, at most three stages (first,
// middle, last: every middle stage of a pipeline runs the same ops), no interleaving (the
// per-micro-batch work of a stage is the same with its layers in one chunk or in vp). Each real
// stage is then the affine extrapolation to its real layer count. Models whose layers differ
// (dense layers before MoE layers) use one exact reduced expansion instead. The reduced figures
// are cached by everything they depend on, so vp variants and both acquisitions share them.
//
// The analytic collective model sees a cluster only through node membership and the routes of
// GPU 0 to GPU 1 and to the first GPU of the next node (collective_model.hpp), which do not
// depend on the cluster's size; so one cache serves every GPU count of a (node type, fabric,
// oversubscription, network) and the key carries that context.
struct PerfCache {
  std::map<std::string, int> contexts;
  std::map<std::array<int, 12>, std::array<std::vector<StageFigures>, 2>> reduced;
};

std::shared_ptr<PerfCache> make_perf_cache() {
  return std::make_shared<PerfCache>();
}

namespace {

std::vector<StageFigures> stage_figures_one_mb(const HardwareModel& hw, const Workload& w,
                                               const Layout& l, PerfCache* cache);

// Screening expands one micro-batch. With zero=3 and no pipelining every data-parallel collective
// (each layer's gathers and gradient reduce-scatter) recurs in every micro-batch, so its time and
// the backward that hides it scale with the iteration's micro-batch count. (With pipelining the
// gathers recur per micro-batch only for reshard=1 and the reduce-scatters never: left at one.)
std::vector<StageFigures> stage_figures(const HardwareModel& hw, const Workload& w, const Layout& l,
                                        PerfCache* cache) {
  std::vector<StageFigures> out = stage_figures_one_mb(hw, w, l, cache);
  if (l.zero >= 3 && l.pp == 1) {
    const double m = microbatches(w, l);
    for (StageFigures& f : out) {
      f.st.dp_comm_s *= m;
      f.st.dp_overlap_s *= m;
      for (double& x : f.st.dp_comm_dim_s) x *= m;
    }
  }
  return out;
}

std::vector<StageFigures> stage_figures_one_mb(const HardwareModel& hw, const Workload& w,
                                               const Layout& l, PerfCache* cache) {
  const CalibrationProfile& prof = default_calibration();
  std::vector<StageFigures> out(static_cast<std::size_t>(l.pp));
  if (!homogeneous_layers(w)) {
    // Exact: the real layers, the fewest micro-batches the schedule allows.
    Workload r = w;
    r.training.global_batch =
        static_cast<std::int64_t>(l.dp) * l.micro_batch * (l.vp > 1 ? l.pp : 1);
    return analyse(expand_program(r, l), hw.sim, prof);
  }
  const int ppr = std::min(l.pp, 3);
  int context = 0;
  if (cache != nullptr) {
    const HardwareChoice& h = hw.choice;
    auto name =
        fmt::format("{}|{}|{}|{}", h.node, h.fabric, h.oversubscription, to_string(h.network));
    context = cache->contexts.emplace(name, static_cast<int>(cache->contexts.size())).first->second;
  }
  std::array<int, 12> key{context, l.tp,  l.cp,           l.dp,
                          l.ep,    l.etp, l.micro_batch,  static_cast<int>(l.recompute),
                          l.zero,  ppr,   l.shard_size(), l.reshard_after_forward() ? 1 : 0};
  std::array<std::vector<StageFigures>, 2>* red = nullptr;
  std::array<std::vector<StageFigures>, 2> local;
  if (cache != nullptr) {
    auto it = cache->reduced.find(key);
    if (it != cache->reduced.end()) red = &it->second;
  }
  if (red == nullptr) {
    for (int k = 1; k <= 2; ++k) {
      Workload r = w;
      r.model.tf.layers = ppr * k;
      r.training.global_batch = static_cast<std::int64_t>(l.dp) * l.micro_batch;
      Layout rl = l;
      rl.pp = ppr;
      rl.vp = 1;
      rl.schedule = PipeSchedule::OneFOneB;
      local[k - 1] = analyse(expand_program(r, rl), hw.sim, prof);
    }
    red = cache != nullptr ? &cache->reduced.emplace(key, std::move(local)).first->second : &local;
  }
  for (int st = 0; st < l.pp; ++st) {
    int layers = 0;
    for (int ch = 0; ch < l.vp; ++ch) layers += stage_layers(w, l, ch * l.pp + st).count;
    std::size_t rs = st == 0 ? 0 : (st == l.pp - 1 ? static_cast<std::size_t>(ppr - 1) : 1);
    out[static_cast<std::size_t>(st)] = lerp((*red)[0][rs], (*red)[1][rs], layers - 1.0);
  }
  return out;
}

}  // namespace

void evaluate_perf(const HardwareModel& hw, const Workload& w, const Layout& l, bool native,
                   Perf& out, PerfCache* cache) {
  out = Perf{};
  out.hbm_bytes = hw.cluster.gpu.hbm_bytes;
  try {
    check_layout(w, l, 0);
  } catch (const InputError&) {
    out.valid = false;
    return;
  }
  out.memory_bytes = memory_per_gpu(w, l).total_bytes;
  out.fits = out.memory_bytes <= out.hbm_bytes;
  if (!out.fits) return;
  SimResult& r = out.sim;
  if (native) {
    SimOptions o;
    o.engine = "native";
    r = simulate(w, hw.cluster, l, o);
    // The event engine reports no per-stream busy split; take it from the analytic figures.
    auto figs = stage_figures(hw, w, l, cache);
    double g = 0, mem = 0;
    for (const auto& f : figs) {
      g = std::max(g, f.gemm_s);
      mem = std::max(mem, f.mem_s);
    }
    double m = microbatches(w, l), scale = r.breakdown.compute_s / std::max(m * (g + mem), 1e-300);
    if (r.gemm_busy_s <= 0) r.gemm_busy_s = m * g * scale;
    if (r.memory_busy_s <= 0) r.memory_busy_s = m * mem * scale;
    if (r.comm_busy_s <= 0) r.comm_busy_s = r.breakdown.exposed_comm_total();
    return;
  }
  auto figs = stage_figures(hw, w, l, cache);
  AnalyticJob job;
  job.microbatches = microbatches(w, l);
  job.virtual_stages = l.vp;
  job.schedule = l.schedule;
  std::size_t crit = 0;
  for (std::size_t s = 0; s < figs.size(); ++s) {
    job.stages.push_back(figs[s].st);
    if (figs[s].st.fwd_s + figs[s].st.bwd_s > figs[crit].st.fwd_s + figs[crit].st.bwd_s) crit = s;
  }
  AnalyticTime t = analytic_iteration(job);
  record_analytic_time(t, r);
  const double tpi = tokens_per_iteration(w);
  r.iterations = tpi > 0 ? hw.tokens / tpi : 0;
  r.time_to_train_s = r.iterations * r.iteration_time_s;
  r.mfu = model_flops_per_iteration(w) / (t.iteration_s * l.gpus() * hw.peak_flops);
  r.memory_per_gpu_bytes = out.memory_bytes;
  // Busy times of the critical stage, for the power model.
  const StageFigures& c = figs[crit];
  double scale = (c.gemm_s + c.mem_s) > 0 ? t.compute_s / (c.gemm_s + c.mem_s) : 0;
  r.gemm_busy_s = c.gemm_s * scale;
  r.memory_busy_s = c.mem_s * scale;
  double comm = 0;
  for (double x : t.exposed_s) comm += x;
  r.comm_busy_s = std::min(t.iteration_s, comm + c.st.dp_overlap_s);
}

void evaluate_config(const HardwareModel& hw, const Workload& w, const PlanRequest& r,
                     const Perf& p, Acquisition a, Evaluation& e) {
  (void)w;
  e.memory_per_gpu_bytes = p.memory_bytes;
  e.violations = 0;
  e.violation = 0;
  auto excess = [&](std::uint32_t bit, double value, double limit) {
    if (limit > 0 && value > limit) {
      e.violations |= bit;
      e.violation = std::max(e.violation, value / limit - 1);
    }
  };
  if (!p.fits) {
    excess(kMemory, p.memory_bytes, p.hbm_bytes);
    if (a == Acquisition::Buy) {
      excess(kCapex, hw.capex_usd, r.capex_budget_usd);
      if (r.room.racks > 0 && hw.racks > r.room.racks) excess(kRoomRacks, hw.racks, r.room.racks);
    }
    return;
  }
  const SimResult& s = p.sim;
  FacilityInputs in = hw.base;
  in.times = IterationTimes{s.iteration_time_s, s.gemm_busy_s, s.memory_busy_s, s.comm_busy_s};
  in.iterations = s.iterations;
  FacilityResult f = evaluate_facility(in, hw.options);
  e.iteration_time_s =
      f.cooling.times.iteration_s > 0 ? f.cooling.times.iteration_s : s.iteration_time_s;
  e.time_to_train_s = f.effective_time_to_train_s;
  e.mfu = s.mfu * (s.iteration_time_s / std::max(e.iteration_time_s, 1e-300));
  e.breakdown = s.breakdown;
  e.energy_J = f.energy_per_run_J;
  const double tokens = in.iterations * in.tokens_per_iteration;
  e.energy_J_per_token = tokens > 0 ? e.energy_J / tokens : 0;
  e.avg_it_power_W = f.power.avg_it_W;
  e.peak_facility_power_W = f.power.peak_facility_W;
  // Owned and rented on one basis: the same facility cost model as `tutti simulate`.
  e.rental_usd = f.cost.cloud_cost_per_run_usd;
  e.breakeven_utilization =
      f.cost.cloud_usd_per_gpu_hour > 0 && std::isfinite(f.cost.breakeven_utilization)
          ? f.cost.breakeven_utilization
          : 0;
  if (a == Acquisition::Buy) {
    e.capex_usd = f.cost.capex_usd;
    e.owned_run_usd = f.cost.cost_per_run_usd;
    e.run_opex_usd = f.cost.energy_cost_per_run_usd +
                     (f.cost.maintenance_usd_per_year + f.cost.rack_space_usd_per_year) *
                         e.time_to_train_s / (kYear * hw.options.utilization);
    e.total_cost_usd =
        r.cost_basis == CostBasis::Run ? e.owned_run_usd : e.capex_usd + e.run_opex_usd;
  } else {
    e.capex_usd = 0;
    e.owned_run_usd = 0;
    e.run_opex_usd = f.cost.cloud_cost_per_run_usd;
    e.total_cost_usd = e.run_opex_usd;
  }

  excess(kDeadline, e.time_to_train_s, r.deadline_s);
  if (a == Acquisition::Buy) {
    excess(kCapex, e.capex_usd, r.capex_budget_usd);
    excess(kPowerCap, e.peak_facility_power_W, r.power_cap_W);
    if (r.room.racks > 0) {
      if (f.cooling.racks > r.room.racks) excess(kRoomRacks, f.cooling.racks, r.room.racks);
      if (!f.cooling.fits) {
        e.violations |= kRoomCooling;
        e.violation =
            std::max(e.violation, f.cooling.heat_per_rack_W / std::max(1.0, in.rack_cooling_W) - 1);
      }
    }
  }
  excess(kTotalCost, e.total_cost_usd, r.total_cost_budget_usd);
  // Cannot be costed (no rental price, or no purchase price): never recommended, and counted
  // apart from the budgets (a missing price is not "over budget").
  if ((a == Acquisition::Rent && hw.base.cloud_usd_per_gpu_hour <= 0) ||
      (a == Acquisition::Buy && f.cost.capex_origin == PriceOrigin::None)) {
    e.violations |= kNoPrice;
    e.violation = std::max(e.violation, 1.0);
  }
}

nlohmann::json hardware_json(const HardwareModel& hw) {
  const Cluster& c = hw.cluster;
  nlohmann::json items = nlohmann::json::array();
  for (const BomLine& l : c.bom.lines)
    items.push_back({{"category", l.category},
                     {"role", l.role},
                     {"id", l.id},
                     {"name", l.name},
                     {"count", l.count},
                     {"unit_price_usd", l.unit_price_usd},
                     {"price_usd", l.price_usd()},
                     {"power_W", l.power_W()},
                     {"estimate", l.estimate},
                     {"price_origin", to_string(l.origin)}});
  return nlohmann::json{
      {"description", c.description.empty() ? c.facts.description : c.description},
      {"gpus", c.gpus()},
      {"nodes", c.nodes},
      {"racks", hw.racks > 0 ? hw.racks : c.racks},
      {"switches", c.bom.switches},
      {"transceivers", c.bom.transceivers},
      {"cables", c.bom.cables},
      {"bisection_bandwidth_Bps", c.facts.bisection_Bps},
      {"compute_capex_usd", c.bom.compute_capex_usd},
      {"network_capex_usd", c.bom.network_capex_usd},
      {"storage_capex_usd", c.bom.storage_capex_usd},
      {"network_power_W", c.bom.network_power_W},
      {"items", items}};
}

nlohmann::json facility_json(const HardwareModel& hw, const Workload& w, const PlanRequest& r,
                             const Evaluation& e, const Perf* known) {
  (void)r;
  Perf p;
  if (known != nullptr)
    p = *known;
  else
    evaluate_perf(hw, w, e.layout, false, p);
  if (!p.fits) return nlohmann::json::object();
  FacilityInputs in = hw.base;
  in.times = IterationTimes{p.sim.iteration_time_s, p.sim.gemm_busy_s, p.sim.memory_busy_s,
                            p.sim.comm_busy_s};
  in.iterations = p.sim.iterations;
  FacilityResult f = evaluate_facility(in, hw.options);
  return facility_to_json(f, false);
}

nlohmann::json workload_json(const Workload& w) {
  return nlohmann::json{{"name", w.name},
                        {"file", w.file},
                        {"params", params(w)},
                        {"tokens_to_train", tokens_to_train(w)},
                        {"tokens_per_iteration", tokens_per_iteration(w)},
                        {"model_flops_per_iteration", model_flops_per_iteration(w)}};
}

}  // namespace tutti

namespace tutti {

SimResult exact_analytic(const HardwareModel& hw, const Workload& w, const Layout& l) {
  ProgramSimOptions o;
  o.tokens_to_train = hw.tokens;
  return simulate_program_analytic(expand_program(w, l), hw.sim, default_calibration(), o);
}

}  // namespace tutti
