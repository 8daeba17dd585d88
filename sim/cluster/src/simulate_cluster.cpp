// The event loop of `tutti cluster simulate`: events, queue, scheduler passes, failures,
// interference and the accounting of every GPU-second (cluster_sim.hpp states the model).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <queue>

#include "interference.hpp"
#include "placement.hpp"
#include "rng.hpp"
#include "timer.hpp"
#include "tutti/cluster/cluster_sim.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

namespace {
template <class E>
E parse_kind(const std::string& s, const std::string& flag,
             std::initializer_list<std::pair<const char*, E>> aliases) {
  if (auto e = parse_enum<E>(s)) return *e;
  for (auto& [a, e] : aliases)
    if (s == a) return e;
  throw InputError(flag, flag.substr(2), "\"" + s + "\"", enum_names<E>(", "));
}
}  // namespace

SchedulerKind parse_scheduler(const std::string& s, const std::string& flag) {
  return parse_kind<SchedulerKind>(s, flag,
                                   {{"easy", SchedulerKind::Easy},
                                    {"conservative", SchedulerKind::Conservative},
                                    {"fairshare", SchedulerKind::FairShare}});
}
PlacementKind parse_placement(const std::string& s, const std::string& flag) {
  return parse_kind<PlacementKind>(s, flag, {{"topology-aware", PlacementKind::Topology}});
}
AllocUnit parse_alloc(const std::string& s, const std::string& flag) {
  return parse_kind<AllocUnit>(s, flag, {});
}

Percentiles percentiles(std::vector<double>& v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const std::size_t k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  p.p50 = at(0.5);
  p.p90 = at(0.9);
  p.p99 = at(0.99);
  double s = 0;
  for (double x : v) s += x;
  p.mean = s / static_cast<double>(v.size());
  return p;
}

namespace {
using namespace cluster_detail;
constexpr double kInf = std::numeric_limits<double>::infinity();

enum class St : std::uint8_t { Future, Queued, Running, Done };

struct Run {
  St st = St::Future;
  int gpus = 0;            ///< Asked (an elastic job: its minimum).
  int held = 0;            ///< Held (node mode rounds up to nodes).
  int use = 0;             ///< Working on (rigid: gpus; elastic: min(max_gpus, held)).
  bool elastic = false;    ///< Grows and shrinks (ClusterSimOptions::elastic and a range).
  double base_unit_s = 1;  ///< Seconds per unit on `JobSpec::gpus` GPUs (elastic scaling base).
  double usage_t = 0;      ///< Fair-share usage charged up to here.
  double est_s = 0;        ///< Walltime estimate for backfill.
  SoloTime solo;           ///< Of the current placement.
  double done_units = 0;   ///< Work done (kept across restarts up to the last checkpoint).
  double extra_units = 0;  ///< Restart overhead still to run.
  double last_t = 0;       ///< Progress accounted up to here.
  double start_t = 0;      ///< Current run's start.
  double slow = 1;         ///< Current interference stretch of the iteration time.
  double ck = 1;           ///< Checkpoint factor (1 + C / tau).
  double tau_s = kInf, ckpt_s = 0;
  std::uint32_t version = 0;
  std::vector<int> gpu_ids;
  double slow_time = 0, run_time = 0;  ///< For the mean slowdown.
  JobOutcome out;
};

struct Event {
  double t;
  int kind;  // 0 submit, 1 finish, 2 fail, 3 repair, 4 switch failure
  int a;
  std::uint32_t version;
  bool operator>(const Event& o) const {
    if (t != o.t) return t > o.t;
    if (kind != o.kind) return kind > o.kind;
    return a > o.a;
  }
};

class Sim {
 public:
  Sim(const Cluster& c, const JobList& jl, const ClusterSimOptions& o)
      : c_(c),
        jl_(jl),
        o_(o),
        shape_(cluster_shape(c)),
        placer_(shape_, o.alloc, o.placement),
        timer_(c, shape_, jl, o.engine, o.calibration),
        net_(*c.topology, shape_),
        rng_(o.seed) {}

  ClusterResult run();

 private:
  void advance(double t);
  void submit(int j);
  void start(int j);
  void stop(int j, double t, int why);  // 0 finish, 1 fail, 2 preempt
  void release_rates(const Run& r);     // takes r's held GPUs out of the cluster-wide rates
  void reschedule(int j);
  void progress(int j, double t);
  void set_slow(int j, double s);
  void refresh_interference(const std::vector<int>& touched);
  void pass();
  void schedule();
  bool try_start(int j);
  void resize(int j, const std::vector<int>& add, int drop);
  void shrink_for_head();
  int surplus_units(int j) const;
  int reclaimable_units() const;
  void grow();
  void set_use(int j);
  void link_nodes(int j);
  void unlink_nodes(int j);
  void charge_usage(int j, double t);
  void count_spans(int j);
  double shadow(int head, double& extra_units);
  void conservative();
  double order_key(int j) const;
  void requeue(int j);
  double remaining_wall(int j) const;
  void bucket_add(double t0, double t1, double alloc_gpus, double busy_gpus);

