// Pareto frontier, objective ranking and the exact merge of slice results.
#include <doctest/doctest.h>

#include <random>

#include "../../sim/plan/src/plan_internal.hpp"

using namespace tutti;

namespace {

Evaluation make(std::uint64_t index, double t, double c, double e) {
  Evaluation x;
  x.index = index;
  x.time_to_train_s = t;
  x.total_cost_usd = c;
  x.energy_J = e;
  return x;
}

// Frontier by brute force: not beaten by any other.
std::vector<std::uint64_t> brute_front(const std::vector<Evaluation>& all) {
  std::vector<std::uint64_t> out;
  for (const auto& a : all) {
    bool beaten = false;
    for (const auto& b : all) beaten = beaten || beats(b, a);
    if (!beaten) out.push_back(a.index);
  }
  return out;
}

std::vector<std::uint64_t> indices(const std::vector<Evaluation>& v) {
  std::vector<std::uint64_t> out;
  for (const auto& e : v) out.push_back(e.index);
  return out;
}

}  // namespace

TEST_CASE("plan: dominance and objective order") {
  auto a = make(0, 1, 1, 1), b = make(1, 2, 1, 1), c = make(2, 1, 1, 1);
  CHECK(dominates(a, b));
  CHECK_FALSE(dominates(b, a));
  CHECK_FALSE(dominates(a, c));  // equal metrics: neither dominates...
  CHECK(beats(a, c));            // ...but the earlier index wins the tie
  CHECK_FALSE(beats(c, a));
  auto fast = make(3, 1, 10, 5), cheap = make(4, 10, 1, 5);
  CHECK(better_for(Objective::Time, fast, cheap));
  CHECK(better_for(Objective::Cost, cheap, fast));
  CHECK(better_for(Objective::Energy, fast, cheap));  // equal energy: time decides
}

TEST_CASE("plan: merging slice frontiers equals the frontier of the whole") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> q(1, 12), noise(0, 2);  // coarse values: many ties
  std::vector<Evaluation> all;
  for (std::uint64_t i = 0; i < 600; ++i) {
    int t = q(rng);  // faster costs more: a real trade-off, so a wide frontier
    all.push_back(make(i, t, 13 - t + noise(rng), q(rng) + t % 3));
  }
  auto expected = brute_front(all);
  REQUIRE(expected.size() > 3);

  for (int parts : {1, 2, 3, 7}) {
    std::vector<ScreenResult> slices(static_cast<std::size_t>(parts));
    for (const auto& e : all) {
      auto& s = slices[e.index * static_cast<std::uint64_t>(parts) / all.size()];
      ++s.feasible;
      pareto_insert(s.pareto, e);
      best_insert(s.best, e, Objective::Cost, 5);
    }
    ScreenResult m = merge(slices, Objective::Cost, 5);
    CHECK(m.feasible == all.size());
    CHECK(indices(m.pareto) == expected);
    // The best five by cost, checked by sorting everything.
    auto sorted = all;
    std::sort(sorted.begin(), sorted.end(), [](const Evaluation& a, const Evaluation& b) {
      return better_for(Objective::Cost, a, b);
    });
    sorted.resize(5);
    CHECK(indices(m.best) == indices(sorted));
    // The cost-optimal configuration is always on the frontier.
    CHECK(std::find(expected.begin(), expected.end(), m.best[0].index) != expected.end());
  }
}

TEST_CASE("plan: slice results survive serialisation exactly") {
  ScreenResult r;
  r.configurations = 12345;
  r.simulated = 678;
  r.pruned = 9;
  r.invalid = 2;
  r.feasible = 3;
  r.violated[1] = 4;
  r.pareto = {make(5, 1.0 / 3, 2e8, 3.3e13), make(9, 0.1, 7, 8)};
  r.best = {make(9, 0.1, 7, 8)};
  Evaluation n = make(11, 5, 5, 5);
  n.violations = kDeadline | kCapex;
  n.violation = 0.25;
  n.layout.tp = 8;
  n.layout.recompute = Recompute::Selective;
  r.nearest = {n};
  r.unbuildable = {3, 17};
  r.min_time_to_train_s = 1.5;
  ScreenResult back = deserialize(serialize(r));
  CHECK(serialize(back) == serialize(r));
  CHECK(back.pareto[0].time_to_train_s == 1.0 / 3);
  CHECK(back.nearest[0].layout.tp == 8);
  CHECK(back.nearest[0].layout.recompute == Recompute::Selective);
  CHECK(back.unbuildable == std::vector<std::uint32_t>{3, 17});
  CHECK_THROWS(deserialize(serialize(r).substr(3)));
}

TEST_CASE("plan: nearest miss prefers configurations that fit in memory") {
  auto mem = make(1, 0, 0, 0), late = make(2, 0, 0, 0);
  mem.violations = kMemory;
  mem.violation = 0.01;
  late.violations = kDeadline;
  late.violation = 0.5;
  CHECK(nearer_miss(late, mem));
  CHECK_FALSE(nearer_miss(mem, late));
}

TEST_CASE("plan: slices partition the index space") {
  for (std::uint64_t n : {0ULL, 1ULL, 7ULL, 1000ULL}) {
    for (int parts : {1, 2, 3, 4, 9}) {
      std::uint64_t next = 0;
      for (int p = 0; p < parts; ++p) {
        auto [b, e] = Planner::slice(n, p, parts);
        CHECK(b == next);
        CHECK(e >= b);
        CHECK(e - b <= n / static_cast<std::uint64_t>(parts) + 1);
        next = e;
      }
      CHECK(next == n);
    }
  }
}
