#include <doctest/doctest.h>

#include "tutti/core/error.hpp"
#include "tutti/models/program.hpp"

using namespace tutti;

TEST_CASE("layout: --parallel flag parses every key") {
  Layout l = parse_layout_flag("tp=8,pp=4,cp=2,ep=1,zero=1,vp=2,mb=1,dp=2");
  CHECK(l.tp == 8);
  CHECK(l.pp == 4);
  CHECK(l.cp == 2);
  CHECK(l.vp == 2);
  CHECK(l.schedule == PipeSchedule::Interleaved);
  CHECK(l.gpus() == 8 * 4 * 2 * 2);
  CHECK_THROWS_AS(parse_layout_flag("tp=0"), InputError);
  CHECK_THROWS_AS(parse_layout_flag("tq=2"), InputError);
  CHECK_THROWS_AS(parse_layout_flag("tp"), InputError);
}

TEST_CASE("layout: Megatron rank order and groups") {
  Layout l;
  l.tp = 2; l.cp = 1; l.dp = 3; l.pp = 2;
  CHECK(rank_of(l, 1, 0, 2, 1) == 1 + 2 * (0 + 1 * (2 + 3 * 1)));
  for (int r = 0; r < l.gpus(); ++r) {
    auto c = coords_of(l, r);
    CHECK(rank_of(l, c.tp, c.cp, c.dp, c.pp) == r);
  }
  CHECK(group_ranks(l, 0, GroupDim::TP) == std::vector<int>{0, 1});
  CHECK(group_ranks(l, 0, GroupDim::DP) == std::vector<int>{0, 2, 4});
  CHECK(group_ranks(l, 0, GroupDim::PP) == std::vector<int>{0, 6});
}
