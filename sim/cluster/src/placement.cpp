// Placement policies over per-node free masks. Node ids, GPU ids and tie-breaks are all
// index-ordered, so a placement is a function of the state alone (deterministic).
#include "placement.hpp"

#include <algorithm>
#include <bit>
#include <map>

#include "tutti/core/error.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::cluster_detail {

Shape cluster_shape(const Cluster& c) {
  Shape s;
  const Topology& t = *c.topology;
  s.gpn = t.gpus_per_node();
  s.nodes = t.num_nodes();
  if (s.gpn > 64)
    throw InputError(c.file, "gpus_per_node", std::to_string(s.gpn), "<= 64 for tutti cluster");
  s.domain_nodes = std::max(1, t.domain_gpus() / s.gpn);
  s.domain_of.resize(s.nodes);
  s.domains = (s.nodes + s.domain_nodes - 1) / s.domain_nodes;
  s.domain_nodes_list.assign(s.domains, {});
  for (int n = 0; n < s.nodes; ++n) {
    s.domain_of[n] = n / s.domain_nodes;
    s.domain_nodes_list[s.domain_of[n]].push_back(n);
  }
  // Leaf group: the switch the first fabric (access) link of a route from the node's GPU 0 enters.
  s.group_of.assign(s.nodes, 0);
  std::map<std::uint32_t, int> ids;
  std::vector<std::uint32_t> path;
  for (int n = 0; n < s.nodes && s.nodes > 1; ++n) {
    const int src = n * s.gpn, dst = ((n + s.domain_nodes) % s.nodes) * s.gpn;
    std::uint32_t leaf = 0xffffffffu;
    if (src != dst) {
      t.route(src, dst, 0, path);
      for (std::uint32_t l : path)
        if (t.links()[l].tier == Tier::Access) {
          leaf = t.links()[l].dst;
          break;
        }
    }
    auto it = ids.emplace(leaf, static_cast<int>(ids.size())).first;
    s.group_of[n] = it->second;
  }
  s.groups = std::max<int>(1, static_cast<int>(ids.size()));
  s.group_nodes.assign(s.groups, {});
  for (int n = 0; n < s.nodes; ++n) s.group_nodes[s.group_of[n]].push_back(n);
  return s;
}

Placer::Placer(const Shape& s, AllocUnit alloc, PlacementKind kind)
    : s_(s), alloc_(alloc), kind_(kind) {
  const std::uint64_t all = s.gpn == 64 ? ~0ull : ((1ull << s.gpn) - 1);
  mask_.assign(s.nodes, all);
  free_.assign(s.nodes, s.gpn);
  down_.assign(s.nodes, 0);
  group_full_.assign(s.groups, 0);
  domain_full_.assign(s.domains, 0);
  for (int n = 0; n < s.nodes; ++n) {
    ++group_full_[s.group_of[n]];
    ++domain_full_[s.domain_of[n]];
  }
  free_total_ = s.nodes * s.gpn;
  full_total_ = s.nodes;
}

int Placer::units(int gpus) const {
  return alloc_ == AllocUnit::Node ? (gpus + s_.gpn - 1) / s_.gpn : gpus;
}
int Placer::held_gpus(int gpus) const {
  return alloc_ == AllocUnit::Node ? units(gpus) * s_.gpn : gpus;
}

bool Placer::fits_count(int gpus) const {
  if (alloc_ == AllocUnit::Node) return units(gpus) <= full_total_;
  if (gpus > free_total_) return false;
  return gpus / s_.gpn <= full_total_;
}

void Placer::add_node_gpus(int node, int count, std::vector<int>& out) const {
  std::uint64_t m = mask_[node];
  for (int k = 0; k < count; ++k) {
    const int b = std::countr_zero(m);
    out.push_back(node * s_.gpn + b);
    m &= m - 1;
  }
}

// Chooses `n` fully free nodes by the policy into nodes_out (ascending within a group).
bool Placer::take_nodes(int n, std::vector<int>& out) {
  out.clear();
  if (n == 0) return true;
  if (n > full_total_) return false;
  if (kind_ == PlacementKind::Packed) {
    for (int k = 0; k < s_.nodes && static_cast<int>(out.size()) < n; ++k)
      if (full(k)) out.push_back(k);
    return static_cast<int>(out.size()) == n;
  }
  if (kind_ == PlacementKind::Spread) {
    // Round-robin over groups, emptiest group first.
    auto& order = scratch_order_;
    order.clear();
    for (int g = 0; g < s_.groups; ++g)
      if (group_full_[g] > 0) order.push_back(g);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return group_full_[a] > group_full_[b]; });
    std::vector<std::size_t> cursor(order.size(), 0);  // small: groups
    while (static_cast<int>(out.size()) < n) {
      bool any = false;
      for (std::size_t i = 0; i < order.size() && static_cast<int>(out.size()) < n; ++i) {
        const auto& nodes = s_.group_nodes[order[i]];
        while (cursor[i] < nodes.size() && !full(nodes[cursor[i]])) ++cursor[i];
        if (cursor[i] < nodes.size()) {
          out.push_back(nodes[cursor[i]++]);
          any = true;
        }
      }
      if (!any) break;
    }
    return static_cast<int>(out.size()) == n;
  }
  // Topology-aware: best-fit NVLink domain, else best-fit leaf group, else fewest groups.
  auto take_from = [&](const std::vector<int>& nodes, int want) {
    for (int k : nodes) {
      if (want == 0) break;
      if (full(k)) {
        out.push_back(k);
        --want;
      }
    }
  };
  if (s_.domain_nodes > 1 && n <= s_.domain_nodes) {
    int best = -1;
    for (int d = 0; d < s_.domains; ++d)
      if (domain_full_[d] >= n && (best < 0 || domain_full_[d] < domain_full_[best])) best = d;
    if (best >= 0) {
      take_from(s_.domain_nodes_list[best], n);
      return true;
    }
  }
  int best = -1;
  for (int g = 0; g < s_.groups; ++g)
    if (group_full_[g] >= n && (best < 0 || group_full_[g] < group_full_[best])) best = g;
  if (best >= 0) {
    take_from(s_.group_nodes[best], n);
    return true;
  }
  auto& order = scratch_order_;
  order.clear();
  for (int g = 0; g < s_.groups; ++g)
    if (group_full_[g] > 0) order.push_back(g);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return group_full_[a] > group_full_[b]; });
  for (int g : order) {
    if (static_cast<int>(out.size()) == n) break;
    take_from(s_.group_nodes[g], n - static_cast<int>(out.size()));
  }
  return static_cast<int>(out.size()) == n;
}

