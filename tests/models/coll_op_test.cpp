// One collective table for the Program (Coll) and the microbenchmarks (CollOp), one bus factor.
#include "tutti/models/coll_op.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace tutti;

TEST_CASE("coll_op: the microbenchmark ops are the Program's collectives plus sendrecv") {
  for (CollOp op : enum_values<CollOp>()) {
    CAPTURE(to_string(op));
    auto c = to_coll(op);
    if (op == CollOp::SendRecv) {
      CHECK(!c);
      CHECK(bus_factor(op, 16) == 1.0);
      continue;
    }
    REQUIRE(c);
    CHECK(std::string(to_string(*c)) == to_string(op));
    for (int n : {1, 2, 4, 8}) CHECK(bus_factor(op, n) == bus_factor(*c, n));
  }
  CHECK(bus_factor(Coll::AllReduce, 4) == 1.5);
  CHECK(bus_factor(Coll::AllToAll, 2) == 0.5);
  CHECK(bus_factor(Coll::Broadcast, 8) == 1.0);
  CHECK(bus_factor(CollOp::SendRecv, 0) == 0.0);
  CHECK(enum_names<CollOp>(", ") == "all_reduce, all_gather, reduce_scatter, alltoall, sendrecv");
  CHECK(parse_enum<CollOp>("sendrecv") == CollOp::SendRecv);
  CHECK(!parse_enum<CollOp>("broadcast"));
}
