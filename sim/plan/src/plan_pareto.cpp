// Pareto frontier, objective ranking, exact merge of slice results and their byte form.
// Everything here is order-independent by construction (ties broken by the global index), which
// is what makes 1, 2 or N MPI ranks return the same answer byte for byte.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "plan_internal.hpp"
#include "tutti/core/error.hpp"

namespace tutti {

static_assert(std::is_trivially_copyable_v<Evaluation>, "Evaluation travels as raw bytes");

namespace {

bool same_metrics(const Evaluation& a, const Evaluation& b) {
  return a.time_to_train_s == b.time_to_train_s && a.total_cost_usd == b.total_cost_usd &&
         a.energy_J == b.energy_J;
}

}  // namespace

bool dominates(const Evaluation& a, const Evaluation& b) {
  bool le = a.time_to_train_s <= b.time_to_train_s && a.total_cost_usd <= b.total_cost_usd &&
            a.energy_J <= b.energy_J;
  return le && !same_metrics(a, b);
}

bool beats(const Evaluation& a, const Evaluation& b) {
  return dominates(a, b) || (same_metrics(a, b) && a.index < b.index);
}

bool better_for(Objective o, const Evaluation& a, const Evaluation& b) {
  auto key = [o](const Evaluation& e) {
    switch (o) {
      case Objective::Cost:
        return std::array<double, 3>{e.total_cost_usd, e.time_to_train_s, e.energy_J};
      case Objective::Time:
        return std::array<double, 3>{e.time_to_train_s, e.total_cost_usd, e.energy_J};
      case Objective::Energy:
        return std::array<double, 3>{e.energy_J, e.time_to_train_s, e.total_cost_usd};
    }
    return std::array<double, 3>{};
  };
  auto ka = key(a), kb = key(b);
  if (ka != kb) return ka < kb;
  return a.index < b.index;
}

bool nearer_miss(const Evaluation& a, const Evaluation& b) {
  bool am = (a.violations & kMemory) != 0, bm = (b.violations & kMemory) != 0;
  if (am != bm) return !am;
  if (a.violation != b.violation) return a.violation < b.violation;
  return a.index < b.index;
}

void pareto_insert(std::vector<Evaluation>& front, const Evaluation& e) {
  for (const auto& f : front)
    if (beats(f, e)) return;
  std::erase_if(front, [&](const Evaluation& f) { return beats(e, f); });
  front.push_back(e);
}

void best_insert(std::vector<Evaluation>& best, const Evaluation& e, Objective o, int k) {
  k = std::max(k, 1);
  if (static_cast<int>(best.size()) == k && !better_for(o, e, best.back())) return;
  auto it = std::upper_bound(
      best.begin(), best.end(), e,
      [o](const Evaluation& x, const Evaluation& y) { return better_for(o, x, y); });
  best.insert(it, e);
  if (static_cast<int>(best.size()) > k) best.pop_back();
}

void group_insert(std::vector<Evaluation>& best, const Evaluation& e, Objective o, bool by_gpu) {
  const auto group = [by_gpu](const Evaluation& x) {
    return by_gpu ? x.gpu_group : x.fabric_group;
  };
  for (auto& b : best)
    if (group(b) == group(e)) {
      if (better_for(o, e, b)) b = e;
      return;
    }
  auto it = std::lower_bound(
      best.begin(), best.end(), e,
      [&](const Evaluation& x, const Evaluation& y) { return group(x) < group(y); });
  best.insert(it, e);
}

void note_min(double& slot, double v) {
  if (v > 0 && (slot == 0 || v < slot)) slot = v;
}

ScreenResult merge(const std::vector<ScreenResult>& parts, Objective objective, int finalists) {
  ScreenResult m;
  for (const auto& p : parts) {
    m.configurations += p.configurations;
    m.simulated += p.simulated;
    m.pruned += p.pruned;
    m.invalid += p.invalid;
    m.unbuildable.insert(m.unbuildable.end(), p.unbuildable.begin(), p.unbuildable.end());
    m.feasible += p.feasible;
    for (int i = 0; i < kNumViolations; ++i) m.violated[i] += p.violated[i];
    for (const auto& e : p.pareto) pareto_insert(m.pareto, e);
    for (const auto& e : p.best) best_insert(m.best, e, objective, finalists);
    for (const auto& e : p.best_per_gpu) group_insert(m.best_per_gpu, e, objective, true);
    for (const auto& e : p.best_per_fabric) group_insert(m.best_per_fabric, e, objective, false);
    for (const auto& e : p.nearest)
      if (m.nearest.empty() || nearer_miss(e, m.nearest[0])) m.nearest = {e};
    note_min(m.min_time_to_train_s, p.min_time_to_train_s);
    note_min(m.min_capex_usd, p.min_capex_usd);
    note_min(m.min_total_cost_usd, p.min_total_cost_usd);
    note_min(m.min_peak_facility_power_W, p.min_peak_facility_power_W);
  }
  std::sort(m.pareto.begin(), m.pareto.end(),
            [](const Evaluation& a, const Evaluation& b) { return a.index < b.index; });
  std::sort(m.unbuildable.begin(), m.unbuildable.end());
  m.unbuildable.erase(std::unique(m.unbuildable.begin(), m.unbuildable.end()), m.unbuildable.end());
  return m;
}

namespace {

template <class T>
void put(std::string& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <class T>
T get(const std::string& in, std::size_t& pos) {
  if (pos + sizeof(T) > in.size()) throw InternalError("plan: truncated slice result");
  T v;
  std::memcpy(&v, in.data() + pos, sizeof(T));
  pos += sizeof(T);
  return v;
}

void put_list(std::string& out, const std::vector<Evaluation>& v) {
  put(out, static_cast<std::uint64_t>(v.size()));
  for (const auto& e : v) put(out, e);
}

std::vector<Evaluation> get_list(const std::string& in, std::size_t& pos) {
  auto n = get<std::uint64_t>(in, pos);
  std::vector<Evaluation> v;
  v.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) v.push_back(get<Evaluation>(in, pos));
  return v;
}

constexpr std::uint32_t kMagic = 0x7475504c;  // "tuPL"

}  // namespace

std::string serialize(const ScreenResult& r) {
  std::string out;
  put(out, kMagic);
  put(out, r.configurations);
  put(out, r.simulated);
  put(out, r.pruned);
  put(out, r.invalid);
  put(out, r.feasible);
  put(out, r.violated);
  put_list(out, r.pareto);
  put_list(out, r.best);
  put_list(out, r.nearest);
  put_list(out, r.best_per_gpu);
  put_list(out, r.best_per_fabric);
  put(out, static_cast<std::uint64_t>(r.unbuildable.size()));
  for (auto h : r.unbuildable) put(out, h);
  put(out, r.min_time_to_train_s);
  put(out, r.min_capex_usd);
  put(out, r.min_total_cost_usd);
  put(out, r.min_peak_facility_power_W);
  return out;
}

ScreenResult deserialize(const std::string& in) {
  std::size_t pos = 0;
  if (get<std::uint32_t>(in, pos) != kMagic) throw InternalError("plan: bad slice result");
  ScreenResult r;
  r.configurations = get<std::uint64_t>(in, pos);
  r.simulated = get<std::uint64_t>(in, pos);
  r.pruned = get<std::uint64_t>(in, pos);
  r.invalid = get<std::uint64_t>(in, pos);
  r.feasible = get<std::uint64_t>(in, pos);
  r.violated = get<std::array<std::uint64_t, kNumViolations>>(in, pos);
  r.pareto = get_list(in, pos);
  r.best = get_list(in, pos);
  r.nearest = get_list(in, pos);
  r.best_per_gpu = get_list(in, pos);
  r.best_per_fabric = get_list(in, pos);
  auto nu = get<std::uint64_t>(in, pos);
  for (std::uint64_t i = 0; i < nu; ++i) r.unbuildable.push_back(get<std::uint32_t>(in, pos));
  r.min_time_to_train_s = get<double>(in, pos);
  r.min_capex_usd = get<double>(in, pos);
  r.min_total_cost_usd = get<double>(in, pos);
  r.min_peak_facility_power_W = get<double>(in, pos);
  if (pos != in.size()) throw InternalError("plan: trailing bytes in slice result");
  return r;
}

}  // namespace tutti
