// The op graph and ready list both DES engines walk (op_graph.hpp).
#include "tutti/sim/op_graph.hpp"

#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "tutti/core/error.hpp"

using namespace tutti;

namespace {
Op op(OpKind k, Stream s, std::uint16_t name, std::uint32_t dep_begin = 0,
      std::uint32_t dep_count = 0) {
  Op o;
  o.kind = k;
  o.stream = s;
  o.name = name;
  o.dep_begin = dep_begin;
  o.dep_count = dep_count;
  return o;
}
}  // namespace

TEST_CASE("op_graph: successors, stream order, indegrees and name occurrences") {
  RankClass rc;
  rc.deps = {0, 1};
  rc.ops = {op(OpKind::Gemm, Stream::Compute, 7),         // 0
            op(OpKind::Send, Stream::Compute, 8),         // 1: after 0 (stream)
            op(OpKind::Gemm, Stream::Compute, 7, 0, 2)};  // 2: deps 0, 1 and stream after 1
  OpGraph g = build_op_graph(rc);
  CHECK(g.indeg0 == std::vector<std::uint32_t>{0, 1, 3});
  CHECK(g.stream_next == std::vector<std::int32_t>{1, 2, -1});
  CHECK(g.done_next == std::vector<std::int32_t>{1, -1, -1});  // the send's stream: at issue
  CHECK(g.occurrence == std::vector<std::uint32_t>{0, 0, 1});
  CHECK(g.succ_off == std::vector<std::uint32_t>{0, 1, 2, 2});
  CHECK(g.succ == std::vector<std::uint32_t>{2, 2});

  // Completing op 0 releases its successor and its stream's next op; a send (op 1) released its
  // stream when issued, so its completion releases only its successors.
  std::vector<std::uint32_t> released;
  release_successors(g, 0, [&](std::uint32_t j) { released.push_back(j); });
  CHECK(released == std::vector<std::uint32_t>{2, 1});
  released.clear();
  release_successors(g, 1, [&](std::uint32_t j) { released.push_back(j); });
  CHECK(released == std::vector<std::uint32_t>{2});

  RankClass bad;
  bad.deps = {1};
  bad.ops = {op(OpKind::Gemm, Stream::Compute, 0, 0, 1), op(OpKind::Gemm, Stream::Compute, 0)};
  CHECK_THROWS_AS(build_op_graph(bad), InternalError);
}

TEST_CASE("op_graph: the ready list starts ops last in, first out, and refuses an underflow") {
  ReadyOps<std::pair<int, std::uint32_t>> ready;
  ready.push({0, 2});
  ready.push({0, 1});
  std::uint32_t indeg = 2;
  std::vector<std::pair<int, std::uint32_t>> started;
  ready.drain([&](std::pair<int, std::uint32_t> k) {
    started.push_back(k);
    if (k.second == 1) {
      ready.release(indeg, {1, 5}, "test");  // one dependency left
      ready.release(indeg, {1, 5}, "test");  // ready now
    }
  });
  CHECK(started == std::vector<std::pair<int, std::uint32_t>>{{0, 1}, {1, 5}, {0, 2}});
  CHECK(indeg == 0);
  CHECK_THROWS_AS(ready.release(indeg, {1, 5}, "test"), InternalError);
}
