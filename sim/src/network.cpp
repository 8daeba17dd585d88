#include "tutti/sim/network.hpp"

#include <algorithm>
#include <cmath>

#include "tutti/core/error.hpp"
#include "tutti/sim/quad_heap.hpp"
#include "tutti/sim/slots.hpp"

namespace tutti {

namespace {

/// Per-link capacity (bytes/s) of `topo` under `profile`'s tier models; a link standing for a
/// bundle of cables (adaptive routing / spraying on Clos) has the bundle's capacity.
std::vector<double> link_capacities(const Topology& topo, const CalibrationProfile& profile) {
  std::vector<double> cap;
  cap.reserve(topo.links().size());
  for (std::uint32_t i = 0; i < topo.links().size(); ++i)
    cap.push_back(topo.links()[i].bandwidth_Bps *
                  profile.tier(topo.links()[i].tier).bandwidth_efficiency * topo.link_bundle(i));
  return cap;
}

/// Per-link latency (s) of `topo` under `profile`'s tier models.
std::vector<double> link_latencies(const Topology& topo, const CalibrationProfile& profile) {
  std::vector<double> lat;
  lat.reserve(topo.links().size());
  for (const Link& l : topo.links())
    lat.push_back(l.latency_s + profile.tier(l.tier).extra_latency_s);
  return lat;
}

}  // namespace

FlowNetwork::FlowNetwork(const Topology& topo, const CalibrationProfile& profile)
    : FlowNetwork(link_capacities(topo, profile), link_latencies(topo, profile)) {}

FlowNetwork::FlowNetwork(std::vector<double> capacity_Bps, std::vector<double> latency_s)
    : cap_(std::move(capacity_Bps)), lat_(std::move(latency_s)) {
  check_internal(cap_.size() == lat_.size(), "FlowNetwork: capacity/latency size mismatch");
  link_bytes_.assign(cap_.size(), 0.0);
  lists_.resize(cap_.size());
  for (std::size_t i = 0; i < cap_.size(); ++i) lists_[i].cap_Bps = cap_[i];
  link_cnt_.assign(cap_.size(), 0);
  link_ver_.assign(cap_.size(), 0);
  link_rem_.assign(cap_.size(), 0.0);
  link_pos_.assign(cap_.size(), 0);
}

void FlowNetwork::scale_capacity(std::uint32_t l, double factor) {
  check_internal(n_active_ == 0 && cheap_.empty() && activations_.empty(),
                 "FlowNetwork::scale_capacity with flows in the network");
  cap_[l] *= factor;
  lists_[l].cap_Bps = cap_[l];
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

std::uint32_t FlowNetwork::new_flow(SetId set, const std::uint32_t* links, std::size_t n) {
  const std::uint32_t f = take_slot(flows_, free_flows_);
  if (hpos_.size() < flows_.size()) hpos_.resize(flows_.size(), kNoPos);
  if (cold_.size() < flows_.size()) cold_.resize(flows_.size());
  Flow& fl = flows_[f];
  FlowCold& fc = cold_[f];
  if (n > fc.hop_cap) {  // a slot keeps its hop block; a longer path gets a new one
    fl.off = static_cast<std::uint32_t>(hop_link_.size());
    fc.hop_cap = static_cast<std::uint32_t>(n);
    hop_link_.resize(hop_link_.size() + n);
    hop_pos_.resize(hop_pos_.size() + n);
  }
  fl.n = static_cast<std::uint32_t>(n);
  std::copy(links, links + n, hop_link_.begin() + fl.off);
  fl.rate = 0;
  fl.t_fin = kNever;
  fl.set = set;
  fl.state = 1;
  fl.frozen = false;
  Set& s = sets_[set];
  fc.index = static_cast<std::uint32_t>(s.flows.size());
  s.flows.push_back(f);
  ++s.pending;
  return f;
}

void FlowNetwork::add_flow(SetId set, const std::uint32_t* links, std::size_t n, double bytes,
                           double latency_scale) {
  check_internal(sets_[set].open && !sets_[set].started, "FlowNetwork::add_flow on a started set");
  Flow& fl = flows_[new_flow(set, links, n)];
  fl.remaining = std::max(0.0, bytes);
  // t_ref holds the latency until start_set.
  fl.t_ref = latency_scale * path_latency_s(links, n);
  for (std::size_t i = 0; i < n; ++i) link_bytes_[links[i]] += bytes;
}

void FlowNetwork::clone_flow(SetId set, std::size_t index, const std::uint32_t* links,
                             std::size_t n, double now) {
  check_internal(sets_[set].started && index < sets_[set].flows.size(),
                 "FlowNetwork::clone_flow of a flow that is not in a started set");
  const std::uint32_t o = sets_[set].flows[index];
  if (flows_[o].set != set || cold_[o].index != index || flows_[o].state == 0) return;
  const std::uint32_t f = new_flow(set, links, n);
  Flow& fl = flows_[f];
  const Flow& of = flows_[o];  // after new_flow: taking a slot may move the flows
  if (of.state == 1) {         // still in its latency: the same activation time
    fl.remaining = of.remaining;
    fl.t_ref = of.t_ref;
  } else {
    fl.remaining = std::max(0.0, of.remaining - of.rate * (now - of.t_ref));
    fl.t_ref = now;
  }
  activations_.push({fl.t_ref, f, fl.version});
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
  heap_settle();
  if (!cheap_.empty()) t = std::min(t, cheap_[0].t);
  return t;
}

std::uint64_t FlowNetwork::bound_q(const Flow& fl) const {
  double ub = kNever;
  for (std::uint32_t h = fl.off; h < fl.off + fl.n; ++h)
    ub = std::min(ub, lists_[hop_link_[h]].cap_Bps);
  return static_cast<std::uint64_t>(std::min(ub, kMaxBound) * kQuantum + 0.5);  // rounded
}

void FlowNetwork::activate(std::uint32_t f) {
  Flow& fl = flows_[f];
  fl.state = 2;
  ++n_active_;
  fl.fresh = true;
  fresh_.push_back(f);
  const std::uint64_t ub_q = bound_q(fl);  // (this pass also brings the links' records in)
  for (std::uint32_t h = fl.off; h < fl.off + fl.n; ++h) {
    std::uint32_t l = hop_link_[h];
    LinkList& ll = lists_[l];
    if (ll.n == ll.room) {  // move the link's block to the end of the pool, twice as large
      const auto off = static_cast<std::uint32_t>(entries_.size());
      const std::uint32_t room = std::max<std::uint32_t>(4, 2 * ll.room);
      entries_.resize(entries_.size() + room);
      std::copy_n(entries_.begin() + ll.off, ll.n, entries_.begin() + off);
      ll.off = off;
      ll.room = room;
    }
    hop_pos_[h] = ll.n;
    entries_[ll.off + ll.n++] = {f, h};
    ll.ub_sum_q += ub_q;
    // Alone there, or on a link slack before and after: nothing to re-rate for it (resolve seeds
    // the flow from fresh_).
    if (ll.n == 1 || (ll.coupled == 0 && !couples(ll))) continue;
    ++ll.adds;
    dirty_links_.push_back(l);
  }
}

void FlowNetwork::detach(std::uint32_t f) {
  Flow& fl = flows_[f];
  const std::uint64_t ub_q = bound_q(fl);
  for (std::uint32_t h = fl.off; h < fl.off + fl.n; ++h) {
    std::uint32_t l = hop_link_[h];
    LinkList& ll = lists_[l];
    const std::uint32_t i = hop_pos_[h];
    if (--ll.n != i) {  // the last entry fills the hole (a flow alone there touches no entry)
      const LinkEntry last = entries_[ll.off + ll.n];
      entries_[ll.off + i] = last;
      hop_pos_[last.hop] = i;
    }
    ll.ub_sum_q -= ub_q;
    // A link slack before (and so after) matters only when it is left to a single flow (resolve).
    if (ll.coupled != 0 || ll.n == 1) dirty_links_.push_back(l);
  }
  --n_active_;
}

void FlowNetwork::finish(std::uint32_t f, std::vector<std::uint64_t>& completed) {
  Flow& fl = flows_[f];
  if (hpos_[f] != kNoPos) heap_remove(f);
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
  // Completions, in (t_fin, flow) order. Many at once (a set's flows finishing together) leave
  // the heap in one pass and a rebuild instead of one sift-down each.
  if (heap_pop_due(horizon))
    for (std::uint32_t f : due_) finish(f, completed);
  for (heap_settle(); !cheap_.empty() && cheap_[0].t <= horizon; heap_settle())
    finish(cheap_[0].flow, completed);
  if (!dirty_links_.empty() || !fresh_.empty()) resolve(t);
}

void FlowNetwork::resolve(double now) {
  // 1. The connected component(s) of the dirty links: links <-> active flows. Only links shared
  //    by two or more flows couple flows; a link with a single flow is an upper bound on that
  //    flow's rate (its capacity), kept per flow in `cap`, and is neither traversed nor filled.
  if (epoch_ > 0xF0000000u) {  // about to wrap: reset marks
    for (LinkList& ll : lists_) ll.mark = 0;
    for (auto& fl : flows_) fl.mark = 0;
    epoch_ = 0;
  }
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  // Coupling links: shared by two or more flows and not slack. A slack link (the rate bounds of
  // its flows, each flow's narrowest link, sum to no more than its capacity) never saturates
  // while any of its flows is unfrozen, so it constrains nothing: max-min rates are those of the
  // network without it (its rates are feasible with it, and the feasible set only shrinks). It is
  // then treated as a single flow's link: a bound, neither traversed nor filled. Bounds are summed
  // in integers (no drift); a sum within 1e-12 of the capacity (the event batching's tolerance:
  // products of the same bandwidths round apart, e.g. 32 flows of one cable's rate in a bundle of
  // 32 cables) counts as slack. The reference solver (set_incremental(false)) couples at every
  // link.
  auto couples = [&](std::uint32_t l) { return this->couples(lists_[l]); };
  for (std::uint32_t l : dirty_links_) {
    LinkList& ll = lists_[l];
    if (ll.mark == epoch_) continue;
    ll.mark = epoch_;
    // The flows that joined are seeded below (fresh_), so a dirty link matters for the flows it
    // had: a coupling link re-rates them; so does a link slack now that coupled at the last solve
    // (it may have held them back), and a link left to a single flow that did not just join
    // (its partners left). A link slack now and then changes no rate by what joined or left it.
    // (A flow cannot join and leave in one advance: it is rated first. A flow joining a link
    // alone does not even make it dirty: activate.)
    const bool c = couples(l), was = ll.coupled != 0, joined = ll.adds > 0;
    ll.coupled = c ? 1 : 0;
    ll.adds = 0;
    if (c || was || (ll.n == 1 && !joined)) comp_links_.push_back(l);
  }
  dirty_links_.clear();
  const double inf = std::numeric_limits<double>::infinity();
  // A flow joins the component: its bound from its links that do not couple, and its coupling
  // links not yet in the component. Returns the least capacity / flows over its coupling links
  // (inf when it has none).
  auto seed = [&](std::uint32_t f) {
    Flow& fl = flows_[f];
    fl.mark = epoch_;
    fl.frozen = false;
    comp_flows_.push_back(f);
    double cap = inf, avg = inf;
    for (std::uint32_t l2 : path(fl)) {
      const LinkList& ll = lists_[l2];
      if (!couples(l2)) {
        cap = std::min(cap, ll.cap_Bps);
        continue;
      }
      avg = std::min(avg, ll.cap_Bps / ll.n);
      if (ll.mark == epoch_) continue;
      lists_[l2].mark = epoch_;
      comp_links_.push_back(l2);
    }
    fl.cap = cap;
    return avg;
  };
  // Flows that joined first. One rated alone on all its links changes no other rate. One with
  // coupling links gets at least min over its path of capacity / flows on the link, the links
  // it has to itself included (at its bottleneck link it has the largest rate, so at least the
  // average), and no rate below its own changes; see resolve_floor_.
  for (std::uint32_t f : fresh_) {
    if (flows_[f].state != 2 || flows_[f].mark == epoch_) continue;
    const double avg = seed(f);
    if (avg < inf) resolve_floor_ = std::min({resolve_floor_, avg, flows_[f].cap});
  }
  fresh_.clear();
  // Flows rated below the floor keep their rates (see resolve_floor_); they are not re-solved,
  // and their rates are subtracted from the capacity of the links they share with the others.
  const double floor = incremental_ && resolve_floor_ < inf ? resolve_floor_ * (1 - 1e-9) : 0.0;
  resolve_floor_ = inf;
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    std::uint32_t l = comp_links_[i];
    double rem = cap_[l];
    std::uint32_t cnt = 0;
    for (const LinkEntry& e : on_link(l)) {
      Flow& fl = flows_[e.flow];
      if (fl.rate < floor && !fl.fresh) {
        rem -= fl.rate;
        continue;
      }
      ++cnt;
      if (fl.mark != epoch_) seed(e.flow);
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
    if (!couples(l) || link_cnt_[l] == 0) continue;
    link_pos_[l] = static_cast<std::uint32_t>(active_links_.size());
    active_links_.push_back(l);
    scan_share_.push_back(std::max(0.0, link_rem_[l]) / link_cnt_[l]);
  }
  flow_caps_.clear();
  double cap_lo = inf, cap_hi = 0;
  for (std::uint32_t f : comp_flows_)
    if (flows_[f].cap < inf) {
      flow_caps_.push_back({flows_[f].cap, f});
      cap_lo = std::min(cap_lo, flows_[f].cap);
      cap_hi = std::max(cap_hi, flows_[f].cap);
    }
  // No shared link and one bound level (flows that joined alone on their paths, the common
  // case): the first scan round below freezes every flow at the least bound, in any order (the
  // completion heap orders by (time, flow)), so the sort is skipped.
  const bool one_level = active_links_.empty() && flow_caps_.size() == comp_flows_.size() &&
                         cap_hi <= cap_lo * (1 + 1e-12) + 1e-300;
  if (!one_level)
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
      if (!couples(l2)) continue;
      link_rem_[l2] -= share;
      const std::uint32_t c = --link_cnt_[l2];
      if (scanning) scan_share_[link_pos_[l2]] = c > 0 ? std::max(0.0, link_rem_[l2]) / c : inf;
    }
  };
  auto freeze_link = [&](std::uint32_t l, double share) {
    for (const LinkEntry& e : on_link(l))
      if (!flows_[e.flow].frozen) freeze_flow(e.flow, share);
  };
  if (one_level) {
    for (const FlowCap& fc : flow_caps_) freeze_flow(fc.flow, cap_lo);
    return;
  }
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
        if (couples(l2)) touched_.push_back(l2);
      freeze_flow(f, c);
      push_touched(kNoPos);
      continue;
    }
    std::pop_heap(heap_.begin(), heap_.end(), cmp);
    ShareEntry s = heap_.back();
    heap_.pop_back();
    // Links whose count or capacity changed since they were pushed get a fresh entry.
    for (const LinkEntry& e : on_link(s.link))
      if (!flows_[e.flow].frozen)
        for (std::uint32_t l2 : path(flows_[e.flow]))
          if (couples(l2)) touched_.push_back(l2);
    freeze_link(s.link, std::max(0.0, s.share));
    push_touched(s.link);
  }
}

