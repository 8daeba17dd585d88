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

TEST_CASE("layout: tp_overlap parses 0/1, rejects anything else, and prints only when on") {
  CHECK_FALSE(parse_layout_flag("tp=8").tp_overlap);
  Layout on = parse_layout_flag("tp=8,tp_overlap=1");
  CHECK(on.tp_overlap);
  CHECK_FALSE(parse_layout_flag("tp_overlap=0", on).tp_overlap);
  CHECK(to_string(on).find("tp_overlap=1") != std::string::npos);
  CHECK(to_string(parse_layout_flag("tp=8")).find("tp_overlap") == std::string::npos);
  CHECK(parse_layout_flag(to_string(on)).tp_overlap);  // round trip
  for (const char* bad : {"tp_overlap=2", "tp_overlap=yes", "tp_overlap=-1", "tp_overlap="})
    CHECK_THROWS_AS(parse_layout_flag(bad), InputError);
}

TEST_CASE("layout: Megatron rank order and groups") {
  Layout l;
  l.tp = 2;
  l.cp = 1;
  l.dp = 3;
  l.pp = 2;
  CHECK(rank_of(l, 1, 0, 2, 1) == 1 + 2 * (0 + 1 * (2 + 3 * 1)));
  for (int r = 0; r < l.gpus(); ++r) {
    auto c = coords_of(l, r);
    CHECK(rank_of(l, c.tp, c.cp, c.dp, c.pp) == r);
  }
  CHECK(group_ranks(l, 0, GroupDim::TP) == std::vector<int>{0, 1});
  CHECK(group_ranks(l, 0, GroupDim::DP) == std::vector<int>{0, 2, 4});
  CHECK(group_ranks(l, 0, GroupDim::PP) == std::vector<int>{0, 6});
}

TEST_CASE("layout: EP groups are consecutive dp indices, EDP groups the same EP position") {
  Layout l;
  l.tp = 2;
  l.cp = 2;
  l.dp = 4;
  l.pp = 1;
  l.ep = 2;
  // rank 0: tp0 cp0 dp0. EP: dp 0,1 at tp0 cp0. EDP: dp 0,2 for every cp.
  CHECK(group_ranks(l, 0, GroupDim::EP) ==
        std::vector<int>{rank_of(l, 0, 0, 0, 0), rank_of(l, 0, 0, 1, 0)});
  auto edp = group_ranks(l, rank_of(l, 1, 1, 3, 0), GroupDim::EDP);
  CHECK(edp == std::vector<int>{rank_of(l, 1, 0, 1, 0), rank_of(l, 1, 1, 1, 0),
                                rank_of(l, 1, 0, 3, 0), rank_of(l, 1, 1, 3, 0)});
  CHECK(edp.size() == std::size_t(l.dp * l.cp / l.ep));
  CHECK(std::string(to_string(GroupDim::EDP)) == "edp");
}

TEST_CASE("layout: etp=1 folds EP over tp x cp x dp (Megatron parallel folding)") {
  Layout l = parse_layout_flag("tp=4,pp=2,dp=4,ep=8,etp=1");
  CHECK(l.etp == 1);
  CHECK(l.folded());
  CHECK(l.expert_tp() == 1);
  CHECK(l.edp() == 2);
  CHECK(to_string(l).find(",etp=1") != std::string::npos);
  // Stage 1 starts at rank 16; EP groups are 8 consecutive ranks of the stage (two dp indices
  // of four tp ranks), EDP groups the ranks at the same position in each EP group.
  const int r = rank_of(l, 1, 0, 2, 1);  // 16 + 1 + 4*2 = 25
  CHECK(r == 25);
  CHECK(group_ranks(l, r, GroupDim::EP) == std::vector<int>{24, 25, 26, 27, 28, 29, 30, 31});
  CHECK(group_ranks(l, r, GroupDim::EDP) == std::vector<int>{17, 25});
  // Unfolded (etp = tp): EP over dp only.
  Layout u = parse_layout_flag("tp=4,pp=2,dp=4,ep=2");
  CHECK_FALSE(u.folded());
  CHECK(u.expert_tp() == 4);
  CHECK(u.edp() == 2);
  CHECK(to_string(u).find("etp") == std::string::npos);
  CHECK_THROWS_AS(parse_layout_flag("etp=0"), InputError);
}
