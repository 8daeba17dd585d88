// Max-min fair sharing (CM02) against hand-solved cases.
#include "tutti/sim/network.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using tutti::FlowNetwork;

namespace {
// Runs the network until idle; returns the completion time of each set tag in order.
std::vector<double> run_all(FlowNetwork& net, std::size_t sets) {
  std::vector<double> t(sets, -1);
  std::vector<std::uint64_t> done;
  while (net.next_event_time() < FlowNetwork::kNever) {
    double now = net.next_event_time();
    done.clear();
    net.advance(now, done);
    for (auto tag : done) t[tag] = now;
  }
  return t;
}
}  // namespace

TEST_CASE("two flows sharing one link get half each") {
  FlowNetwork net({10.0}, {0.0});
  std::uint32_t l = 0;
  auto a = net.open_set(0);
  net.add_flow(a, &l, 1, 10.0);
  auto b = net.open_set(1);
  net.add_flow(b, &l, 1, 10.0);
  net.start_set(a, 0);
  net.start_set(b, 0);
  std::vector<std::uint64_t> done;
  net.advance(0, done);
  CHECK(net.flow_rate(a, 0) == doctest::Approx(5.0));
  CHECK(net.flow_rate(b, 0) == doctest::Approx(5.0));
  auto t = run_all(net, 2);
  CHECK(t[0] == doctest::Approx(2.0));
  CHECK(t[1] == doctest::Approx(2.0));
}

TEST_CASE("bottleneck chain: the constrained flow leaves the rest to the other") {
  // Link 0 (cap 10) carries flows A and B; link 1 (cap 4) carries A only.
  FlowNetwork net({10.0, 4.0}, {0.0, 0.0});
  std::uint32_t pa[] = {0, 1}, pb[] = {0};
  auto s = net.open_set(0);
  net.add_flow(s, pa, 2, 4.0);
  net.add_flow(s, pb, 1, 6.0);
  net.start_set(s, 0);
  std::vector<std::uint64_t> done;
  net.advance(0, done);
  CHECK(net.flow_rate(s, 0) == doctest::Approx(4.0));
  CHECK(net.flow_rate(s, 1) == doctest::Approx(6.0));
  auto t = run_all(net, 1);
  CHECK(t[0] == doctest::Approx(1.0));
}

TEST_CASE("parking lot: the long flow gets the same share as each short one, then the rest") {
  // Three links of capacity 1; flow L crosses all three, flows S1..S3 one each.
  FlowNetwork net({1.0, 1.0, 1.0}, {0.0, 0.0, 0.0});
  std::uint32_t all[] = {0, 1, 2};
  auto sl = net.open_set(0);
  net.add_flow(sl, all, 3, 2.0);  // 2 bytes
  auto ss = net.open_set(1);
  for (std::uint32_t l = 0; l < 3; ++l) net.add_flow(ss, &l, 1, 1.0);  // 1 byte each
  net.start_set(sl, 0);
  net.start_set(ss, 0);
  std::vector<std::uint64_t> done;
  net.advance(0, done);
  CHECK(net.flow_rate(sl, 0) == doctest::Approx(0.5));
  for (int i = 0; i < 3; ++i) CHECK(net.flow_rate(ss, i) == doctest::Approx(0.5));
  auto t = run_all(net, 2);
  // Short flows: 1 byte at 0.5 -> t = 2. Long flow: 1 byte by t = 2, then 1 byte at rate 1 -> t
  // = 3.
  CHECK(t[1] == doctest::Approx(2.0));
  CHECK(t[0] == doctest::Approx(3.0));
}

TEST_CASE("latency first, then bandwidth, a flow in latency does not take bandwidth") {
  FlowNetwork net({10.0}, {1.0});
  std::uint32_t l = 0;
  auto a = net.open_set(0);
  net.add_flow(a, &l, 1, 10.0);  // 1 s latency + 1 s transfer
  net.start_set(a, 0);
  auto t = run_all(net, 1);
  CHECK(t[0] == doctest::Approx(2.0));
  // Two flows; the second starts at 0.5 s: from 1.0 to 1.5 the first is alone.
  FlowNetwork n2({10.0}, {1.0});
  auto x = n2.open_set(0);
  n2.add_flow(x, &l, 1, 10.0);
  n2.start_set(x, 0);
  std::vector<std::uint64_t> done;
  n2.advance(n2.next_event_time(), done);  // x activates at 1.0
  auto y = n2.open_set(1);
  n2.add_flow(y, &l, 1, 10.0);
  n2.start_set(y, 1.0);  // activates at 2.0; x has 0 bytes left by then
  auto t2 = run_all(n2, 2);
  CHECK(t2[0] == doctest::Approx(2.0));
  CHECK(t2[1] == doctest::Approx(3.0));
}

