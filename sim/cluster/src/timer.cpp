// Workload jobs are timed by tutti's engine on the GPUs they got: a Topology view that maps the
// job's ranks onto its GPUs (routing through the cluster's own formula), so the engine sees the
// real paths, leaf crossings and oversubscription of that placement.
#include "timer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "placement.hpp"
#include "tutti/core/error.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::cluster_detail {
namespace {

/// The cluster's topology seen by one job: rank r is GPU gpus[r]. Links and devices are the
/// cluster's; routes are the cluster's routes between the mapped GPUs.
class PlacedTopology final : public Topology {
 public:
  PlacedTopology(std::shared_ptr<const Topology> base, const std::vector<int>& gpus)
      : base_(std::move(base)), map_(gpus) {
    devices_ = base_->devices();
    links_ = base_->links();
    num_gpus_ = static_cast<int>(map_.size());
    gpus_per_node_ = base_->gpus_per_node();
    domain_gpus_ = base_->domain_gpus();
    gpu_device_.reserve(map_.size());
    for (int g : map_) gpu_device_.push_back(base_->gpu_device(g));
  }
  void route(int src, int dst, std::uint64_t hash, std::vector<std::uint32_t>& out) const override {
    base_->route(map_[src], map_[dst], hash, out);
  }
  double link_bundle(std::uint32_t l) const override { return base_->link_bundle(l); }
  std::string describe() const override { return base_->describe() + " (a job's placement)"; }

 private:
  std::shared_ptr<const Topology> base_;
  std::vector<int> map_;
};

}  // namespace

struct JobTimer::Loaded {
  Workload w;
  Layout l;
  double tokens_per_iteration = 0;
  double checkpoint_bytes = 0;
};

JobTimer::JobTimer(const Cluster& c, const Shape& s, const JobList& jobs, std::string engine,
                   std::string calibration)
    : c_(c), s_(s), jobs_(jobs), engine_(std::move(engine)), calibration_(std::move(calibration)) {
  if (engine_ != "analytic" && engine_ != "native")
    throw InputError("--engine", "engine", "\"" + engine_ + "\"",
                     "analytic or native (job runtimes)");
  loaded_.resize(jobs.workloads.size());
}
JobTimer::~JobTimer() = default;

const JobTimer::Loaded& JobTimer::loaded(int k) {
  if (!loaded_[k]) {
    auto L = std::make_unique<Loaded>();
    const JobWorkload& jw = jobs_.workloads[k];
    L->w = load_workload(jw.path);
    L->l = resolve_layout(L->w, jw.parallel);
    check_layout(L->w, L->l, c_.gpu.hbm_bytes);
    L->tokens_per_iteration = L->w.model.token_model() ? tokens_per_iteration(L->w) : 0;
    L->checkpoint_bytes = checkpoint_bytes(L->w);
    loaded_[k] = std::move(L);
  }
  return *loaded_[k];
}

int JobTimer::job_gpus(const JobSpec& j) {
  if (j.work.workload < 0) return j.gpus;
  const int lg = loaded(j.work.workload).l.gpus();
  if (j.gpus != 0 && j.gpus != lg)
    throw InputError(jobs_.file, fmt::format("jobs[id={}].gpus", j.id), std::to_string(j.gpus),
                     fmt::format("{} (the GPUs of its layout) or absent", lg));
  return lg;
}

SoloTime JobTimer::time(const JobSpec& j, const std::vector<int>& gpus) {
  int nodes = 0, domains = 0, groups = 0;
  {
    int last_n = -1, last_d = -1;
    std::vector<char> seen(static_cast<std::size_t>(s_.groups), 0);  // small; once per start
    for (int g : gpus) {
      const int n = g / s_.gpn;
      if (n != last_n) ++nodes, last_n = n;
      if (s_.domain_of[n] != last_d) ++domains, last_d = s_.domain_of[n];
      if (!seen[s_.group_of[n]]) seen[s_.group_of[n]] = 1, ++groups;
    }
  }
  SoloTime t;
  if (j.work.workload < 0) {
    t.unit_s = 1;
    t.units = j.work.duration_s;
    t.exposed = groups > 1 || nodes > 1 ? j.work.comm_fraction : 0;
    t.fabric_busy = t.exposed;
    return t;
  }
  const auto key =
      std::make_tuple(j.work.workload, static_cast<int>(gpus.size()), nodes, domains, groups);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    const auto t0 = std::chrono::steady_clock::now();
    const Loaded& L = loaded(j.work.workload);
    Program p = expand_program(L.w, L.l);
    SimCluster sc = sim_cluster(c_);
    sc.topology = std::make_shared<PlacedTopology>(c_.topology, gpus);
    CalibrationProfile prof =
        calibration_.empty() ? default_calibration() : load_calibration(calibration_);
    ProgramSimOptions po;
    SimResult r = engine_ == "native" ? simulate_program(p, sc, prof, po)
                                      : simulate_program_analytic(p, sc, prof, po);
    SoloTime s;
    s.unit_s = r.iteration_time_s;
    double exposed = 0;
    for (GroupDim d : enum_values<GroupDim>())
      if (d != GroupDim::TP) exposed += r.breakdown.exposed_comm_s[d];
    s.exposed = nodes > 1 && s.unit_s > 0 ? std::min(1.0, exposed / s.unit_s) : 0;
    double busy = s.exposed;
    for (const LinkUse& u : r.bottleneck_links)
      if (u.tier != Tier::NVLink && u.tier != Tier::PCIe) busy = std::max(busy, u.utilization);
    s.fabric_busy = nodes > 1 ? std::min(1.0, busy) : 0;
    s.checkpoint_bytes = L.checkpoint_bytes;
    it = cache_.emplace(key, s).first;
    wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  t = it->second;
  const Loaded& L = loaded(j.work.workload);
  t.units = j.work.iterations > 0
                ? j.work.iterations
                : (L.tokens_per_iteration > 0 ? j.work.tokens / L.tokens_per_iteration : 0);
  if (!(t.units > 0))
    throw InputError(jobs_.file, fmt::format("jobs[id={}].tokens", j.id),
                     "tokens on a model without tokens", "iterations");
  return t;
}

}  // namespace tutti::cluster_detail
