#include "tutti/sim/network.hpp"

#include <algorithm>
#include <cmath>

#include "tutti/core/error.hpp"
#include "tutti/sim/slots.hpp"

namespace tutti {

FlowNetwork::FlowNetwork(const Topology& topo, const CalibrationProfile& profile) {
  const auto& links = topo.links();
  cap_.resize(links.size());
  lat_.resize(links.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    const TierModel& tm = profile.tier(links[i].tier);
    cap_[i] = links[i].bandwidth_Bps * tm.bandwidth_efficiency;
    lat_[i] = links[i].latency_s + tm.extra_latency_s;
  }
  link_bytes_.assign(cap_.size(), 0.0);
  link_flows_.resize(cap_.size());
  link_mark_.assign(cap_.size(), 0);
  link_cnt_.assign(cap_.size(), 0);
  link_ver_.assign(cap_.size(), 0);
  link_rem_.assign(cap_.size(), 0.0);
  link_pos_.assign(cap_.size(), 0);
  link_n_.assign(cap_.size(), 0);
}

FlowNetwork::FlowNetwork(std::vector<double> capacity_Bps, std::vector<double> latency_s)
    : cap_(std::move(capacity_Bps)), lat_(std::move(latency_s)) {
  check_internal(cap_.size() == lat_.size(), "FlowNetwork: capacity/latency size mismatch");
  link_bytes_.assign(cap_.size(), 0.0);
  link_flows_.resize(cap_.size());
  link_mark_.assign(cap_.size(), 0);
  link_cnt_.assign(cap_.size(), 0);
  link_ver_.assign(cap_.size(), 0);
  link_rem_.assign(cap_.size(), 0.0);
  link_pos_.assign(cap_.size(), 0);
  link_n_.assign(cap_.size(), 0);
}

double FlowNetwork::path_latency_s(const std::uint32_t* links, std::size_t n) const {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += lat_[links[i]];
  return s;
}

FlowNetwork::SetId FlowNetwork::open_set(std::uint64_t tag) {
  const SetId id = take_slot(sets_, free_sets_);
  Set& s = sets_[id];
  s.tag = tag;
  s.pending = 0;
  s.flows.clear();
  s.open = true;
  s.started = false;
  return id;
}

void FlowNetwork::add_flow(SetId set, const std::uint32_t* links, std::size_t n, double bytes,
                           double latency_scale) {
  Set& s = sets_[set];
  check_internal(s.open && !s.started, "FlowNetwork::add_flow on a started set");
  const std::uint32_t f = take_slot(flows_, free_flows_);
  Flow& fl = flows_[f];
  if (n > fl.hop_cap) {  // a slot keeps its hop block; a longer path gets a new one
    fl.off = static_cast<std::uint32_t>(hop_link_.size());
    fl.hop_cap = static_cast<std::uint32_t>(n);
    hop_link_.resize(hop_link_.size() + n);
    hop_pos_.resize(hop_pos_.size() + n);
  }
  fl.n = static_cast<std::uint32_t>(n);
  std::copy(links, links + n, hop_link_.begin() + fl.off);
  fl.remaining = std::max(0.0, bytes);
  fl.rate = 0;
  fl.t_ref = 0;
  fl.t_fin = kNever;
  fl.set = set;
  fl.state = 1;
  fl.frozen = false;
  // t_fin temporarily holds the latency until start_set.
  fl.t_ref = latency_scale * path_latency_s(links, n);
  for (std::size_t i = 0; i < n; ++i) link_bytes_[links[i]] += bytes;
  s.flows.push_back(f);
  ++s.pending;
}

void FlowNetwork::start_set(SetId set, double now) {
  Set& s = sets_[set];
  check_internal(s.open && !s.started, "FlowNetwork::start_set twice");
  s.started = true;
  if (s.pending == 0) {
    empty_done_.push_back(s.tag);
    s.open = false;
    free_sets_.push_back(set);
    return;
  }
  for (std::uint32_t f : s.flows) {
    Flow& fl = flows_[f];
    double t_act = now + fl.t_ref;
    fl.t_ref = t_act;
    activations_.push({t_act, f, fl.version});
  }
}

double FlowNetwork::next_event_time() {
  if (!empty_done_.empty()) return now_;
  double t = kNever;
  if (!activations_.empty()) t = activations_.top().t;
  if (!cheap_.empty()) t = std::min(t, flows_[cheap_[0]].t_fin);
  return t;
}

void FlowNetwork::activate(std::uint32_t f) {
  Flow& fl = flows_[f];
  fl.state = 2;
  ++n_active_;
  fl.fresh = true;
  fresh_.push_back(f);
  for (std::uint32_t h = fl.off; h < fl.off + fl.n; ++h) {
    std::uint32_t l = hop_link_[h];
    hop_pos_[h] = static_cast<std::uint32_t>(link_flows_[l].size());
    link_flows_[l].push_back({f, h});
    ++link_n_[l];
    dirty_links_.push_back(l);
  }
}

void FlowNetwork::detach(std::uint32_t f) {
  Flow& fl = flows_[f];
  for (std::uint32_t h = fl.off; h < fl.off + fl.n; ++h) {
    std::uint32_t l = hop_link_[h];
    auto& v = link_flows_[l];
    std::uint32_t i = hop_pos_[h];
    LinkEntry last = v.back();
    v[i] = last;
    hop_pos_[last.hop] = i;
    v.pop_back();
    --link_n_[l];
    dirty_links_.push_back(l);
  }
  --n_active_;
}

void FlowNetwork::finish(std::uint32_t f, std::vector<std::uint64_t>& completed) {
  Flow& fl = flows_[f];
  if (fl.hpos != kNoPos) heap_remove(f);
  if (fl.state == 2) {
    detach(f);
    resolve_floor_ = std::min(resolve_floor_, fl.rate);
  }
  fl.state = 0;
  ++fl.version;
  Set& s = sets_[fl.set];
  free_flows_.push_back(f);
  if (--s.pending == 0) {
    completed.push_back(s.tag);
    s.open = false;
    free_sets_.push_back(fl.set);
  }
}

void FlowNetwork::advance(double t, std::vector<std::uint64_t>& completed) {
  now_ = t;
  for (std::uint64_t tag : empty_done_) completed.push_back(tag);
  empty_done_.clear();
  const double horizon = t + std::max(1e-15, std::abs(t) * 1e-12);
  // Activations: flows whose latency has elapsed join the sharing.
  while (!activations_.empty() && activations_.top().t <= horizon) {
    TimedFlow a = activations_.top();
    activations_.pop();
    Flow& fl = flows_[a.flow];
    if (fl.state != 1 || fl.version != a.version) continue;
    if (fl.remaining <= 0 || fl.n == 0) {
      finish(a.flow, completed);
      continue;
    }
    fl.t_ref = t;
    fl.rate = 0;
    activate(a.flow);
  }
  // Completions.
  while (!cheap_.empty() && flows_[cheap_[0]].t_fin <= horizon) finish(cheap_[0], completed);
  if (!dirty_links_.empty()) resolve(t);
}

void FlowNetwork::resolve(double now) {
  // 1. The connected component(s) of the dirty links: links <-> active flows. Only links shared
  //    by two or more flows couple flows; a link with a single flow is an upper bound on that
  //    flow's rate (its capacity), kept per flow in `cap`, and is neither traversed nor filled.
  if (epoch_ > 0xF0000000u) {  // about to wrap: reset marks
    std::fill(link_mark_.begin(), link_mark_.end(), 0);
    for (auto& fl : flows_) fl.mark = 0;
    epoch_ = 0;
  }
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  for (std::uint32_t l : dirty_links_) {
    if (link_mark_[l] == epoch_) continue;
    link_mark_[l] = epoch_;
    comp_links_.push_back(l);
  }
  dirty_links_.clear();
  const double inf = std::numeric_limits<double>::infinity();
  // A flow that joined gets at least min over its path of capacity / flows on the link (at its
  // bottleneck link it has the largest rate, so at least the average), and no rate below its
  // own changes; see resolve_floor_.
  for (std::uint32_t f : fresh_) {
    const Flow& fl = flows_[f];
    if (fl.state != 2) continue;
    for (std::uint32_t l : path(fl))
      resolve_floor_ = std::min(resolve_floor_, cap_[l] / link_n_[l]);
  }
  fresh_.clear();
  // Flows rated below the floor keep their rates (see resolve_floor_); they are not re-solved,
  // and their rates are subtracted from the capacity of the links they share with the others.
  const double floor = incremental_ && resolve_floor_ < inf ? resolve_floor_ * (1 - 1e-9) : 0.0;
  const std::uint32_t shared_min = incremental_ ? 2 : 1;
  resolve_floor_ = inf;
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    std::uint32_t l = comp_links_[i];
    double rem = cap_[l];
    std::uint32_t cnt = 0;
    for (const LinkEntry& e : link_flows_[l]) {
      Flow& fl = flows_[e.flow];
      if (fl.rate < floor && !fl.fresh) {
        rem -= fl.rate;
        continue;
      }
      ++cnt;
      if (fl.mark == epoch_) continue;
      fl.mark = epoch_;
      fl.frozen = false;
      comp_flows_.push_back(e.flow);
      double cap = inf;
      for (std::uint32_t l2 : path(fl)) {
        if (link_n_[l2] < shared_min) {
          cap = std::min(cap, cap_[l2]);
          continue;
        }
        if (link_mark_[l2] == epoch_) continue;
        link_mark_[l2] = epoch_;
        comp_links_.push_back(l2);
      }
      fl.cap = cap;
    }
    link_rem_[l] = rem;
    link_cnt_[l] = cnt;
  }
  if (comp_flows_.empty()) return;
  ++solves_;
  flows_solved_ += comp_flows_.size();

