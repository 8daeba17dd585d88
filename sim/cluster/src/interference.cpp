// Water-filling per link; see interference.hpp for the model and its limits.
#include "interference.hpp"

#include <algorithm>
#include <map>

#include "placement.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/topology.hpp"

namespace tutti::cluster_detail {

LinkShare::LinkShare(const Topology& t, const Shape& s) : t_(t), s_(s), links_(t.links().size()) {}

static bool fabric_tier(Tier t) {
  return t != Tier::NVLink && t != Tier::PCIe && t != Tier::Access;
}

void LinkShare::add(int j, const std::vector<int>& gpus, double demand, std::vector<int>& touched) {
  if (static_cast<std::size_t>(j) >= jobs_.size()) jobs_.resize(static_cast<std::size_t>(j) + 1);
  JobState& js = jobs_[j];
  js.links.clear();
  js.demand = demand;
  js.active = true;
  // Nodes in placement order, each with its GPUs; a ring over nodes on each rail.
  std::map<int, std::vector<int>> by_node;  // per start of a multi-node job only
  std::vector<int> order;
  for (int g : gpus) {
    const int n = g / s_.gpn;
    if (by_node.find(n) == by_node.end()) order.push_back(n);
    by_node[n].push_back(g % s_.gpn);
  }
  if (order.size() < 2) return;
  // Every fabric link the job's flows cross, with repeats (one entry per flow), then counted.
  hops_.clear();
  for (std::size_t k = 0; k < order.size(); ++k) {
    const int a = order[k], b = order[(k + 1) % order.size()];
    const auto& ga = by_node[a];
    const auto& gb = by_node[b];
    for (std::size_t r = 0; r < ga.size() && r < gb.size(); ++r) {
      const int src = a * s_.gpn + ga[r], dst = b * s_.gpn + gb[r];
      t_.route(src, dst, flow_hash(1, src, dst), path_);
      for (std::uint32_t l : path_)
        if (fabric_tier(t_.links()[l].tier)) hops_.push_back(l);
    }
  }
  std::sort(hops_.begin(), hops_.end());
  touched.push_back(j);
  for (std::size_t a = 0; a < hops_.size();) {
    std::size_t b = a;
    while (b < hops_.size() && hops_[b] == hops_[a]) ++b;
    const std::uint32_t l = hops_[a];
    const int f = static_cast<int>(b - a);
    a = b;
    js.links.emplace_back(l, f);
    links_[l].users.push_back({j, f});
    links_[l].total += f * demand;
    // Only a link whose water level moved changes anyone's share.
    if (solve(l))
      for (const Use& u : links_[l].users) touched.push_back(u.job);
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
}

void LinkShare::remove(int j, std::vector<int>& touched) {
  if (static_cast<std::size_t>(j) >= jobs_.size() || !jobs_[j].active) return;
  JobState& js = jobs_[j];
  for (auto [l, f] : js.links) {
    auto& us = links_[l].users;
    us.erase(std::find_if(us.begin(), us.end(), [&](const Use& u) { return u.job == j; }));
    links_[l].total = 0;  // re-summed (no drift from repeated add/subtract)
    for (const Use& u : us) links_[l].total += u.flows * jobs_[u.job].demand;
    if (solve(l))
      for (const Use& u : us) touched.push_back(u.job);
  }
  js.links.clear();
  js.active = false;
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
}

bool LinkShare::solve(std::uint32_t l) {
  LinkState& ls = links_[l];
  const double before = ls.level;
  ls.level = water_level(l);
  return ls.level != before;
}

double LinkShare::water_level(std::uint32_t l) {
  LinkState& ls = links_[l];
  // Capacity in cables: a link standing for a bundle (adaptive/spray, Topology::link_bundle) has
  // the bundle's.
  const double cables = t_.link_bundle(l);
  if (ls.total <= cables) return 1e300;
  sort_.assign(ls.users.begin(), ls.users.end());
  std::sort(sort_.begin(), sort_.end(), [&](const Use& a, const Use& b) {
    return jobs_[a.job].demand != jobs_[b.job].demand ? jobs_[a.job].demand < jobs_[b.job].demand
                                                      : a.job < b.job;
  });
  double cap = cables;
  double flows = 0;
  for (const Use& u : sort_) flows += u.flows;
  for (const Use& u : sort_) {
    const double level = cap / flows;
    if (jobs_[u.job].demand <= level) {
      cap -= u.flows * jobs_[u.job].demand;
      flows -= u.flows;
    } else {
      return level;
    }
  }
  return 1e300;
}

double LinkShare::stretch(int j) const {
  if (static_cast<std::size_t>(j) >= jobs_.size() || !jobs_[j].active) return 1;
  const JobState& js = jobs_[j];
  double s = 1;
  for (auto [l, f] : js.links) {
    const double alone = std::min(js.demand, t_.link_bundle(l) / f);
    const double shared = std::min(js.demand, links_[l].level);
    if (shared > 0) s = std::max(s, alone / shared);
  }
  return s;
}

int LinkShare::groups_spanned(const std::vector<int>& gpus, int& domains) const {
  std::vector<char> g(static_cast<std::size_t>(s_.groups), 0),
      d(static_cast<std::size_t>(s_.domains), 0);
  int ng = 0;
  domains = 0;
  for (int x : gpus) {
    const int n = x / s_.gpn;
    if (!g[s_.group_of[n]]) g[s_.group_of[n]] = 1, ++ng;
    if (!d[s_.domain_of[n]]) d[s_.domain_of[n]] = 1, ++domains;
  }
  return ng;
}

}  // namespace tutti::cluster_detail
