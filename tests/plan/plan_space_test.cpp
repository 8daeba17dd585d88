// Enumeration of GPU counts and structurally valid parallel layouts.
#include <doctest/doctest.h>

#include <set>

#include "../../sim/plan/src/plan_internal.hpp"

using namespace tutti;

namespace {
SpaceFacts llama70b() {
  SpaceFacts f;
  f.layers = 80;
  f.heads = 64;
  f.kv_heads = 8;
  f.seq_len = 8192;
  f.global_batch = 2048;
  f.ffn_hidden = 28672;
  return f;
}
}  // namespace

TEST_CASE("plan: every enumerated layout is valid and uses every GPU") {
  auto f = llama70b();
  auto layouts = enumerate_layouts(f, {}, 1024, 8);
  REQUIRE(!layouts.empty());
  CHECK(count_layouts(f, {}, 1024, 8) == layouts.size());
  std::set<std::string> seen;
  for (const auto& l : layouts) {
    CHECK(l.gpus() == 1024);
    CHECK(f.heads % l.tp == 0);
    CHECK(f.kv_heads % l.tp == 0);
    CHECK(l.tp <= 8);
    CHECK(l.pp * l.vp <= f.layers);
    CHECK(f.global_batch % (l.dp * l.micro_batch) == 0);
    if (l.vp > 1) {
      CHECK(l.pp > 1);
      CHECK((f.global_batch / (l.dp * l.micro_batch)) % l.pp == 0);
    }
    CHECK(seen.insert(to_string(l)).second);  // no duplicates
  }
  // The Megatron layout Meta-style 70B runs use is in the space.
  bool found = false;
  for (const auto& l : layouts)
    found = found ||
            (l.tp == 8 && l.pp == 4 && l.dp == 32 && l.recompute == Recompute::None && l.vp == 1);
  CHECK(found);
}

TEST_CASE("plan: explicit layout lists restrict the space, MoE adds expert parallelism") {
  auto f = llama70b();
  LayoutSpace s;
  s.tp = {8};
  s.pp = {4};
  s.cp = {1};
  s.vp = {1};
  s.micro_batch = {1};
  s.zero = {1};
  s.shard_group = {0};
  s.recompute = {Recompute::Selective};
  auto one = enumerate_layouts(f, s, 512, 8);
  REQUIRE(one.size() == 1);
  CHECK(one[0].dp == 16);
  CHECK(one[0].sequence_parallel);
  CHECK(enumerate_layouts(f, s, 100, 8).empty());  // 100 GPUs: tp*pp = 32 does not divide

  f.experts = 8;
  f.moe_ffn_hidden = 14336;
  auto moe = enumerate_layouts(f, {}, 64, 8);
  bool ep = false;
  for (const auto& l : moe) {
    if (l.ep > 1) {
      ep = true;
      CHECK(8 % l.ep == 0);
      // EP is carved out of dp, or folded over tp x cp x dp with etp=1 (parallel folding).
      if (l.folded())
        CHECK((l.tp * l.cp * l.dp) % l.ep == 0);
      else
        CHECK(l.dp % l.ep == 0);
    }
  }
  CHECK(ep);
}

TEST_CASE("plan: GPU count ladder") {
  PlanRequest r;
  r.gpus_min = 1024;
  r.gpus_max = 8192;
  CHECK(gpu_counts(r, 8) ==
        std::vector<int>{1024, 1280, 1536, 2048, 2560, 3072, 4096, 5120, 6144, 8192});
  r.gpu_counts = {4096, 100, 1024, 4096, 9000};
  CHECK(gpu_counts(r, 8) == std::vector<int>{1024, 4096});
  r.gpu_counts = {};
  r.gpus_min = 1;
  r.gpus_max = 200;
  CHECK(gpu_counts(r, 72) == std::vector<int>{72, 144});
}