  // 2. Progressive filling over the shared links, plus each flow's own bound `cap` (sorted, with
  //    a cursor). Symmetric traffic has few distinct bottleneck levels, so rounds first scan the
  //    (compact) list of unsaturated links for the smallest fair share and saturate every link
  //    at that level at once; after kScanRounds rounds the remaining links go to a lazy min-heap
  //    of fair shares (O(P log L) whatever the number of levels).
  constexpr int kScanRounds = 24;
  active_links_.clear();
  scan_share_.clear();
  for (std::uint32_t l : comp_links_) {
    if (link_n_[l] < shared_min || link_cnt_[l] == 0) continue;
    link_pos_[l] = static_cast<std::uint32_t>(active_links_.size());
    active_links_.push_back(l);
    scan_share_.push_back(std::max(0.0, link_rem_[l]) / link_cnt_[l]);
  }
  flow_caps_.clear();
  for (std::uint32_t f : comp_flows_)
    if (flows_[f].cap < inf) flow_caps_.push_back({flows_[f].cap, f});
  std::sort(flow_caps_.begin(), flow_caps_.end(), [](const FlowCap& a, const FlowCap& b) {
    return a.cap != b.cap ? a.cap < b.cap : a.flow < b.flow;
  });
  std::size_t cap_next = 0;
  auto next_cap = [&]() {
    while (cap_next < flow_caps_.size() && flows_[flow_caps_[cap_next].flow].frozen) ++cap_next;
    return cap_next < flow_caps_.size() ? flow_caps_[cap_next].cap : inf;
  };
  bool scanning = true;
  auto freeze_flow = [&](std::uint32_t f, double share) {
    Flow& fl = flows_[f];
    fl.frozen = true;
    fl.fresh = false;
    if (fl.rate != share) {  // the rate changes: bank the progress made at the old rate
      fl.remaining = std::max(0.0, fl.remaining - fl.rate * (now - fl.t_ref));
      fl.t_ref = now;
      fl.rate = share;
      fl.t_fin = share > 0 ? now + fl.remaining / share : kNever;
      ++fl.version;
      heap_update(f);
    }
    for (std::uint32_t l2 : path(fl)) {
      if (link_n_[l2] < shared_min) continue;
      link_rem_[l2] -= share;
      const std::uint32_t c = --link_cnt_[l2];
      if (scanning) scan_share_[link_pos_[l2]] = c > 0 ? std::max(0.0, link_rem_[l2]) / c : inf;
    }
  };
  auto freeze_link = [&](std::uint32_t l, double share) {
    for (const LinkEntry& e : link_flows_[l])
      if (!flows_[e.flow].frozen) freeze_flow(e.flow, share);
  };
  // Shares live in a contiguous array parallel to active_links_, so a round's minimum is one
  // sequential pass.
  int rounds = 0;
  while ((!active_links_.empty() || next_cap() < inf) && rounds < kScanRounds) {
    ++rounds;
    double best = next_cap();
    for (double x : scan_share_) best = std::min(best, x);
    const double thr = best * (1 + 1e-12) + 1e-300;
    for (std::size_t i = 0; i < active_links_.size(); ++i)
      if (scan_share_[i] <= thr) freeze_link(active_links_[i], best);
    while (next_cap() <= thr) freeze_flow(flow_caps_[cap_next].flow, best);
    std::size_t k = 0;
    for (std::size_t i = 0; i < active_links_.size(); ++i) {
      if (scan_share_[i] == inf) continue;
      if (k != i) {
        active_links_[k] = active_links_[i];
        scan_share_[k] = scan_share_[i];
        link_pos_[active_links_[k]] = static_cast<std::uint32_t>(k);
      }
      ++k;
    }
    active_links_.resize(k);
    scan_share_.resize(k);
  }
  scanning = false;
  if (active_links_.empty() && next_cap() == inf) return;
  // Heap phase for the remaining levels (stale entries skipped by version).
  auto cmp = [](const ShareEntry& a, const ShareEntry& b) {
    return a.share != b.share ? a.share > b.share : a.link > b.link;
  };
  heap_.clear();
  for (std::uint32_t l : active_links_) {
    ++link_ver_[l];
    heap_.push_back({std::max(0.0, link_rem_[l]) / link_cnt_[l], l, link_ver_[l]});
  }
  std::make_heap(heap_.begin(), heap_.end(), cmp);
  auto push_touched = [&](std::uint32_t skip) {
    for (std::uint32_t l2 : touched_) {
      if (l2 == skip || link_cnt_[l2] == 0) continue;
      double sh = std::max(0.0, link_rem_[l2]) / link_cnt_[l2];
      ++link_ver_[l2];
      heap_.push_back({sh, l2, link_ver_[l2]});
      std::push_heap(heap_.begin(), heap_.end(), cmp);
    }
  };
  while (true) {
    // Drop stale entries so the heap top is a live fair share.
    while (!heap_.empty() && (heap_.front().ver != link_ver_[heap_.front().link] ||
                              link_cnt_[heap_.front().link] == 0)) {
      std::pop_heap(heap_.begin(), heap_.end(), cmp);
      heap_.pop_back();
    }
    const double c = next_cap();
    if (heap_.empty() && c == inf) break;
    touched_.clear();
    if (heap_.empty() || c < heap_.front().share) {
      // A flow's own bound comes first: freeze it there.
      const std::uint32_t f = flow_caps_[cap_next].flow;
      for (std::uint32_t l2 : path(flows_[f]))
        if (link_n_[l2] >= shared_min) touched_.push_back(l2);
      freeze_flow(f, c);
      push_touched(kNoPos);
      continue;
    }
    std::pop_heap(heap_.begin(), heap_.end(), cmp);
    ShareEntry s = heap_.back();
    heap_.pop_back();
    // Links whose count or capacity changed since they were pushed get a fresh entry.
    for (const LinkEntry& e : link_flows_[s.link])
      if (!flows_[e.flow].frozen)
        for (std::uint32_t l2 : path(flows_[e.flow]))
          if (link_n_[l2] >= shared_min) touched_.push_back(l2);
    freeze_link(s.link, std::max(0.0, s.share));
    push_touched(s.link);
  }
}