  const Cluster& c_;
  const JobList& jl_;
  ClusterSimOptions o_;
  Shape shape_;
  Placer placer_;
  JobTimer timer_;
  LinkShare net_;
  Rng rng_;
  std::vector<Run> runs_;
  std::vector<int> queue_, running_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> ev_;
  double now_ = 0;
  double alloc_gpus_ = 0, busy_rate_ = 0, interf_rate_ = 0, ckpt_rate_ = 0;
  IdleHours idle_;  // GPU-seconds while running, converted at the end
  std::vector<double> hour_alloc_, hour_busy_;
  std::vector<int> candidates_, touched_;
  std::vector<int> scratch_, extra_;
  std::vector<double> usage_;  // fair share, decayed GPU-seconds per user/team
  double usage_t_ = 0;
  double node_rate_ = 0;    // failures per node-second
  double switch_rate_ = 0;  // switch failures per cluster-second (profile classes per "switch")
  std::vector<std::vector<int>> switch_domains_;  // nodes each blocking switch cuts off
  int failures_ = 0;
  std::vector<std::vector<int>> node_jobs_;
};

double Sim::order_key(int j) const {
  const Run& r = runs_[j];
  switch (o_.scheduler) {
    case SchedulerKind::FairShare: {
      const int who = o_.fair_share_by_team ? jl_.jobs[j].team : jl_.jobs[j].user;
      return usage_[who];
    }
    case SchedulerKind::Gang:
      return -static_cast<double>(jl_.jobs[j].priority);
    default:
      return r.out.submit_s;
  }
}

void Sim::requeue(int j) {
  runs_[j].st = St::Queued;
  // Insert in submit order (the sort in pass() re-orders for fair-share and gang).
  auto it = std::upper_bound(queue_.begin(), queue_.end(), j, [&](int a, int b) {
    return runs_[a].out.submit_s != runs_[b].out.submit_s
               ? runs_[a].out.submit_s < runs_[b].out.submit_s
               : a < b;
  });
  queue_.insert(it, j);
}

void Sim::bucket_add(double t0, double t1, double alloc, double busy) {
  while (t0 < t1) {
    const std::size_t h = static_cast<std::size_t>(t0 / kHour);
    if (h >= hour_alloc_.size()) {
      hour_alloc_.resize(h + 1, 0);
      hour_busy_.resize(h + 1, 0);
    }
    const double e = std::min(t1, (static_cast<double>(h) + 1) * kHour);
    hour_alloc_[h] += alloc * (e - t0);
    hour_busy_[h] += busy * (e - t0);
    t0 = e;
  }
}

// Accounts [now_, t): idle GPUs by cause, allocated and busy GPU-seconds.
void Sim::advance(double t) {
  const double dt = t - now_;
  if (dt <= 0) return;
  const double free = placer_.free_gpus();
  idle_.failures += placer_.down_gpus() * dt + ckpt_rate_ * dt;
  idle_.interference += interf_rate_ * dt;
  if (queue_.empty())
    idle_.no_demand += free * dt;
  else if (placer_.fits_count(runs_[queue_.front()].gpus) || runs_[queue_.front()].held <= free)
    idle_.fragmentation += free * dt;
  else
    idle_.head_blocking += free * dt;
  // Node allocation holds whole nodes: GPUs held beyond the request are fragmentation too.
  double unused_held = 0;
  for (int j : running_) unused_held += runs_[j].held - runs_[j].use;
  idle_.fragmentation += unused_held * dt;
  bucket_add(now_, t, alloc_gpus_, busy_rate_);
  now_ = t;
}

void Sim::progress(int j, double t) {
  Run& r = runs_[j];
  const double wall = t - r.last_t;
  if (wall > 0) {
    const double per_unit = r.solo.unit_s * r.slow * r.ck;
    double u = wall / per_unit;
    const double from_extra = std::min(u, r.extra_units);
    r.extra_units -= from_extra;
    r.done_units += u - from_extra;
    r.slow_time += r.slow * wall;
    r.run_time += wall;
  }
  r.last_t = t;
}

double Sim::remaining_wall(int j) const {
  const Run& r = runs_[j];
  const double units = std::max(0.0, r.solo.units - r.done_units) + r.extra_units;
  return units * r.solo.unit_s * r.slow * r.ck;
}

void Sim::reschedule(int j) {
  Run& r = runs_[j];
  ++r.version;
  ev_.push({now_ + remaining_wall(j), 1, j, r.version});
}

void Sim::set_slow(int j, double s) {
  Run& r = runs_[j];
  if (std::abs(s - r.slow) < 1e-12) return;
  progress(j, now_);
  const double g = r.held;
  busy_rate_ -= g / (r.slow * r.ck);
  interf_rate_ -= g * (r.slow - 1) / (r.slow * r.ck);
  r.slow = s;
  busy_rate_ += g / (r.slow * r.ck);
  interf_rate_ += g * (r.slow - 1) / (r.slow * r.ck);
  reschedule(j);
}

void Sim::refresh_interference(const std::vector<int>& touched) {
  if (!o_.interference) return;
  for (int j : touched) {
    const Run& r = runs_[j];
    if (r.st != St::Running) continue;
    const double s = net_.stretch(j);  // communication stretch on its most loaded link
    const double T = std::max(1 + r.solo.exposed * (s - 1), r.solo.fabric_busy * s);
    set_slow(j, std::max(1.0, T));
  }
}

void Sim::start(int j) {
  Run& r = runs_[j];
  placer_.commit(r.gpu_ids);
  r.st = St::Running;
  r.solo = timer_.time(jl_.jobs[j], r.gpu_ids);
  r.start_t = r.last_t = r.usage_t = now_;
  set_use(j);
  if (r.out.start_s < 0) {
    r.out.start_s = now_;
    r.out.wait_s = now_ - r.out.submit_s;
  }
  // Checkpoints: interval tau (Young's sqrt(2 C M) with the job's MTBF unless set), cost C.
  count_spans(j);
  r.ckpt_s = o_.checkpoint_write_s;
  if (o_.failures && node_rate_ > 0) {
    const double mtbf = 1.0 / (node_rate_ * r.out.nodes);
    r.tau_s =
        o_.checkpoint_interval_s > 0 ? o_.checkpoint_interval_s : young_interval_s(r.ckpt_s, mtbf);
    r.ck = 1 + r.ckpt_s / r.tau_s;
  } else {
    r.tau_s = kInf;
    r.ck = 1;
  }
  r.slow = 1;
  alloc_gpus_ += r.held;
  busy_rate_ += r.held / r.ck;
  ckpt_rate_ += r.held * (1 - 1 / r.ck);
  running_.push_back(j);
  link_nodes(j);
  if (o_.interference && r.solo.fabric_busy > 0) {
    touched_.clear();
    net_.add(j, r.gpu_ids, r.solo.fabric_busy, touched_);
    reschedule(j);
    refresh_interference(touched_);
  } else {
    reschedule(j);
  }
}

void Sim::count_spans(int j) {
  Run& r = runs_[j];
  int n = 0, last = -1;
  for (int g : r.gpu_ids)
    if (g / shape_.gpn != last) ++n, last = g / shape_.gpn;
  r.out.nodes = n;
  r.out.domains = 0;
  r.out.groups = net_.groups_spanned(r.gpu_ids, r.out.domains);
}

// Working GPUs and the unit time for them: an elastic job's throughput scales linearly with
// the GPUs it works on (work conserved: its duration is for JobSpec::gpus GPUs).
void Sim::set_use(int j) {
  Run& r = runs_[j];
  r.base_unit_s = r.solo.unit_s;
  if (!r.elastic) {
    r.use = r.gpus;
    return;
  }
  const JobSpec& js = jl_.jobs[j];
  r.use = std::min(js.max_gpus, r.held);
  r.solo.unit_s = r.base_unit_s * js.gpus / r.use;
  r.out.min_gpus_used = r.out.min_gpus_used == 0 ? r.use : std::min(r.out.min_gpus_used, r.use);
  r.out.max_gpus_used = std::max(r.out.max_gpus_used, r.use);
}

void Sim::link_nodes(int j) {
  for (int g : runs_[j].gpu_ids)
    if (node_jobs_[g / shape_.gpn].empty() || node_jobs_[g / shape_.gpn].back() != j)
      node_jobs_[g / shape_.gpn].push_back(j);
}

void Sim::unlink_nodes(int j) {
  for (int g : runs_[j].gpu_ids) {
    auto& v = node_jobs_[g / shape_.gpn];
    if (auto it = std::find(v.begin(), v.end(), j); it != v.end()) v.erase(it);
  }
}

void Sim::charge_usage(int j, double t) {
  Run& r = runs_[j];
  if (o_.scheduler == SchedulerKind::FairShare) {
    const int who = o_.fair_share_by_team ? jl_.jobs[j].team : jl_.jobs[j].user;
    usage_[who] += r.held * (t - r.usage_t);
  }
  r.usage_t = t;
}

// A running elastic job takes the GPUs in `add` or gives back its last `drop` GPUs (whole nodes
// in node mode): progress so far is kept, the rest runs at the new width's throughput.
void Sim::resize(int j, const std::vector<int>& add, int drop) {
  Run& r = runs_[j];
  progress(j, now_);
  ++r.version;
  release_rates(r);
  charge_usage(j, now_);
  unlink_nodes(j);
  touched_.clear();
  if (o_.interference && r.solo.fabric_busy > 0) net_.remove(j, touched_);
  if (drop > 0) {
    extra_.assign(r.gpu_ids.end() - drop, r.gpu_ids.end());
    placer_.release(extra_);
    r.gpu_ids.resize(r.gpu_ids.size() - static_cast<std::size_t>(drop));
  } else {
    placer_.commit(add);
    r.gpu_ids.insert(r.gpu_ids.end(), add.begin(), add.end());
  }
  r.held = static_cast<int>(r.gpu_ids.size());
  r.solo = timer_.time(jl_.jobs[j], r.gpu_ids);
  set_use(j);
  ++r.out.resizes;
  r.slow = 1;
  alloc_gpus_ += r.held;
  busy_rate_ += r.held / r.ck;
  ckpt_rate_ += r.held * (1 - 1 / r.ck);
  link_nodes(j);
  count_spans(j);
  if (o_.interference && r.solo.fabric_busy > 0)
    net_.add(j, r.gpu_ids, r.solo.fabric_busy, touched_);
  reschedule(j);
  refresh_interference(touched_);
}

// Before a pass: when the queue head does not fit but would with what running elastic jobs hold
// above their minimum, they shrink (the widest surplus first) until it fits by count.
int Sim::surplus_units(int j) const {
  const Run& r = runs_[j];
  return r.elastic ? placer_.units(r.held) - placer_.units(placer_.held_gpus(r.gpus)) : 0;
}

// Free units plus what running elastic jobs hold above their minimum.
int Sim::reclaimable_units() const {
  int n = placer_.free_units();
  for (int j : running_) n += surplus_units(j);
  return n;
}

void Sim::shrink_for_head() {
  if (queue_.empty()) return;
  const int need = placer_.units(runs_[queue_.front()].gpus);
  int free = placer_.free_units();
  if (free >= need || reclaimable_units() < need) return;
  candidates_.clear();
  for (int j : running_)
    if (surplus_units(j) > 0) candidates_.push_back(j);
  auto surplus_of = [&](int j) { return surplus_units(j); };
  std::sort(candidates_.begin(), candidates_.end(), [&](int a, int b) {
    const int sa = surplus_of(a), sb = surplus_of(b);
    return sa != sb ? sa > sb : a < b;
  });
  const int unit_gpus = placer_.held_gpus(1);
  for (int j : candidates_) {
    if (free >= need) break;
    const int units = std::min(surplus_of(j), need - free);
    resize(j, {}, units * unit_gpus);
    free = placer_.free_units();
  }
}

// After a pass: free GPUs go to running elastic jobs below their maximum, in start order (GPU
// allocation: free GPUs on the job's own nodes first, then by node id; node allocation: whole
// free nodes by the placement policy).
// Growth that the next pass would take back (the queue head fits in free + surplus: it is only
// waiting on shape, or on this very pass) is skipped, so grow and shrink never alternate on one
// state: growing moves free units into surplus and leaves their sum unchanged.
void Sim::grow() {
  if (!queue_.empty() && reclaimable_units() >= placer_.units(runs_[queue_.front()].gpus)) return;
  const int unit_gpus = placer_.held_gpus(1);
  for (int j : running_) {
    Run& r = runs_[j];
    if (!r.elastic) continue;
    const int room = jl_.jobs[j].max_gpus - r.held;
    const int units = std::min(room / unit_gpus, placer_.free_units());
    if (units <= 0) continue;
    const bool ok = o_.alloc == AllocUnit::Gpu ? placer_.take_any(units, r.gpu_ids, scratch_)
                                               : placer_.fits_count(units * unit_gpus) &&
                                                     placer_.place(units * unit_gpus, scratch_);
    if (ok) resize(j, scratch_, 0);
  }
}

// The held GPUs of a run leave the allocated count and the busy, interference and checkpoint
// rates (a stop, or a resize before the new width is added back).
void Sim::release_rates(const Run& r) {
  alloc_gpus_ -= r.held;
  busy_rate_ -= r.held / (r.slow * r.ck);
  interf_rate_ -= r.held * (r.slow - 1) / (r.slow * r.ck);
  ckpt_rate_ -= r.held * (1 - 1 / r.ck);
}

void Sim::stop(int j, double t, int why) {
  Run& r = runs_[j];
  progress(j, t);
  ++r.version;
  release_rates(r);
  running_.erase(std::find(running_.begin(), running_.end(), j));
  unlink_nodes(j);
  placer_.release(r.gpu_ids);
  charge_usage(j, t);
  touched_.clear();
  if (o_.interference && r.solo.fabric_busy > 0) net_.remove(j, touched_);
  if (why == 0) {
    r.st = St::Done;
    r.out.end_s = t;
    r.out.jct_s = t - r.out.submit_s;
    r.out.solo_s = r.solo.units * r.base_unit_s;
    r.out.slowdown = r.run_time > 0 ? r.slow_time / r.run_time : 1;
  } else {
    // Back to the last checkpoint: work since it is lost; a restart costs restart time.
    const double done_s = r.done_units * r.solo.unit_s;
    const double kept_s = std::isfinite(r.tau_s) ? std::floor(done_s / r.tau_s) * r.tau_s : 0;
    const double lost_s = done_s - kept_s;
    r.done_units = kept_s / r.solo.unit_s;
    double restart = o_.restart_s;
    r.extra_units = restart / r.solo.unit_s;
    (why == 1 ? idle_.failures : idle_.preemption) += lost_s * r.held;
    if (why == 1) {
      ++r.out.restarts;
      idle_.failures += restart * r.held;  // spent holding the GPUs before work resumes
    } else {
      ++r.out.preemptions;
    }
    if (r.elastic) r.held = placer_.held_gpus(r.gpus);  // queued again for its minimum
    requeue(j);
  }
  r.slow = 1;
  refresh_interference(touched_);
}

bool Sim::try_start(int j) {
  Run& r = runs_[j];
  if (!placer_.fits_count(r.gpus)) return false;
  if (!placer_.place(r.gpus, r.gpu_ids)) return false;
  start(j);
  return true;
}

// EASY: the time the head could start if running jobs end at their estimates, and the units
// (nodes or GPUs) left over then.
double Sim::shadow(int head, double& extra) {
  candidates_.assign(running_.begin(), running_.end());
  auto end_est = [&](int j) {
    return std::max(now_ + 1e-9, runs_[j].start_t + runs_[j].est_s * runs_[j].ck);
  };
  std::sort(candidates_.begin(), candidates_.end(), [&](int a, int b) {
    const double ea = end_est(a), eb = end_est(b);
    return ea != eb ? ea < eb : a < b;
  });
  double free = placer_.free_units();
  const double need = placer_.units(runs_[head].gpus);
  for (int j : candidates_) {
    free += placer_.units(runs_[j].held);
    if (free >= need) {
      extra = free - need;
      return end_est(j);
    }
  }
  extra = 0;
  return kInf;  // waits for repairs
}

void Sim::conservative() {
  // Free-unit profile from running jobs' estimated ends; each queued job (up to the depth)
  // takes the earliest slot that fits for its estimate; those whose slot is now start.
  struct Step {
    double t;
    double free;
  };
  std::vector<Step> p;
  p.push_back({now_, static_cast<double>(placer_.free_units())});
  candidates_.assign(running_.begin(), running_.end());
  auto end_est = [&](int j) {
    return std::max(now_ + 1e-9, runs_[j].start_t + runs_[j].est_s * runs_[j].ck);
  };
  std::sort(candidates_.begin(), candidates_.end(),
            [&](int a, int b) { return end_est(a) < end_est(b); });
  for (int j : candidates_) p.push_back({end_est(j), p.back().free + placer_.units(runs_[j].held)});
  int scanned = 0;
  for (std::size_t qi = 0; qi < queue_.size() && scanned < o_.backfill_depth; ++scanned) {
    const int j = queue_[qi];
    const double need = placer_.units(runs_[j].gpus), dur = runs_[j].est_s;
    std::size_t s = 0;
    bool found = false;
    for (; s < p.size(); ++s) {
      bool ok = true;
      for (std::size_t k = s; k < p.size() && p[k].t < p[s].t + dur; ++k)
        if (p[k].free < need) {
          ok = false;
          break;
        }
      if (ok) {
        found = true;
        break;
      }
    }
    if (found && s == 0 && try_start(j)) {
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(qi));
    } else {
      ++qi;
    }
    if (!found) continue;
    // Reserve [t_s, t_s + dur): split the step at the end and subtract.
    const double t0 = p[s].t, t1 = t0 + dur;
    std::size_t k = s;
    for (; k < p.size() && p[k].t < t1; ++k) p[k].free -= need;
    if (k == p.size() || p[k].t > t1)
      p.insert(p.begin() + static_cast<std::ptrdiff_t>(k), {t1, p[k - 1].free + need});
  }
}