// Indexed 4-ary min-heap of active flows by (t_fin, flow): the keys live in the heap entries
// (a sift compares neighbouring entries, not flows scattered over flows_), the positions in the
// compact hpos_ array, and a node's four children share a cache line. Keys are lower bounds, kept
// lazily: a flow whose t_fin moves later keeps its entry where it is (most re-rates slow a flow
// down and many are undone by later ones), and the entry is re-keyed only when it reaches the top
// (heap_settle, before every read of the top); a flow whose t_fin moves earlier is sifted up at
// once. After heap_settle the top's key is exact and no larger, in the total order (t_fin, flow),
// than any key, hence than any flow's (t_fin, flow): the top and the order of completions are
// those of an eager heap.
void FlowNetwork::heap_place(std::size_t i, const HeapEntry& e) {
  cheap_[i] = e;
  hpos_[e.flow] = static_cast<std::uint32_t>(i);
}
void FlowNetwork::heap_up(std::size_t i) {
  quad_heap::sift_up(cheap_, i, [this](std::size_t k, const HeapEntry& e) { heap_place(k, e); });
}
void FlowNetwork::heap_down(std::size_t i) {
  quad_heap::sift_down(cheap_, i, [this](std::size_t k, const HeapEntry& e) { heap_place(k, e); });
}
void FlowNetwork::heap_settle() {
  while (!cheap_.empty()) {
    const double t = flows_[cheap_[0].flow].t_fin;
    if (cheap_[0].t == t) return;
    cheap_[0].t = t;  // later than the stale key: down
    heap_down(0);
  }
}
void FlowNetwork::heap_update(std::uint32_t f) {
  Flow& fl = flows_[f];
  std::uint32_t& pos = hpos_[f];
  if (fl.t_fin == kNever) {
    if (pos != kNoPos) heap_remove(f);
    return;
  }
  if (pos == kNoPos) {
    pos = static_cast<std::uint32_t>(cheap_.size());
    cheap_.push_back({fl.t_fin, f});
    heap_up(pos);
  } else if (fl.t_fin < cheap_[pos].t) {
    cheap_[pos].t = fl.t_fin;
    heap_up(pos);
  }  // else: later than the key, which stays a lower bound (heap_settle)
}
void FlowNetwork::sort_ids(std::vector<std::uint32_t>& ids) {
  // A set's flows take ids near one another (new_flow reuses freed ids, so they are not in
  // order): when the span of the ids is within 64 x their count, a bitmap of the span, read a word
  // at a time, sorts them in O(count + span / 64) without comparisons (std::sort of the ~1,400
  // flows of a ring step was 5% of a 16,384-GPU run). Ids are distinct (a flow is due once).
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  const std::uint32_t base = *lo, span = *hi - *lo + 1;
  if (span / 64 > ids.size()) {
    std::sort(ids.begin(), ids.end());
    return;
  }
  id_bits_.assign(span / 64 + 1, 0);
  for (std::uint32_t f : ids) id_bits_[(f - base) >> 6] |= std::uint64_t{1} << ((f - base) & 63);
  std::size_t k = 0;
  for (std::size_t w = 0; w < id_bits_.size(); ++w)
    for (std::uint64_t b = id_bits_[w]; b != 0; b &= b - 1)
      ids[k++] =
          base + static_cast<std::uint32_t>(w * 64 + static_cast<unsigned>(__builtin_ctzll(b)));
}

