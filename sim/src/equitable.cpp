#include "tutti/sim/equitable.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace tutti {
namespace {

// Elements: flows [0, nf), links [nf, nf + nl), replicas [nf + nl, n); an edge per flow hop (with
// repeats) and per owned flow, kept both ways. Classes are ranges of elems_ (pos_ is the inverse).
// A class is split by the number of edges its elements have into a splitter class; the partition
// is stable with respect to every class processed (and to every union of such classes), so when a
// class that is not queued splits, stability with respect to its largest part follows from the
// others' and the whole's, and only the others are queued.
class Refiner {
 public:
  explicit Refiner(const EquitableGraph& g);
  // Refines until stable (or every replica is alone). Without `late`, the late flows' classes are
  // never splitters (so the other elements refine as in the graph without them); with it, they
  // are queued first.
  void run(bool late);
  bool discrete() const { return rclasses_ == nr_; }
  void replica_ids(std::vector<std::uint32_t>& out) const;

 private:
  void split_by(std::uint32_t s);
  void queue(std::uint32_t c) {
    if (!inq_[c]) {
      inq_[c] = 1;
      queue_.push_back(c);
    }
  }

  const EquitableGraph& g_;
  std::uint32_t nf_, nl_, nr_, n_;
  std::vector<std::uint32_t> rev_off_, rev_;  // per link, then replica: its flows
  std::vector<std::uint32_t> elems_, pos_, cls_, cnt_, touched_, tclasses_;
  std::vector<std::uint32_t> start_, end_, tcount_;  // per class
  std::vector<char> inq_, late_;                     // per class
  std::vector<std::uint32_t> queue_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> parts_;  // split_by's scratch
  std::uint32_t rclasses_ = 0;
  bool late_phase_ = false;
};

Refiner::Refiner(const EquitableGraph& g)
    : g_(g),
      nf_(static_cast<std::uint32_t>(g.f_owner.size())),
      nl_(static_cast<std::uint32_t>(g.l_colour.size())),
      nr_(static_cast<std::uint32_t>(g.replicas)),
      n_(nf_ + nl_ + nr_) {
  // Links' and replicas' flows (the flows' own edges are g's): counts, inclusive prefix sums,
  // then filled downwards, which leaves rev_off_[i] at the start of element nf_ + i's list.
  const std::uint32_t nlr = nl_ + nr_;
  rev_off_.assign(nlr + 1, 0);
  for (std::uint32_t f = 0; f < nf_; ++f) {
    for (std::uint32_t h = g.f_off[f]; h < g.f_off[f + 1]; ++h) ++rev_off_[g.f_links[h]];
    if (g.f_owner[f] >= 0) ++rev_off_[nl_ + static_cast<std::uint32_t>(g.f_owner[f])];
  }
  for (std::uint32_t i = 1; i <= nlr; ++i) rev_off_[i] += rev_off_[i - 1];
  rev_.resize(rev_off_[nlr]);
  for (std::uint32_t f = 0; f < nf_; ++f) {
    for (std::uint32_t h = g.f_off[f]; h < g.f_off[f + 1]; ++h) rev_[--rev_off_[g.f_links[h]]] = f;
    if (g.f_owner[f] >= 0) rev_[--rev_off_[nl_ + static_cast<std::uint32_t>(g.f_owner[f])]] = f;
  }
  // Initial classes by key (counting sort): flows by (colour, late), links by colour, replicas
  // alike; classes numbered by key.
  std::uint32_t fk = 0, lk = 0;
  for (std::uint32_t c : g.f_colour) fk = std::max(fk, 2 * c + 2);
  for (std::uint32_t c : g.l_colour) lk = std::max(lk, c + 1);
  const auto key = [&](std::uint32_t e) -> std::uint32_t {
    if (e < nf_) return 2 * g.f_colour[e] + (g.f_late.empty() || !g.f_late[e] ? 0 : 1);
    if (e < nf_ + nl_) return fk + g.l_colour[e - nf_];
    return fk + lk;
  };
  const std::uint32_t nk = fk + lk + 1;
  std::vector<std::uint32_t> first(nk + 1, 0);
  for (std::uint32_t e = 0; e < n_; ++e) ++first[key(e) + 1];
  for (std::uint32_t k = 0; k < nk; ++k) first[k + 1] += first[k];
  std::vector<std::uint32_t> kcls(nk, std::numeric_limits<std::uint32_t>::max());
  for (std::uint32_t k = 0; k < nk; ++k)
    if (first[k + 1] > first[k]) {
      kcls[k] = static_cast<std::uint32_t>(start_.size());
      start_.push_back(first[k]);
      end_.push_back(first[k + 1]);
      late_.push_back(k < fk && k % 2 == 1 ? 1 : 0);
      if (k >= fk + lk) ++rclasses_;
    }
  elems_.resize(n_);
  pos_.resize(n_);
  cls_.resize(n_);
  for (std::uint32_t e = 0; e < n_; ++e) {
    const std::uint32_t k = key(e), p = first[k]++;
    elems_[p] = e;
    pos_[e] = p;
    cls_[e] = kcls[k];
  }
  tcount_.assign(start_.size(), 0);
  inq_.assign(start_.size(), 0);
  cnt_.assign(n_, 0);
  touched_.resize(std::max(nf_, nl_ + nr_));  // the other side of the edges
  // Every class but the late flows' starts queued; popped from the back: lowest ids first.
  for (std::uint32_t c = static_cast<std::uint32_t>(start_.size()); c-- > 0;)
    if (!late_[c]) queue(c);
}

void Refiner::run(bool late) {
  if (late && !late_phase_) {
    late_phase_ = true;
    for (std::uint32_t c = static_cast<std::uint32_t>(start_.size()); c-- > 0;)
      if (late_[c]) queue(c);
  }
  while (!queue_.empty() && !discrete()) {
    const std::uint32_t s = queue_.back();
    queue_.pop_back();
    inq_[s] = 0;
    split_by(s);
  }
}

void Refiner::split_by(std::uint32_t s) {
  // Count each element's edges into s (s is never split here: edges join flows to links and
  // replicas only).
  // Raw pointers: the loops below store through them, which would otherwise reload the vectors.
  std::uint32_t* const cnt = cnt_.data();
  std::uint32_t* const touched = touched_.data();  // each element of the other side once
  std::uint32_t nt = 0;
  const std::uint32_t* const elems = elems_.data();
  if (elems[start_[s]] < nf_) {
    const std::uint32_t* const off = g_.f_off.data();
    const std::uint32_t* const links = g_.f_links.data();
    const std::int32_t* const owner = g_.f_owner.data();
    const std::uint32_t r0 = nf_ + nl_;
    for (std::uint32_t i = start_[s], ie = end_[s]; i < ie; ++i) {
      const std::uint32_t f = elems[i];
      for (std::uint32_t h = off[f], he = off[f + 1]; h < he; ++h) {
        const std::uint32_t v = nf_ + links[h];
        if (cnt[v]++ == 0) touched[nt++] = v;
      }
      if (owner[f] >= 0) {
        const std::uint32_t v = r0 + static_cast<std::uint32_t>(owner[f]);
        if (cnt[v]++ == 0) touched[nt++] = v;
      }
    }
  } else {
    const std::uint32_t* const off = rev_off_.data();
    const std::uint32_t* const rev = rev_.data();
    for (std::uint32_t i = start_[s], ie = end_[s]; i < ie; ++i) {
      const std::uint32_t e = elems[i] - nf_;
      for (std::uint32_t k = off[e], ke = off[e + 1]; k < ke; ++k) {
        const std::uint32_t v = rev[k];
        if (cnt[v]++ == 0) touched[nt++] = v;
      }
    }
  }
  // Move the touched elements to the front of their classes.
  tclasses_.clear();
  {
    std::uint32_t* const el = elems_.data();
    std::uint32_t* const pos = pos_.data();
    const std::uint32_t* const cls = cls_.data();
    std::uint32_t* const tcount = tcount_.data();
    const std::uint32_t* const start = start_.data();
    for (std::uint32_t j = 0; j < nt; ++j) {
      const std::uint32_t v = touched[j], c = cls[v];
      if (tcount[c] == 0) tclasses_.push_back(c);
      const std::uint32_t p = pos[v], q = start[c] + tcount[c]++;
      const std::uint32_t w = el[q];
      el[p] = w;
      pos[w] = p;
      el[q] = v;
      pos[v] = q;
    }
  }
  const auto by_count = [this](std::uint32_t a, std::uint32_t b) { return cnt_[a] < cnt_[b]; };
  for (std::uint32_t c : tclasses_) {
    const std::uint32_t b = start_[c], e = end_[c], t = tcount_[c];
    tcount_[c] = 0;
    std::uint32_t* seg = elems_.data() + b;
    bool same = true;
    for (std::uint32_t i = 1; i < t && same; ++i) same = cnt_[seg[i]] == cnt_[seg[0]];
    if (same && t == e - b) continue;  // all alike: no split
    if (!same) {
      std::sort(seg, seg + t, by_count);
      for (std::uint32_t i = 0; i < t; ++i) pos_[seg[i]] = b + i;
    }
    // Parts: runs of equal counts in [b, b + t), then the untouched [b + t, e) (count 0). The
    // largest (the first of equal ones) keeps id c, so relabelling costs the smaller parts only.
    parts_.clear();
    std::uint32_t keep = 0;
    for (std::uint32_t p0 = b; p0 < e;) {
      std::uint32_t p1 = p0 + 1;
      if (p0 < b + t)
        while (p1 < b + t && cnt_[elems_[p1]] == cnt_[elems_[p0]]) ++p1;
      else
        p1 = e;
      if (parts_.empty() || p1 - p0 > parts_[keep].second - parts_[keep].first)
        keep = static_cast<std::uint32_t>(parts_.size());
      parts_.emplace_back(p0, p1);
      p0 = p1;
    }
    // Queued: every part stays queued. Not queued: the partition is stable with respect to the
    // whole, so with respect to the largest part once the others are processed: those only.
    const bool requeue = !(late_[c] && !late_phase_);  // late flows split before they split others
    const char late = late_[c];
    const bool is_replica = elems_[b] >= nf_ + nl_;
    for (std::uint32_t k = 0; k < parts_.size(); ++k) {
      const auto [p0, p1] = parts_[k];
      if (k == keep) {
        start_[c] = p0;
        end_[c] = p1;
        continue;
      }
      const auto id = static_cast<std::uint32_t>(start_.size());
      start_.push_back(p0);
      end_.push_back(p1);
      late_.push_back(late);
      inq_.push_back(0);
      tcount_.push_back(0);
      for (std::uint32_t i = p0; i < p1; ++i) cls_[elems_[i]] = id;
      if (is_replica) ++rclasses_;
      if (requeue) queue(id);
    }
  }
  for (std::uint32_t j = 0; j < nt; ++j) cnt[touched[j]] = 0;
}

void Refiner::replica_ids(std::vector<std::uint32_t>& out) const {
  out.resize(nr_);
  std::vector<std::uint32_t> id(start_.size(), std::numeric_limits<std::uint32_t>::max());
  std::uint32_t next = 0;
  for (std::uint32_t r = 0; r < nr_; ++r) {
    std::uint32_t& x = id[cls_[nf_ + nl_ + r]];
    if (x == std::numeric_limits<std::uint32_t>::max()) x = next++;
    out[r] = x;
  }
}

}  // namespace

void equitable_replica_classes(const EquitableGraph& g, std::vector<std::uint32_t>& base,
                               std::vector<std::uint32_t>* full) {
  Refiner rf(g);
  rf.run(false);
  rf.replica_ids(base);
  if (!full) return;
  if (rf.discrete()) {  // the full partition refines the base one
    *full = base;
    return;
  }
  rf.run(true);
  rf.replica_ids(*full);
}

}  // namespace tutti