void Sim::pass() {
  schedule();
  if (o_.elastic) grow();
}

void Sim::schedule() {
  if (queue_.empty()) return;
  if (o_.scheduler == SchedulerKind::FairShare || o_.scheduler == SchedulerKind::Gang) {
    if (o_.scheduler == SchedulerKind::FairShare) {
      const double f = std::exp2(-(now_ - usage_t_) / o_.fair_share_half_life_s);
      for (double& u : usage_) u *= f;
      usage_t_ = now_;
    }
    std::stable_sort(queue_.begin(), queue_.end(), [&](int a, int b) {
      const double ka = order_key(a), kb = order_key(b);
      if (ka != kb) return ka < kb;
      return runs_[a].out.submit_s != runs_[b].out.submit_s
                 ? runs_[a].out.submit_s < runs_[b].out.submit_s
                 : a < b;
    });
  }
  if (o_.elastic) shrink_for_head();
  if (o_.scheduler == SchedulerKind::Conservative) return conservative();
  // Start heads while they fit.
  std::size_t qi = 0;
  while (qi < queue_.size() && try_start(queue_[qi])) ++qi;
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(qi));
  if (queue_.empty() || o_.scheduler == SchedulerKind::Fifo) return;
  const int head = queue_.front();
  if (o_.scheduler == SchedulerKind::Gang) {
    // Preempt lower-priority running jobs, lowest priority and latest started first.
    const int prio = jl_.jobs[head].priority;
    candidates_.clear();
    double freeable = placer_.free_units();
    for (int j : running_)
      if (jl_.jobs[j].priority < prio) {
        candidates_.push_back(j);
        freeable += placer_.units(runs_[j].held);
      }
    if (freeable >= placer_.units(runs_[head].gpus)) {
      std::sort(candidates_.begin(), candidates_.end(), [&](int a, int b) {
        if (jl_.jobs[a].priority != jl_.jobs[b].priority)
          return jl_.jobs[a].priority < jl_.jobs[b].priority;
        return runs_[a].start_t != runs_[b].start_t ? runs_[a].start_t > runs_[b].start_t : a > b;
      });
      for (int j : candidates_) {
        if (placer_.fits_count(runs_[head].gpus) &&
            placer_.place(runs_[head].gpus, runs_[head].gpu_ids))
          break;
        stop(j, now_, 2);
      }
      queue_.erase(std::find(queue_.begin(), queue_.end(), head));
      if (!try_start(head)) requeue(head);
      // What the preempted jobs left free goes to the next heads now, not at the next event.
      std::size_t k = 0;
      while (k < queue_.size() && try_start(queue_[k])) ++k;
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(k));
    }
    return;
  }
  // EASY backfill (also after fair-share ordering).
  double extra = 0;
  const double shadow_t = shadow(head, extra);
  int scanned = 0;
  for (std::size_t k = 1; k < queue_.size() && scanned < o_.backfill_depth; ++scanned) {
    const int j = queue_[k];
    const double units = placer_.units(runs_[j].gpus);
    const bool before = now_ + runs_[j].est_s * runs_[j].ck <= shadow_t;
    if ((before || units <= extra) && try_start(j)) {
      if (!before) extra -= units;
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      ++k;
    }
  }
}

