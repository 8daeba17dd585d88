// Replica classes of the coarsest equitable partition (equitable.cpp, by splitter classes) against
// the colour refinement the engine used before (every signature rebuilt and renumbered each round
// until the class counts stop changing), on random graphs and on symmetric ones with a few flows
// that break the symmetry: the same classes, numbered alike.
#include "tutti/sim/equitable.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

using namespace tutti;

namespace {

// Canonical ids (first occurrence) of signatures, compared in full.
std::uint32_t renumber(const std::vector<std::vector<std::uint32_t>>& sig,
                       std::vector<std::uint32_t>& out) {
  std::map<std::vector<std::uint32_t>, std::uint32_t> seen;
  out.resize(sig.size());
  for (std::size_t i = 0; i < sig.size(); ++i)
    out[i] = seen.emplace(sig[i], static_cast<std::uint32_t>(seen.size())).first->second;
  return static_cast<std::uint32_t>(seen.size());
}

// The previous engine's refinement (rounds over flows, then links, then replicas), on the flows
// that are not late, or on all of them.
std::vector<std::uint32_t> reference(const EquitableGraph& g, bool with_late) {
  std::vector<std::uint32_t> fs;
  for (std::size_t f = 0; f < g.f_owner.size(); ++f)
    if (with_late || !g.f_late[f]) fs.push_back(static_cast<std::uint32_t>(f));
  const std::size_t nf = fs.size(), nl = g.l_colour.size();
  const int dp = g.replicas;
  std::vector<std::uint32_t> fcol(nf), lcol = g.l_colour, rcol(static_cast<std::size_t>(dp), 0);
  for (std::size_t i = 0; i < nf; ++i) fcol[i] = 2 * g.f_colour[fs[i]] + (g.f_late[fs[i]] ? 1 : 0);
  std::vector<std::vector<std::uint32_t>> lflows(nl), rflows(static_cast<std::size_t>(dp));
  for (std::size_t i = 0; i < nf; ++i) {
    for (std::uint32_t h = g.f_off[fs[i]]; h < g.f_off[fs[i] + 1]; ++h)
      lflows[g.f_links[h]].push_back(static_cast<std::uint32_t>(i));
    if (g.f_owner[fs[i]] >= 0)
      rflows[static_cast<std::size_t>(g.f_owner[fs[i]])].push_back(static_cast<std::uint32_t>(i));
  }
  std::uint32_t nfc = 0, nlc = 0, nrc = 1;
  for (int round = 0;; ++round) {
    std::vector<std::vector<std::uint32_t>> sig(nf);
    std::vector<std::uint32_t> tmp;
    for (std::size_t i = 0; i < nf; ++i) {
      const std::uint32_t f = fs[i];
      sig[i] = {fcol[i], g.f_owner[f] >= 0 ? rcol[static_cast<std::size_t>(g.f_owner[f])] + 1 : 0};
      std::vector<std::uint32_t> ls;
      for (std::uint32_t h = g.f_off[f]; h < g.f_off[f + 1]; ++h) ls.push_back(lcol[g.f_links[h]]);
      std::sort(ls.begin(), ls.end());
      sig[i].insert(sig[i].end(), ls.begin(), ls.end());
    }
    const std::uint32_t nfc2 = renumber(sig, tmp);
    fcol = tmp;
    // Links and replicas alike: own colour, then the sorted colours of their flows.
    auto by_flows = [&](std::vector<std::uint32_t>& col,
                        const std::vector<std::vector<std::uint32_t>>& flows) {
      sig.assign(col.size(), {});
      for (std::size_t k = 0; k < col.size(); ++k) {
        std::vector<std::uint32_t> c;
        for (std::uint32_t i : flows[k]) c.push_back(fcol[i]);
        std::sort(c.begin(), c.end());
        sig[k] = {col[k]};
        sig[k].insert(sig[k].end(), c.begin(), c.end());
      }
      const std::uint32_t n = renumber(sig, tmp);
      col = tmp;
      return n;
    };
    const std::uint32_t nlc2 = by_flows(lcol, lflows);
    const std::uint32_t nrc2 = by_flows(rcol, rflows);
    const bool stable = round > 0 && nfc2 == nfc && nlc2 == nlc && nrc2 == nrc;
    nfc = nfc2;
    nlc = nlc2;
    nrc = nrc2;
    if (stable || nrc == static_cast<std::uint32_t>(dp)) break;
  }
  return rcol;
}

void add_flow(EquitableGraph& g, const std::vector<std::uint32_t>& links, std::int32_t owner,
              std::uint32_t colour, bool late) {
  g.f_links.insert(g.f_links.end(), links.begin(), links.end());
  g.f_off.push_back(static_cast<std::uint32_t>(g.f_links.size()));
  g.f_owner.push_back(owner);
  g.f_colour.push_back(colour);
  g.f_late.push_back(late ? 1 : 0);
}

// Replicas r = 0..dp-1, each with the same flows on links rotated by r * shift (so every replica
// looks alike up to the rotation), then `noise` random flows; colours 0-2 of flows are early,
// 3-4 late (the DP-collective-like flows, owned by none).
EquitableGraph make_graph(std::mt19937& rng, int dp, int nl, int per_replica, int noise) {
  EquitableGraph g;
  g.replicas = dp;
  std::uniform_int_distribution<int> link(0, nl - 1), hops(1, 4), early(0, 2), late(3, 4),
      coin(0, 3), lcol(0, 1);
  for (int l = 0; l < nl; ++l)
    g.l_colour.push_back(static_cast<std::uint32_t>(lcol(rng) * (l % 2)));
  const int shift = std::max(1, nl / dp);
  std::vector<std::pair<std::vector<std::uint32_t>, std::uint32_t>> pattern;
  for (int i = 0; i < per_replica; ++i) {
    std::vector<std::uint32_t> ls;
    for (int h = hops(rng); h > 0; --h) ls.push_back(static_cast<std::uint32_t>(link(rng)));
    pattern.emplace_back(ls, static_cast<std::uint32_t>(early(rng)));
  }
  for (int r = 0; r < dp; ++r)
    for (const auto& [ls, c] : pattern) {
      std::vector<std::uint32_t> moved;
      for (std::uint32_t l : ls)
        moved.push_back(static_cast<std::uint32_t>((l + static_cast<std::uint32_t>(r * shift)) %
                                                   static_cast<std::uint32_t>(nl)));
      add_flow(g, moved, r, c, false);
    }
  // Late flows: rings over the replicas' rotated links.
  for (int r = 0; r < dp; ++r)
    add_flow(g,
             {static_cast<std::uint32_t>((r * shift) % nl),
              static_cast<std::uint32_t>(((r + 1) * shift) % nl)},
             -1, 3, true);
  for (int i = 0; i < noise; ++i) {
    std::vector<std::uint32_t> ls;
    for (int h = hops(rng); h > 0; --h) ls.push_back(static_cast<std::uint32_t>(link(rng)));
    const bool is_late = coin(rng) == 0;
    add_flow(g, ls,
             is_late || coin(rng) == 0
                 ? -1
                 : static_cast<std::int32_t>(rng() % static_cast<unsigned>(dp)),
             static_cast<std::uint32_t>(is_late ? late(rng) : early(rng)), is_late);
  }
  return g;
}

}  // namespace