bool FlowNetwork::heap_pop_due(double horizon) {
  // The flows whose t_fin is <= horizon: keys are lower bounds, so each such flow and all its
  // ancestors have keys <= horizon, and a walk from the root that stops at larger keys finds
  // them all.
  due_.clear();
  if (cheap_.empty() || cheap_[0].t > horizon) return false;
  walk_.clear();
  walk_.push_back(0);
  due_keys_.clear();
  while (!walk_.empty()) {
    const std::size_t i = walk_.back();
    walk_.pop_back();
    const double t = flows_[cheap_[i].flow].t_fin;
    if (t <= horizon) due_keys_.push_back({t, cheap_[i].flow});
    for (std::size_t c = 4 * i + 1; c < std::min(4 * i + 5, cheap_.size()); ++c)
      if (cheap_[c].t <= horizon) walk_.push_back(c);
  }
  // Few: the caller pops them one by one. Many: out, and the heap rebuilt bottom-up (O(n)).
  if (due_keys_.size() < 16 || due_keys_.size() * 8 < cheap_.size()) return false;
  // In (t_fin, flow) order; a set's flows finishing together share one t_fin, and then the flow
  // ids alone are sorted (4-byte keys).
  const double t0 = due_keys_[0].t;
  bool one_time = true;
  for (const HeapEntry& e : due_keys_) {
    one_time = one_time && e.t == t0;
    due_.push_back(e.flow);
    hpos_[e.flow] = kNoPos;
  }
  if (one_time) {
    sort_ids(due_);
  } else {
    std::sort(due_keys_.begin(), due_keys_.end());
    for (std::size_t i = 0; i < due_keys_.size(); ++i) due_[i] = due_keys_[i].flow;
  }
  std::size_t k = 0;
  for (std::size_t i = 0; i < cheap_.size(); ++i)
    if (hpos_[cheap_[i].flow] != kNoPos) heap_place(k++, cheap_[i]);
  cheap_.resize(k);
  for (std::size_t i = k > 1 ? (k - 2) / 4 + 1 : 0; i-- > 0;) heap_down(i);
  return true;
}
void FlowNetwork::heap_remove(std::uint32_t f) {
  const std::size_t i = hpos_[f];
  const std::size_t last = cheap_.size() - 1;
  hpos_[f] = kNoPos;
  if (i != last) {
    const HeapEntry moved = cheap_[last];
    cheap_.pop_back();
    heap_place(i, moved);
    if (i > 0 && moved < cheap_[(i - 1) / 4])
      heap_up(i);
    else
      heap_down(i);
  } else {
    cheap_.pop_back();
  }
}

}  // namespace tutti