// A node (not in `exclude`) with >= g free GPUs but not fully free first, by the policy.
int Placer::pick_partial(int g, const std::vector<int>& exclude) const {
  int best = -1;
  for (int k = 0; k < s_.nodes; ++k) {
    if (down_[k] || free_[k] < g) continue;
    if (std::find(exclude.begin(), exclude.end(), k) != exclude.end()) continue;
    if (kind_ == PlacementKind::Packed) return k;
    if (best < 0) {
      best = k;
      continue;
    }
    if (kind_ == PlacementKind::Spread ? free_[k] > free_[best] : free_[k] < free_[best]) best = k;
  }
  return best;
}

bool Placer::place(int gpus, std::vector<int>& out) {
  out.clear();
  if (!fits_count(gpus)) return false;
  if (alloc_ == AllocUnit::Node) {
    if (!take_nodes(units(gpus), scratch_nodes_)) return false;
    for (int k : scratch_nodes_) add_node_gpus(k, s_.gpn, out);
    return true;
  }
  const int whole = gpus / s_.gpn, rest = gpus % s_.gpn;
  if (!take_nodes(whole, scratch_nodes_)) return false;
  for (int k : scratch_nodes_) add_node_gpus(k, s_.gpn, out);
  if (rest > 0) {
    const int k = pick_partial(rest, scratch_nodes_);
    if (k < 0) return false;
    add_node_gpus(k, rest, out);
  }
  return true;
}

bool Placer::take_any(int gpus, const std::vector<int>& near, std::vector<int>& out) {
  out.clear();
  if (gpus > free_total_) return false;
  seen_.assign(static_cast<std::size_t>(s_.nodes), 0);
  auto take = [&](int n) {
    if (seen_[n] || down_[n] || free_[n] == 0 || static_cast<int>(out.size()) >= gpus) return;
    seen_[n] = 1;
    add_node_gpus(n, std::min(free_[n], gpus - static_cast<int>(out.size())), out);
  };
  for (int g : near) take(g / s_.gpn);
  for (int n = 0; n < s_.nodes; ++n) take(n);
  return static_cast<int>(out.size()) == gpus;
}

void Placer::commit(const std::vector<int>& gpus) {
  for (int g : gpus) {
    const int n = g / s_.gpn;
    const std::uint64_t bit = 1ull << (g % s_.gpn);
    check_internal((mask_[n] & bit) != 0, "cluster: GPU allocated twice");
    if (free_[n] == s_.gpn && !down_[n]) {
      --full_total_;
      --group_full_[s_.group_of[n]];
      --domain_full_[s_.domain_of[n]];
    }
    mask_[n] &= ~bit;
    --free_[n];
    if (!down_[n]) --free_total_;
  }
}

void Placer::release(const std::vector<int>& gpus) {
  for (int g : gpus) {
    const int n = g / s_.gpn;
    const std::uint64_t bit = 1ull << (g % s_.gpn);
    check_internal((mask_[n] & bit) == 0, "cluster: GPU released twice");
    mask_[n] |= bit;
    ++free_[n];
    if (!down_[n]) ++free_total_;
    if (free_[n] == s_.gpn && !down_[n]) {
      ++full_total_;
      ++group_full_[s_.group_of[n]];
      ++domain_full_[s_.domain_of[n]];
    }
  }
}

void Placer::set_down(int n, bool d) {
  if (static_cast<bool>(down_[n]) == d) return;
  const bool was_full = full(n);
  if (d) {
    free_total_ -= free_[n];
    ++down_total_;
  } else {
    free_total_ += free_[n];
    --down_total_;
  }
  down_[n] = d;
  const bool now_full = full(n);
  if (was_full != now_full) {
    const int delta = now_full ? 1 : -1;
    full_total_ += delta;
    group_full_[s_.group_of[n]] += delta;
    domain_full_[s_.domain_of[n]] += delta;
  }
}

}  // namespace tutti::cluster_detail