TEST_CASE("equitable partition: replica classes equal the round-by-round colour refinement's") {
  std::mt19937 rng(12345);
  int nontrivial = 0, split_by_late = 0;
  for (int t = 0; t < 400; ++t) {
    const int dp = 2 + t % 11, nl = 6 + static_cast<int>(rng() % 40);
    const int per = 1 + static_cast<int>(rng() % 6), noise = static_cast<int>(rng() % 4);
    const EquitableGraph g = make_graph(rng, dp, nl, per, noise);
    std::vector<std::uint32_t> base, full, base_only;
    equitable_replica_classes(g, base, &full);
    equitable_replica_classes(g, base_only, nullptr);
    const std::vector<std::uint32_t> want_base = reference(g, false),
                                     want_full = reference(g, true);
    CHECK(base == want_base);
    CHECK(full == want_full);
    CHECK(base_only == base);
    const std::uint32_t nb = *std::max_element(base.begin(), base.end()) + 1;
    const std::uint32_t nfull = *std::max_element(full.begin(), full.end()) + 1;
    if (nb > 1 && nb < static_cast<std::uint32_t>(dp)) ++nontrivial;
    if (nfull > nb) ++split_by_late;
  }
  // The cases exercise partial groupings and strict groups finer than the default ones.
  CHECK(nontrivial > 20);
  CHECK(split_by_late > 20);
}

TEST_CASE("equitable partition: a ring of replicas is one class until a flow breaks it") {
  // Six replicas, each with one flow over its own two links of a ring of twelve links: one class.
  // A late flow on replica 0's first link sets replica 0 apart; refined on, its neighbours on the
  // ring differ from the far ones only through the links they share (none here), so the classes
  // are {0} and the rest.
  EquitableGraph g;
  g.replicas = 6;
  g.l_colour.assign(12, 0);
  for (int r = 0; r < 6; ++r)
    add_flow(g, {static_cast<std::uint32_t>(2 * r), static_cast<std::uint32_t>(2 * r + 1)}, r, 0,
             false);
  add_flow(g, {0}, -1, 1, true);
  std::vector<std::uint32_t> base, full;
  equitable_replica_classes(g, base, &full);
  CHECK(base == std::vector<std::uint32_t>(6, 0));
  CHECK(full == std::vector<std::uint32_t>{0, 1, 1, 1, 1, 1});
  CHECK(reference(g, true) == full);
  // Flows shared along the ring (replica r's second link is replica r + 1's first) carry the
  // difference around it: with the late flow, replicas sort by their distance from replica 0.
  EquitableGraph h;
  h.replicas = 6;
  h.l_colour.assign(6, 0);
  for (int r = 0; r < 6; ++r)
    add_flow(h, {static_cast<std::uint32_t>(r), static_cast<std::uint32_t>((r + 1) % 6)}, r, 0,
             false);
  add_flow(h, {0}, -1, 1, true);
  equitable_replica_classes(h, base, &full);
  CHECK(base == std::vector<std::uint32_t>(6, 0));
  CHECK(full == reference(h, true));
  CHECK(*std::max_element(full.begin(), full.end()) + 1 > 2);
}
