// The planner's search: enumeration of hardware choices, slice screening, finalists.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "plan_impl.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/topologies/catalog.hpp"

namespace tutti {

namespace {
// Nodes to buy for a job of `gpus` GPUs: whole nodes, and whole NVLink domains when a domain spans
// several nodes (18 trays of an NVL72 rack).
int whole_domain_nodes(int gpus, int gpus_per_node, int domain_gpus) {
  const int per = std::max(1, gpus_per_node);
  const int unit = domain_gpus > per ? domain_gpus : per;
  return (gpus + unit - 1) / unit * (unit / per);
}
}  // namespace

Planner::Planner(PlanRequest request) : impl_(std::make_unique<Impl>()) {
  Impl& I = *impl_;
  I.request = std::move(request);
  const PlanRequest& r = I.request;
  I.workload = load_workload(r.workload_path.empty() ? r.workload : r.workload_path);
  if (r.tokens > 0) {
    I.workload.training.tokens_to_train = r.tokens;
    I.workload.training.samples_to_train = 0;
  }
  if (tokens_to_train(I.workload) <= 0)
    throw InputError(
        r.file + ": tokens: the workload gives no tokens to train; set \"tokens\" (e.g. \"2T\")");
  {
    // A block-scaled or fp8 workload: refuse the hardware list when some GPU lacks the format.
    std::vector<const GpuSpec*> gpus;
    for (const auto& id : r.gpus) gpus.push_back(&Catalog::builtin().gpu(resolve_node(id).gpu));
    check_dtype_supported(I.workload.file, I.workload.training.dtype, gpus, default_calibration());
  }
  SpaceFacts facts = space_facts(I.workload);
  for (auto& st : I.request.storage)
    if (st.empty()) st = default_storage();
  I.n_acq = r.acquisition.size();

  for (std::size_t gi = 0; gi < r.gpus.size(); ++gi) {
    const std::string& id = r.gpus[gi];
    NodeChoice nc = resolve_node(id);
    for (int gpus : gpu_counts(r, nc.gpus_per_node)) {
      auto key = std::make_pair(gpus, nc.nvlink_domain);
      auto it = I.layout_cache.find(key);
      if (it == I.layout_cache.end())
        it =
            I.layout_cache.emplace(key, enumerate_layouts(facts, r.layouts, gpus, nc.nvlink_domain))
                .first;
      if (it->second.empty()) continue;
      std::uint16_t fabric_group = 0;
      for (const auto& fabric : r.fabrics)
        for (double over : r.oversubscription)
          for (Network net : r.networks) {
            for (const auto& storage : r.storage) {
              HardwareChoice h;
              h.node = nc.node;
              h.gpu = nc.gpu;
              h.gpus = gpus;
              // A job on part of a cluster: nodes whose NVLink domain spans several of them
              // (NVL72 trays) come in whole domains; the job fills them in order and the rest
              // idles.
              h.nodes = whole_domain_nodes(gpus, nc.gpus_per_node, nc.nvlink_domain);
              h.fabric = fabric;
              h.oversubscription = over;
              h.network = net;
              h.storage = storage;
              I.hardware.push_back(h);
              I.layouts.push_back(&it->second);
              I.gpu_group.push_back(static_cast<std::uint16_t>(gi));
              I.fabric_group.push_back(fabric_group);
            }
            ++fabric_group;
          }
    }
  }
  I.offsets.push_back(0);
  for (const auto* ls : I.layouts) I.offsets.push_back(I.offsets.back() + ls->size() * I.n_acq);
  if (I.hardware.empty())
    throw InputError(r.file + ": the search space is empty: no GPU count in [" +
                     std::to_string(r.gpus_min) + ", " + std::to_string(r.gpus_max) +
                     "] admits a valid parallel layout of " + I.workload.name +
                     " (widen constraints.gpus_min/gpus_max or search.gpu_counts)");
}

Planner::~Planner() = default;

const PlanRequest& Planner::request() const {
  return impl_->request;
}
const std::vector<HardwareChoice>& Planner::hardware() const {
  return impl_->hardware;
}
std::uint64_t Planner::size() const {
  return impl_->offsets.back();
}

std::pair<std::uint64_t, std::uint64_t> Planner::hardware_range(std::uint32_t h) const {
  check_internal(h < impl_->hardware.size(), "plan: hardware index out of range");
  return {impl_->offsets[h], impl_->offsets[h + 1]};
}

namespace {

void record(ScreenResult& r, const Evaluation& e, Objective o, int finalists) {
  if (e.feasible()) {
    ++r.feasible;
    pareto_insert(r.pareto, e);
    best_insert(r.best, e, o, finalists);
    group_insert(r.best_per_gpu, e, o, true);
    group_insert(r.best_per_fabric, e, o, false);
    return;
  }
  for (int b = 0; b < kNumViolations; ++b)
    if (e.violations & (1u << b)) ++r.violated[b];
  if (r.nearest.empty() || nearer_miss(e, r.nearest[0])) r.nearest = {e};
}

}  // namespace

ScreenResult Planner::screen(std::uint64_t begin, std::uint64_t end,
                             const ProgressFn& progress) const {
  auto cache = make_perf_cache();
  return screen_impl(begin, end, progress, impl_->request.prune, cache.get());
}

ScreenResult Planner::screen(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& slices,
                             const ProgressFn& progress) const {
  auto cache = make_perf_cache();
  std::uint64_t total = 0, before = 0;
  for (auto [b, e] : slices) total += e - b;
  std::vector<ScreenResult> parts;
  for (auto [b, e] : slices) {
    ProgressFn p;
    if (progress) p = [&, before](std::uint64_t d, std::uint64_t) { progress(before + d, total); };
    parts.push_back(screen_impl(b, e, p, impl_->request.prune, cache.get()));
    before += e - b;
  }
  return merge(parts, impl_->request.objective, impl_->request.finalists);
}

ScreenResult Planner::screen_impl(std::uint64_t begin, std::uint64_t end,
                                  const ProgressFn& progress, bool prune, PerfCache* cache) const {
  const Impl& I = *impl_;
  const PlanRequest& req = I.request;
  check_internal(begin <= end && end <= size(), "plan: slice out of range");
  ScreenResult r;
  r.configurations = end - begin;
  constexpr std::uint64_t kProgressEvery = 2048;
  std::uint64_t done = 0;

  auto h = static_cast<std::uint32_t>(std::upper_bound(I.offsets.begin(), I.offsets.end(), begin) -
                                      I.offsets.begin() - 1);
  std::uint64_t idx = begin;
  Perf perf;
  Evaluation e;
  while (idx < end) {
    const std::uint64_t hw_end = std::min(end, I.offsets[h + 1]);
    const auto& layouts = *I.layouts[h];
    std::shared_ptr<const HardwareModel> model;
    std::string build_error;
    try {
      model = build_hardware(I.hardware[h], req, I.workload);
    } catch (const InputError& err) {
      build_error = err.what();
    }
    if (!model) {
      // Not buildable (e.g. a fabric that cannot hold this many nodes): no configuration exists.
      r.configurations -= hw_end - idx;
      r.unbuildable.push_back(h);
      idx = hw_end;
      ++h;
      continue;
    }
    std::array<std::uint32_t, 2> hw_viol{};
    for (std::size_t a = 0; a < req.acquisition.size(); ++a)
      hw_viol[a] = prune ? hardware_violations(*model, req, req.acquisition[a]) : 0;

    std::uint64_t last_layout = UINT64_MAX;
    for (; idx < hw_end; ++idx) {
      std::uint64_t local = idx - I.offsets[h];
      std::uint64_t li = local / I.n_acq;
      std::size_t a = static_cast<std::size_t>(local % I.n_acq);
      if (++done % kProgressEvery == 0 && progress) progress(done, end - begin);
      if (hw_viol[a] != 0) {
        ++r.pruned;
        for (int b = 0; b < kNumViolations; ++b)
          if (hw_viol[a] & (1u << b)) ++r.violated[b];
        continue;
      }
      const Layout& l = layouts[li];
      if (li != last_layout) {
        evaluate_perf(*model, I.workload, l, false, perf, cache);
        last_layout = li;
        if (perf.valid && perf.fits) ++r.simulated;
      }
      if (!perf.valid) {
        ++r.invalid;
        continue;
      }
      e = Evaluation{};
      e.index = idx;
      e.hardware = h;
      e.layout = l;
      e.acquisition = req.acquisition[a];
      e.gpu_group = I.gpu_group[h];
      e.fabric_group = I.fabric_group[h];
      evaluate_config(*model, I.workload, req, perf, e.acquisition, e);
      if (perf.fits) {
        note_min(r.min_time_to_train_s, e.time_to_train_s);
        note_min(r.min_total_cost_usd, e.total_cost_usd);
        note_min(r.min_peak_facility_power_W, e.peak_facility_power_W);
        if (e.acquisition == Acquisition::Buy) note_min(r.min_capex_usd, e.capex_usd);
      }
      record(r, e, req.objective, req.finalists);
    }
    ++h;
  }
  if (progress) progress(end - begin, end - begin);
  std::sort(r.pareto.begin(), r.pareto.end(),
            [](const Evaluation& a, const Evaluation& b) { return a.index < b.index; });
  return r;
}

PlanResult Planner::finish(const ScreenResult& merged, const ProgressFn& progress) const {
  const Impl& I = *impl_;
  const PlanRequest& req = I.request;
  PlanResult out;
  out.screen = merged;
  out.pareto = merged.pareto;
  std::stable_sort(out.pareto.begin(), out.pareto.end(),
                   [](const Evaluation& a, const Evaluation& b) {
                     if (a.time_to_train_s != b.time_to_train_s)
                       return a.time_to_train_s < b.time_to_train_s;
                     return a.index < b.index;
                   });

  // Every configuration shown is timed by the same engine: the finalists (the best screened by
  // the objective), the screening frontier and the best of each GPU type and fabric choice are
  // timed again by the flow-level engine; the recommendation and the frontier shown are then
  // chosen from that one set, so the recommendation lies on the frontier printed with it.
  std::map<std::uint64_t, Evaluation> timed;  // by index: deterministic order, no duplicates
  Perf perf;
  constexpr std::size_t kRetimedFrontier = 24;
  const std::uint64_t to_time = static_cast<std::uint64_t>(
      std::min<std::size_t>(merged.best.size(),
                            static_cast<std::size_t>(std::max(req.finalists, 1))) +
      std::min(out.pareto.size(), kRetimedFrontier) + merged.best_per_gpu.size() +
      merged.best_per_fabric.size());
  std::uint64_t looked = 0;
  auto retime = [&](const Evaluation& s) -> const Evaluation& {
    if (progress) progress(++looked, to_time);
    auto it = timed.find(s.index);
    if (it != timed.end()) return it->second;
    Evaluation e = s;
    if (req.finalists > 0) {
      auto model = I.model(s.hardware);
      try {
        evaluate_perf(*model, I.workload, s.layout, true, perf);
        e.native = true;
        e.violations = 0;
        e.violation = 0;
        evaluate_config(*model, I.workload, req, perf, s.acquisition, e);
        I.native[s.index] = perf;
        ++out.retimed;
      } catch (const InputError&) {
        e = s;  // The flow-level engine cannot run this case: keep the analytic figures.
      }
    }
    return timed.emplace(s.index, e).first->second;
  };
  for (std::size_t i = 0;
       i < merged.best.size() && static_cast<int>(i) < std::max(req.finalists, 1); ++i)
    out.finalists.push_back(retime(merged.best[i]));
  if (req.finalists == 0) out.finalists.clear();
  // The screening frontier, by time; a very large one is sampled evenly (its fastest and
  // cheapest ends included) to bound the flow-level runs.
  const std::size_t nf = out.pareto.size(), rows = std::min(nf, kRetimedFrontier);
  for (std::size_t k = 0; k < rows; ++k)
    retime(out.pareto[rows == 1 ? 0 : k * (nf - 1) / (rows - 1)]);
  std::vector<std::pair<const Evaluation*, bool>> alt;  // (re-timed, from the per-GPU list)
  for (const auto& e : merged.best_per_gpu) alt.emplace_back(&retime(e), true);
  for (const auto& e : merged.best_per_fabric) alt.emplace_back(&retime(e), false);

  const Evaluation* best = nullptr;
  for (const auto& [index, e] : timed)
    if (e.feasible() && (best == nullptr || better_for(req.objective, e, *best))) best = &e;
  if (best != nullptr) {
    out.found = true;
    out.recommended = *best;
  }
  std::vector<Evaluation> front;
  for (const auto& [index, e] : timed)
    if (e.feasible()) pareto_insert(front, e);
  if (req.finalists > 0) out.pareto = std::move(front);  // else: the whole analytic frontier
  std::stable_sort(out.pareto.begin(), out.pareto.end(),
                   [](const Evaluation& a, const Evaluation& b) {
                     if (a.time_to_train_s != b.time_to_train_s)
                       return a.time_to_train_s < b.time_to_train_s;
                     return a.index < b.index;
                   });
  for (const auto& [e, by_gpu] : alt) {
    // Only other hardware: the recommendation's own GPU type and fabric are on the frontier.
    if (!e->feasible() ||
        (out.found && (e->index == out.recommended.index ||
                       (by_gpu ? e->gpu_group == out.recommended.gpu_group
                               : e->fabric_group == out.recommended.fabric_group))))
      continue;
    bool dup = false;
    for (const auto& a : out.alternatives) dup = dup || a.index == e->index;
    if (!dup) out.alternatives.push_back(*e);
  }
  if (!out.found && merged.feasible == 0 && merged.nearest.empty() && merged.pruned > 0) {
    // Every configuration was ruled out before timing: time them all (only in this failure
    // case) so the answer can name the nearest miss and how far the best came.
    auto cache = make_perf_cache();
    ScreenResult all = screen_impl(0, size(), {}, false, cache.get());
    out.screen.nearest = all.nearest;
    out.screen.min_time_to_train_s = all.min_time_to_train_s;
    out.screen.min_capex_usd = all.min_capex_usd;
    out.screen.min_total_cost_usd = all.min_total_cost_usd;
    out.screen.min_peak_facility_power_W = all.min_peak_facility_power_W;
  }
  if (!out.found) out.reason = explain_no_fit(req, I.hardware, out);
  return out;
}

}  // namespace tutti
