// Max-min fair sharing (CM02) against hand-solved cases.
#include <doctest/doctest.h>

#include <vector>

#include "tutti/sim/network.hpp"

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
  // Short flows: 1 byte at 0.5 -> t = 2. Long flow: 1 byte by t = 2, then 1 byte at rate 1 -> t = 3.
  CHECK(t[1] == doctest::Approx(2.0));
  CHECK(t[0] == doctest::Approx(3.0));
}

TEST_CASE("latency first, then bandwidth; a flow in latency does not take bandwidth") {
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