TEST_CASE("scaling bytes and latency by R scales an isolated timeline by R") {
  auto run = [](double R) {
    FlowNetwork net({10.0, 5.0, 8.0}, {0.1, 0.3, 0.2});
    std::uint32_t p0[] = {0, 1}, p1[] = {1, 2}, p2[] = {0};
    auto s = net.open_set(0);
    net.add_flow(s, p0, 2, 3.0 * R, R);
    net.add_flow(s, p1, 2, 7.0 * R, R);
    net.add_flow(s, p2, 1, 2.0 * R, R);
    net.start_set(s, 0);
    return run_all(net, 1)[0];
  };
  double one = run(1);
  CHECK(run(7) == doctest::Approx(7 * one).epsilon(1e-12));
  CHECK(one > 1.0);
}

TEST_CASE("an empty set and zero-byte flows complete after their latency") {
  FlowNetwork net({10.0}, {0.25});
  auto e = net.open_set(0);
  net.start_set(e, 0);
  std::uint32_t l = 0;
  auto z = net.open_set(1);
  net.add_flow(z, &l, 1, 0.0);
  net.start_set(z, 0);
  auto t = run_all(net, 2);
  CHECK(t[0] == doctest::Approx(0.0));
  CHECK(t[1] == doctest::Approx(0.25));
}

TEST_CASE("the incremental solver gives the rates of a full re-solve on random instances") {
  // Random networks (seeded, so the instances are the same everywhere): links with a few
  // distinct capacities (ties, as in symmetric traffic) or all different (many levels, the heap
  // phase), flow sets of 1-12 flows on paths of 1-5 links started at random times. The same
  // instance runs twice in lock step, incremental and full; after every event every started
  // flow's rate and, at the end, every set's completion time must agree to 1e-9 relative.
  // Instances 40-59 add bundle-like links (4-16 times the others' capacity), which are slack
  // while few flows cross them and couple when many do (the reference couples at every link).
  std::mt19937 gen(20261201);
  auto uni = [&] { return static_cast<double>(gen()) / 4294967296.0; };  // [0, 1)
  auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(gen() % n); };
  std::uint64_t inc_rerates = 0, full_rerates = 0;
  for (int inst = 0; inst < 60; ++inst) {
    CAPTURE(inst);
    const std::uint32_t L = 8 + pick(40);
    const bool few_levels = inst % 2 == 0, bundles = inst >= 40;
    std::vector<double> cap(L), lat(L);
    for (std::uint32_t l = 0; l < L; ++l) {
      cap[l] = few_levels ? 10.0 * (1 + pick(3)) : 1.0 + 99.0 * uni();
      if (bundles && pick(3) == 0) cap[l] *= 4.0 * (1 + pick(4));
      lat[l] = uni() < 0.5 ? 0.0 : 1e-3 * uni();
    }
    FlowNetwork inc(cap, lat), full(cap, lat);
    full.set_incremental(false);
    struct SetInfo {
      double start;
      std::vector<std::vector<std::uint32_t>> paths;
      std::vector<double> bytes;
    };
    const std::size_t nsets = 5 + pick(30);
    std::vector<SetInfo> sets(nsets);
    for (auto& si : sets) {
      si.start = few_levels ? 0.5 * pick(8) : 4.0 * uni();
      const std::uint32_t nf = 1 + pick(12);
      for (std::uint32_t f = 0; f < nf; ++f) {
        std::vector<std::uint32_t> path;
        const std::uint32_t hops = 1 + pick(5);
        while (path.size() < hops) {
          std::uint32_t l = pick(L);
          bool dup = false;
          for (auto x : path) dup = dup || x == l;
          if (!dup) path.push_back(l);
        }
        si.paths.push_back(path);
        si.bytes.push_back(few_levels ? 10.0 * (1 + pick(4)) : 1.0 + 50.0 * uni());
      }
    }
    std::vector<FlowNetwork::SetId> id_inc(nsets), id_full(nsets);
    std::vector<double> done_inc(nsets, -1), done_full(nsets, -1);
    std::size_t next_set = 0;  // sets are started in order of start time
    std::vector<std::size_t> order(nsets);
    for (std::size_t i = 0; i < nsets; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return sets[a].start < sets[b].start; });
    std::vector<bool> started(nsets, false);
    std::vector<std::uint64_t> d1, d2;
    int steps = 0;
    while (true) {
      const double ts = next_set < nsets ? sets[order[next_set]].start : FlowNetwork::kNever;
      const double tn = std::min(inc.next_event_time(), full.next_event_time());
      if (ts == FlowNetwork::kNever && tn == FlowNetwork::kNever) break;
      REQUIRE(++steps < 100000);
      if (ts <= tn) {
        const std::size_t k = order[next_set++];
        for (FlowNetwork* n : {&inc, &full}) {
          auto id = n->open_set(k);
          for (std::size_t f = 0; f < sets[k].paths.size(); ++f)
            n->add_flow(id, sets[k].paths[f].data(), sets[k].paths[f].size(), sets[k].bytes[f]);
          n->start_set(id, ts);
          (n == &inc ? id_inc : id_full)[k] = id;
        }
        started[k] = true;
        continue;
      }
      d1.clear();
      d2.clear();
      inc.advance(tn, d1);
      full.advance(tn, d2);
      for (auto tag : d1) done_inc[tag] = tn;
      for (auto tag : d2) done_full[tag] = tn;
      for (std::size_t k = 0; k < nsets; ++k) {
        if (!started[k] || done_inc[k] >= 0 || done_full[k] >= 0) continue;
        for (std::size_t f = 0; f < sets[k].paths.size(); ++f) {
          const double a = inc.flow_rate(id_inc[k], f), b = full.flow_rate(id_full[k], f);
          CHECK(std::abs(a - b) <= 1e-9 * std::max(std::abs(b), 1.0));
        }
      }
    }
    for (std::size_t k = 0; k < nsets; ++k) {
      CHECK(done_inc[k] > 0);
      CHECK(done_inc[k] == doctest::Approx(done_full[k]).epsilon(1e-9));
    }
    inc_rerates += inc.flows_solved();
    full_rerates += full.flows_solved();
  }
  // The reductions are not vacuous: the incremental solver re-rated fewer flows.
  CHECK(inc_rerates < full_rerates);
  MESSAGE("flows re-rated: incremental " << inc_rerates << ", full " << full_rerates);
}