ClusterResult Sim::run() {
  const auto wall0 = std::chrono::steady_clock::now();
  const int n = static_cast<int>(jl_.jobs.size());
  runs_.resize(n);
  usage_.assign(std::max(jl_.users.size(), jl_.teams.size()) + 1, 0.0);
  node_jobs_.assign(shape_.nodes, {});
  // Failure rate per node from the reliability profile, scaled by the cluster's counts.
  ClusterResult res;
  if (o_.failures) {
    FacilityInputs in;
    fill_cluster_inputs(in, c_);
    const ReliabilityProfile& p = reliability_profile(o_.reliability_profile);
    double rate = 0;  // per cluster-second
    for (const FailureClass& f : p.classes) {
      double units = 0;
      if (f.per == "gpu")
        units = in.gpus;
      else if (f.per == "node")
        units = in.nodes;
      else if (f.per == "nic")
        units = in.nics;
      else if (f.per == "link")
        units = in.network_links;
      else if (f.per == "switch") {
        // A switch failure stops every job on the nodes behind it (event kind 4), not one node.
        switch_rate_ += f.rate_per_unit_s * in.blocking_switches;
        continue;
      }
      rate += f.rate_per_unit_s * units;
    }
    node_rate_ = rate / std::max(1, shape_.nodes);
    if (switch_rate_ > 0) switch_domains_ = switch_failure_domains(c_);
    for (const auto& dom : switch_domains_)
      for (int node : dom)
        if (node < 0 || node >= shape_.nodes)
          throw InternalError("cluster: a switch failure domain names node " +
                              std::to_string(node) + " of " + std::to_string(shape_.nodes));
    if (o_.restart_s < 0) o_.restart_s = p.restart_s;
    if (switch_rate_ > 0)
      res.defaults.push_back(
          fmt::format("failures = profile {} ({:.2f} per node-year charged to nodes; {:.2f} switch "
                      "failures per year, each stopping every job behind the switch)",
                      p.id, node_rate_ * kYear, switch_rate_ * kYear));
    else
      res.defaults.push_back(
          fmt::format("failures = profile {} ({:.2f} per node-year, all classes charged to nodes)",
                      p.id, node_rate_ * kYear));
  }
  if (o_.restart_s < 0) o_.restart_s = 0;
  const int max_units = placer_.units(shape_.nodes * shape_.gpn);
  for (int j = 0; j < n; ++j) {
    const JobSpec& js = jl_.jobs[j];
    Run& r = runs_[j];
    r.elastic = o_.elastic && js.elastic() && js.work.workload < 0;
    r.gpus = r.elastic ? js.min_gpus : timer_.job_gpus(js);
    r.held = placer_.held_gpus(r.gpus);
    if (placer_.units(r.gpus) > max_units)
      throw InputError(
          jl_.file,
          js.line > 0 ? fmt::format("line {}", js.line) : fmt::format("jobs[id={}]", js.id),
          fmt::format("job {} asks for {} GPUs", js.id, r.gpus),
          fmt::format("at most the cluster's {} GPUs ({}); use a larger cluster (--set nodes=...)",
                      shape_.nodes * shape_.gpn, c_.name));
    r.out.id = js.id;
    r.out.user = js.user;
    r.out.team = js.team;
    r.out.gpus = r.elastic ? js.gpus : r.gpus;  // the size its work is stated for
    r.out.submit_s = js.submit_s;
    ev_.push({js.submit_s, 0, j, 0});
  }
  if (o_.failures && node_rate_ > 0)
    ev_.push({rng_.exponential(1 / (node_rate_ * shape_.nodes)), 2, 0, 0});
  if (o_.failures && switch_rate_ > 0 && !switch_domains_.empty())
    ev_.push({rng_.exponential(1 / switch_rate_), 4, 0, 0});
  int done = 0;
  while (!ev_.empty() && done < n) {
    const double t = ev_.top().t;
    advance(t);
    while (!ev_.empty() && ev_.top().t == t) {
      Event e = ev_.top();
      ev_.pop();
      if (e.kind == 0) {
        Run& r = runs_[e.a];
        // Estimate for backfill: the requested limit, else the solo runtime of a packed placement.
        if (jl_.jobs[e.a].walltime_s > 0) {
          r.est_s = jl_.jobs[e.a].walltime_s;
        } else {
          std::vector<int> canon(static_cast<std::size_t>(r.held));
          for (int g = 0; g < r.held; ++g) canon[g] = g;
          const SoloTime s = timer_.time(jl_.jobs[e.a], canon);
          r.est_s = s.units * s.unit_s;
        }
        if (r.elastic)
          r.est_s *= static_cast<double>(jl_.jobs[e.a].gpus) / r.gpus;  // at its minimum
        requeue(e.a);
      } else if (e.kind == 1) {
        Run& r = runs_[e.a];
        if (r.st != St::Running || e.version != r.version) continue;
        stop(e.a, t, 0);
        ++done;
        if (o_.progress)
          o_.progress(static_cast<std::uint64_t>(done), static_cast<std::uint64_t>(n));
      } else if (e.kind == 2) {
        const int node = static_cast<int>(rng_.below(static_cast<std::uint64_t>(shape_.nodes)));
        ev_.push({t + rng_.exponential(1 / (node_rate_ * shape_.nodes)), 2, 0, 0});
        if (placer_.down(node)) continue;
        ++failures_;
        scratch_ = node_jobs_[node];
        for (int j : scratch_) stop(j, t, 1);
        placer_.set_down(node, true);
        ev_.push({t + o_.repair_s, 3, node, 0});
      } else if (e.kind == 4) {
        // A switch that is some NICs' only attachment: every job on a node behind it stops, and
        // those nodes are out until the switch is repaired.
        const auto& dom =
            switch_domains_[rng_.below(static_cast<std::uint64_t>(switch_domains_.size()))];
        ev_.push({t + rng_.exponential(1 / switch_rate_), 4, 0, 0});
        ++failures_;
        std::vector<int> jobs;
        for (int node : dom)
          if (!placer_.down(node))
            jobs.insert(jobs.end(), node_jobs_[node].begin(), node_jobs_[node].end());
        std::sort(jobs.begin(), jobs.end());
        jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
        for (int j : jobs)
          if (runs_[j].st == St::Running) stop(j, t, 1);
        for (int node : dom)
          if (!placer_.down(node)) {
            placer_.set_down(node, true);
            ev_.push({t + o_.repair_s, 3, node, 0});
          }
      } else {
        placer_.set_down(e.a, false);
      }
    }
    pass();
  }
  if (done < n) throw InternalError("cluster: the event queue ran dry with jobs left");
  // Results.
  res.cluster = c_.name;
  res.scheduler = to_string(o_.scheduler);
  res.placement = to_string(o_.placement);
  res.alloc = to_string(o_.alloc);
  res.engine = o_.engine;
  res.trace = jl_.file;
  res.gpus = shape_.nodes * shape_.gpn;
  res.nodes = shape_.nodes;
  res.jobs = n;
  res.completed = done;
  res.makespan_s = now_;
  res.gpu_hours = res.gpus * now_ / kHour;
  std::vector<double> waits, jcts, slows;
  std::vector<std::vector<double>> uw(jl_.users.size()), uj(jl_.users.size());
  res.users.resize(jl_.users.size());
  for (auto& r : runs_) {
    res.outcomes.push_back(r.out);
    waits.push_back(r.out.wait_s);
    jcts.push_back(r.out.jct_s);
    slows.push_back(r.out.slowdown);
    res.useful_gpu_hours += r.out.solo_s * r.out.gpus / kHour;
    res.restarts += r.out.restarts;
    res.preemptions += r.out.preemptions;
    res.resizes += r.out.resizes;
    UserSummary& u = res.users[r.out.user];
    ++u.jobs;
    u.gpu_hours += r.out.solo_s * r.out.gpus / kHour;
    uw[r.out.user].push_back(r.out.wait_s);
    uj[r.out.user].push_back(r.out.jct_s);
  }
  for (std::size_t u = 0; u < res.users.size(); ++u) {
    res.users[u].name = jl_.users[u];
    res.users[u].wait_s = percentiles(uw[u]);
    res.users[u].jct_s = percentiles(uj[u]);
  }
  res.wait_s = percentiles(waits);
  res.jct_s = percentiles(jcts);
  res.slowdown = percentiles(slows);
  double alloc_s = 0;
  for (double a : hour_alloc_) alloc_s += a;
  res.allocated_gpu_hours = alloc_s / kHour;
  res.allocated_utilization = res.gpu_hours > 0 ? res.allocated_gpu_hours / res.gpu_hours : 0;
  res.busy_utilization = res.gpu_hours > 0 ? res.useful_gpu_hours / res.gpu_hours : 0;
  res.goodput = res.allocated_gpu_hours > 0 ? res.useful_gpu_hours / res.allocated_gpu_hours : 0;
  res.idle = idle_;
  for (double* x : {&res.idle.fragmentation, &res.idle.head_blocking, &res.idle.no_demand,
                    &res.idle.failures, &res.idle.preemption, &res.idle.interference})
    *x /= kHour;
  res.failures = failures_;
  // Timeline: hours folded into timeline_points buckets.
  const std::size_t H = hour_alloc_.size();
  const std::size_t P = std::max<std::size_t>(
      1, std::min<std::size_t>(static_cast<std::size_t>(o_.timeline_points), H));
  for (std::size_t b = 0; b < P; ++b) {
    const std::size_t h0 = b * H / P, h1 = (b + 1) * H / P;
    double a = 0, u = 0, span = 0;
    for (std::size_t h = h0; h < h1; ++h) {
      a += hour_alloc_[h];
      u += hour_busy_[h];
      span += std::min(kHour, now_ - static_cast<double>(h) * kHour);
    }
    UtilPoint pt;
    pt.t_s = static_cast<double>(h0) * kHour;
    pt.allocated = span > 0 ? a / (span * res.gpus) : 0;
    pt.busy = span > 0 ? u / (span * res.gpus) : 0;
    res.timeline.push_back(pt);
  }
  // Energy and cost over the makespan (facility inputs of the cluster file).
  {
    FacilityInputs in;
    fill_cluster_inputs(in, c_);
    const double busy_W = in.gpu.cap_W(), idle_W = in.gpu.idle_W;
    const double gpu_J = res.allocated_gpu_hours * kHour * busy_W +
                         (res.gpu_hours - res.allocated_gpu_hours) * kHour * idle_W;
    const double rest_J =
        (in.node_overhead_W * shape_.nodes + in.network_power_W + in.storage_power_W) * now_;
    res.energy_J = (gpu_J + rest_J) * in.pue;
    res.energy_cost_usd = res.energy_J * in.electricity_usd_per_J;
    const double servers =
        in.node_price_usd > 0 ? in.node_price_usd * shape_.nodes : in.gpu_price_usd * res.gpus;
    const FacilityOptions fo;
    const double capex = servers + in.network_capex_usd + in.storage_capex_usd;
    res.cost_usd = capex / (fo.hardware_life_years * kYear) * now_ + res.energy_cost_usd;
    res.defaults.push_back(fmt::format(
        "energy = allocated GPUs at their power cap {:.0f} W, free GPUs at idle {:.0f} W, "
        "node overhead and network always on, PUE {:.2f}",
        busy_W, idle_W, in.pue));
    res.defaults.push_back(
        fmt::format("cost = capex ${:.3g} over {:.0f} years, pro rata, + electricity", capex,
                    fo.hardware_life_years));
  }
  res.defaults.push_back(
      fmt::format("repair = {:.1f} h per failed node (estimate)", o_.repair_s / kHour));
  res.defaults.push_back(fmt::format(
      "checkpoint = {:.0f} s per write, every {} (restart {:.0f} s)", o_.checkpoint_write_s,
      o_.checkpoint_interval_s > 0 ? fmt::format("{:.0f} s", o_.checkpoint_interval_s)
                                   : std::string("Young's sqrt(2 C M) per job"),
      o_.restart_s));
  res.defaults.push_back("backfill estimate = requested time limit, else the solo runtime");
  res.defaults.push_back(fmt::format(
      "backfill depth = {} jobs per pass (Slurm bf_max_job_test default)", o_.backfill_depth));
  if (o_.elastic)
    res.defaults.push_back(
        "elastic = jobs with a GPU range start at their minimum, grow into GPUs left free after "
        "each "
        "pass, shrink for a queue head that would then fit; throughput linear in GPUs (work "
        "conserved)");
  if (o_.scheduler == SchedulerKind::FairShare)
    res.defaults.push_back(fmt::format("fair share by {}, half-life {:.1f} days",
                                       o_.fair_share_by_team ? "team" : "user",
                                       o_.fair_share_half_life_s / kDay));
  res.runtime_cache_entries = timer_.cache_entries();
  res.wall_runtime_s = timer_.wall_s();
  res.wall_total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return res;
}

}  // namespace

ClusterResult simulate_cluster(const Cluster& c, const JobList& jobs, const ClusterSimOptions& o) {
  if (o.backfill_depth < 1)
    throw InputError("--backfill-depth", "backfill-depth", std::to_string(o.backfill_depth),
                     ">= 1");
  if (o.timeline_points < 1)
    throw InputError("--timeline-points", "timeline-points", std::to_string(o.timeline_points),
                     ">= 1");
  Sim s(c, jobs, o);
  return s.run();
}

}  // namespace tutti