// Indexed binary min-heap of active flows by t_fin (one entry per flow, no stale entries).
void FlowNetwork::heap_swap(std::size_t a, std::size_t b) {
  std::swap(cheap_[a], cheap_[b]);
  flows_[cheap_[a]].hpos = static_cast<std::uint32_t>(a);
  flows_[cheap_[b]].hpos = static_cast<std::uint32_t>(b);
}
bool FlowNetwork::heap_less(std::size_t a, std::size_t b) const {
  const Flow& x = flows_[cheap_[a]];
  const Flow& y = flows_[cheap_[b]];
  return x.t_fin != y.t_fin ? x.t_fin < y.t_fin : cheap_[a] < cheap_[b];
}
void FlowNetwork::heap_sift(std::size_t i) {
  while (i > 0) {
    std::size_t p = (i - 1) / 2;
    if (!heap_less(i, p)) break;
    heap_swap(i, p);
    i = p;
  }
  const std::size_t n = cheap_.size();
  while (true) {
    std::size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && heap_less(l, m)) m = l;
    if (r < n && heap_less(r, m)) m = r;
    if (m == i) break;
    heap_swap(i, m);
    i = m;
  }
}
void FlowNetwork::heap_update(std::uint32_t f) {
  Flow& fl = flows_[f];
  if (fl.t_fin == kNever) {
    if (fl.hpos != kNoPos) heap_remove(f);
    return;
  }
  if (fl.hpos == kNoPos) {
    fl.hpos = static_cast<std::uint32_t>(cheap_.size());
    cheap_.push_back(f);
  }
  heap_sift(fl.hpos);
}
void FlowNetwork::heap_remove(std::uint32_t f) {
  std::size_t i = flows_[f].hpos;
  std::size_t last = cheap_.size() - 1;
  if (i != last) heap_swap(i, last);
  cheap_.pop_back();
  flows_[f].hpos = kNoPos;
  if (i < cheap_.size()) heap_sift(i);
}

double FlowNetwork::flow_rate(SetId set, std::size_t index) const {
  const Set& s = sets_[set];
  const Flow& fl = flows_[s.flows[index]];
  return fl.state == 2 ? fl.rate : 0.0;
}

}  // namespace tutti