TEST_CASE("clone_flow: a flow added to a started set goes on from where the original is") {
  // Links 0 and 1 (cap 10). Set 0: 20 bytes on link 0. At t = 1 (10 bytes left) a copy joins
  // on link 1 with another set's 5-byte flow: 5 B/s each until t = 2, when that flow and the
  // original end; the copy's last 5 bytes at 10 B/s end at t = 2.5, and so does set 0.
  FlowNetwork net({10.0, 10.0}, {0.0, 0.0});
  std::uint32_t l0 = 0, l1 = 1;
  auto a = net.open_set(0);
  net.add_flow(a, &l0, 1, 20.0);
  net.start_set(a, 0);
  std::vector<std::uint64_t> done;
  net.advance(0, done);
  CHECK(net.flow_rate(a, 0) == doctest::Approx(10.0));
  net.advance(1.0, done);
  auto b = net.open_set(1);
  net.add_flow(b, &l1, 1, 5.0);
  net.start_set(b, 1.0);
  net.clone_flow(a, 0, &l1, 1, 1.0);
  auto t = run_all(net, 2);
  CHECK(t[0] == doctest::Approx(2.5));
  CHECK(t[1] == doctest::Approx(2.0));
  CHECK(net.link_bytes()[1] == doctest::Approx(5.0));  // a copy's bytes are not counted again
  // A flow still in its latency: the copy starts when it does.
  FlowNetwork lat({10.0, 10.0}, {0.5, 0.5});
  auto c = lat.open_set(0);
  lat.add_flow(c, &l0, 1, 10.0);
  lat.start_set(c, 0);
  lat.clone_flow(c, 0, &l1, 1, 0.2);
  CHECK(run_all(lat, 1)[0] == doctest::Approx(1.5));
}

TEST_CASE("flows finishing together leave in (time, flow) order, many at once or one by one") {
  // One-flow sets on their own links: 2,100 long ones first (they finish last, together), then
  // six waves of 300 that finish together, interleaved (the many-at-once path:
  // FlowNetwork::heap_pop_due), and 12 stragglers that finish alone (one by one). Tags are the
  // sets' add order, which is also their flows' order: within a wave, ascending.
  const std::size_t lasting = 2100, waves = 6, per = 300, alone = 12;
  const std::size_t n = lasting + waves * per + alone;
  FlowNetwork net(std::vector<double>(n, 10.0), std::vector<double>(n, 0.0));
  std::vector<double> expect(n);
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::size_t j = k - lasting;
    const double bytes = k < lasting       ? 1000.0
                         : j < waves * per ? 10.0 * static_cast<double>(1 + j % waves)
                                           : 5.0 + 10.0 * static_cast<double>(j % waves);
    auto id = net.open_set(k);
    net.add_flow(id, &k, 1, bytes);
    net.start_set(id, 0.0);
    expect[k] = bytes / 10.0;
  }
  std::vector<std::uint64_t> done, order;
  std::vector<double> at;
  while (net.next_event_time() < FlowNetwork::kNever) {
    const double now = net.next_event_time();
    done.clear();
    net.advance(now, done);
    for (auto tag : done) {
      order.push_back(tag);
      at.push_back(now);
    }
  }
  REQUIRE(order.size() == n);
  for (std::size_t i = 0; i < n; ++i) CHECK(at[i] == doctest::Approx(expect[order[i]]));
  for (std::size_t i = 1; i < n; ++i) {
    CHECK(at[i - 1] <= at[i]);
    if (at[i - 1] == at[i]) CHECK(order[i - 1] < order[i]);
  }
  CHECK(net.active_flows() == 0);
}
