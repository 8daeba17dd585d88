// Issue 18 point 3: sharding stages as layout keys (zero=0..3, shard_group, reshard) and the
// collectives and memory each one implies.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"

using namespace tutti;

namespace {

std::string model(const char* name) {
  return std::string(TUTTI_SOURCE_DIR) + "/models/" + name;
}

struct Traffic {
  int count = 0;
  double bytes = 0;
};

/// Collectives of stage `stage` by "<coll>/<group>/<name>".
std::map<std::string, Traffic> traffic(const Program& p, int stage = 0) {
  std::map<std::string, Traffic> t;
  for (const Op& op : p.classes[stage].ops)
    if (op.kind == OpKind::Collective) {
      auto& x =
          t[std::string(to_string(op.coll)) + "/" + to_string(op.group) + "/" + p.names[op.name]];
      ++x.count;
      x.bytes += op.bytes;
    }
  return t;
}

int count_coll(const Program& p, Coll c, GroupDim g, int stage = 0) {
  int n = 0;
  for (const Op& op : p.classes[stage].ops)
    n += op.kind == OpKind::Collective && op.coll == c && op.group == g;
  return n;
}

/// tiny-gpt's file layout (tp=2, pp=2, mb=4) reset to plain data parallelism, then `parallel`.
Layout layout(const Workload& w, const std::string& parallel, int gpus) {
  Workload dp_only = w;
  if (dp_only.layout) {
    dp_only.layout->tp = dp_only.layout->pp = dp_only.layout->micro_batch = 1;
  }
  return resolve_layout(dp_only, parallel, gpus);
}

Program expand(const Workload& w, const std::string& parallel, int gpus) {
  const Layout l = layout(w, parallel, gpus);
  check_layout(w, l, 0);
  return expand_program(w, l);
}

}  // namespace

TEST_CASE("sharding: layout keys parse, print and reject bad values") {
  Layout l = parse_layout_flag("zero=3,shard_group=8,reshard=0");
  CHECK(l.zero == 3);
  CHECK(l.shard_group == 8);
  CHECK(l.reshard == 0);
  CHECK_FALSE(l.reshard_after_forward());
  Layout d = parse_layout_flag("zero=3,pp=1");
  CHECK(d.reshard == -1);
  CHECK(d.reshard_after_forward());  // torchtitan default without PP
  CHECK_FALSE(parse_layout_flag("zero=3,pp=4").reshard_after_forward());  // ... and with PP
  Layout shown = parse_layout_flag("zero=3,pp=4,dp=16,shard_group=4");
  CHECK(to_string(shown).find(",shard_group=4") != std::string::npos);
  CHECK(to_string(shown).find(",reshard=0") !=
        std::string::npos);  // the default that applies is shown
  CHECK(to_string(parse_layout_flag("zero=1")).find("reshard") == std::string::npos);
  Layout rt = parse_layout_flag(to_string(shown));
  CHECK(rt.shard_group == 4);
  CHECK(rt.reshard == 0);
  for (const char* bad : {"reshard=2", "reshard=-1", "shard_group=-1", "shard_group=x"})
    CHECK_THROWS_AS(parse_layout_flag(bad), InputError);
}

TEST_CASE("sharding: structural errors name the key and what would fit") {
  const Workload w = load_workload(model("tiny-gpt.json"), {"training.global_batch=64"});
  auto problem = [&](const char* p) -> std::string {
    try {
      check_layout(w, layout(w, p, 16), 0);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(problem("zero=1,shard_group=4").empty());
  CHECK(problem("zero=1,shard_group=3").find("shard_group=3 does not divide the 16") !=
        std::string::npos);
  CHECK(problem("zero=0,shard_group=4").find("needs zero >= 1") != std::string::npos);
  CHECK(problem("zero=1,reshard=0").find("applies to zero=3 only") != std::string::npos);
  CHECK(problem("zero=3,reshard=0").empty());
}

TEST_CASE(
    "sharding: zero=0 all-reduces gradients, zero=1 and 2 reduce-scatter and all-gather the same "
    "bytes") {
  const Workload w = load_workload(model("tiny-gpt.json"), {"training.global_batch=64"});
  const Program z0 = expand(w, "zero=0", 8), z1 = expand(w, "zero=1", 8),
                z2 = expand(w, "zero=2", 8);
  CHECK(count_coll(z0, Coll::AllReduce, GroupDim::DP) > 0);
  CHECK(count_coll(z0, Coll::ReduceScatter, GroupDim::DP) == 0);
  CHECK(count_coll(z0, Coll::AllGather, GroupDim::DP) == 0);
  CHECK(count_coll(z1, Coll::AllReduce, GroupDim::DP) == 0);
  CHECK(count_coll(z1, Coll::ReduceScatter, GroupDim::DP) > 0);
  CHECK(count_coll(z1, Coll::AllGather, GroupDim::DP) > 0);
  auto t1 = traffic(z1), t2 = traffic(z2);
  REQUIRE(t1.size() == t2.size());
  for (const auto& [k, v] : t1) {
    CHECK(t2[k].count == v.count);
    CHECK(t2[k].bytes == doctest::Approx(v.bytes));
  }
  // Memory: each stage shards one more state.
  const Layout l0 = layout(w, "zero=0", 8), l1 = layout(w, "zero=1", 8),
               l2 = layout(w, "zero=2", 8), l3 = layout(w, "zero=3", 8);
  const auto m0 = memory_per_gpu(w, l0), m1 = memory_per_gpu(w, l1), m2 = memory_per_gpu(w, l2),
             m3 = memory_per_gpu(w, l3);
  CHECK(m1.optimizer_bytes == doctest::Approx(m0.optimizer_bytes / 8));
  CHECK(m1.gradients_bytes == doctest::Approx(m0.gradients_bytes));
  CHECK(m2.gradients_bytes == doctest::Approx(m0.gradients_bytes / 8));
  CHECK(m2.weights_bytes == doctest::Approx(m0.weights_bytes));
  CHECK(m3.weights_bytes == doctest::Approx(m0.weights_bytes / 8));
}

TEST_CASE(
    "sharding: zero=3 with pipelining gathers once per iteration with reshard=0, per micro-batch "
    "with reshard=1") {
  // 12 layers, pp=2 (6 layers a stage), dp=4, 8 micro-batches.
  const Workload w = load_workload(model("tiny-gpt.json"), {"training.global_batch=32"});
  const Program keep = expand(w, "pp=2,zero=3,reshard=0", 8),
                free = expand(w, "pp=2,zero=3,reshard=1", 8);
  const Program dflt = expand(w, "pp=2,zero=3", 8);
  const int M = 8;
  for (int st = 0; st < 2; ++st) {
    const int gk = count_coll(keep, Coll::AllGather, GroupDim::DP, st);
    const int gf = count_coll(free, Coll::AllGather, GroupDim::DP, st);
    // Stage 0: 6 layers + embedding; stage 1: 6 layers + head.
    CHECK(gk == 7);
    // reshard=1: forward and backward of every micro-batch (the embedding's backward needs no
    // gather: its weight gradient is a scatter-add of the output gradient).
    CHECK(gf == M * 7 + M * (st == 0 ? 6 : 7));
    CHECK(count_coll(dflt, Coll::AllGather, GroupDim::DP, st) == gk);  // torchtitan's PP default
    // Gradients: one reduce-scatter per layer per iteration (no sync before the last backward).
    CHECK(count_coll(keep, Coll::ReduceScatter, GroupDim::DP, st) == 7);
    CHECK(count_coll(free, Coll::ReduceScatter, GroupDim::DP, st) == 7);
  }
  // reshard=0 holds the stage's gathered parameters: more memory than reshard=1.
  const auto mk = memory_per_gpu(w, keep.layout), mf = memory_per_gpu(w, free.layout);
  CHECK(mk.temporary_bytes > mf.temporary_bytes);
  CHECK(mk.weights_bytes == doctest::Approx(mf.weights_bytes));
}

TEST_CASE(
    "sharding: zero=3 without pipelining reduce-scatters per micro-batch, reshard=0 drops the "
    "backward gathers") {
  const Workload w = load_workload(model("tiny-gpt.json"), {"training.global_batch=32"});
  const Program free = expand(w, "zero=3", 8), keep = expand(w, "zero=3,reshard=0", 8);
  const int M = 4, units = 12 + 2;  // 12 layers, embedding and head
  CHECK(count_coll(free, Coll::AllGather, GroupDim::DP) == M * units + M * (units - 1));
  CHECK(count_coll(keep, Coll::AllGather, GroupDim::DP) == M * units);
  CHECK(count_coll(free, Coll::ReduceScatter, GroupDim::DP) == M * units);
  CHECK(count_coll(keep, Coll::ReduceScatter, GroupDim::DP) == M * units);
}

TEST_CASE(
    "sharding: hybrid shard groups reduce-scatter inside, all-reduce the shard across groups") {
  const Workload w = load_workload(model("tiny-gpt.json"), {"training.global_batch=64"});
  const Program full = expand(w, "zero=3", 16), hyb = expand(w, "zero=3,shard_group=4", 16);
  const Layout& l = hyb.layout;
  REQUIRE(l.dp == 16);
  // Groups: shard groups are 4 consecutive dp ranks, replica groups stride 4; they tile the DP
  // group.
  std::set<int> covered;
  for (int d = 0; d < l.dp; ++d) {
    const int r = rank_of(l, 0, 0, d, 0);
    auto sh = group_ranks(l, r, GroupDim::DPShard), rep = group_ranks(l, r, GroupDim::DPReplica);
    CHECK(sh.size() == 4);
    CHECK(rep.size() == 4);
    CHECK(std::find(sh.begin(), sh.end(), r) != sh.end());
    CHECK(std::find(rep.begin(), rep.end(), r) != rep.end());
    CHECK(sh.front() == rank_of(l, 0, 0, d / 4 * 4, 0));
    CHECK(rep.front() == rank_of(l, 0, 0, d % 4, 0));
    covered.insert(sh.front());
  }
  CHECK(covered.size() == 4);
  CHECK(count_coll(hyb, Coll::AllGather, GroupDim::DP) == 0);
  CHECK(count_coll(hyb, Coll::AllGather, GroupDim::DPShard) ==
        count_coll(full, Coll::AllGather, GroupDim::DP));
  CHECK(count_coll(hyb, Coll::ReduceScatter, GroupDim::DPShard) ==
        count_coll(full, Coll::ReduceScatter, GroupDim::DP));
  CHECK(count_coll(hyb, Coll::AllReduce, GroupDim::DPReplica) ==
        count_coll(full, Coll::ReduceScatter, GroupDim::DP));
  double rs = 0, ar = 0;
  for (const Op& op : hyb.classes[0].ops) {
    if (op.kind != OpKind::Collective) continue;
    if (op.coll == Coll::ReduceScatter && op.group == GroupDim::DPShard) rs += op.bytes;
    if (op.coll == Coll::AllReduce && op.group == GroupDim::DPReplica) ar += op.bytes;
  }
  CHECK(ar == doctest::Approx(rs / 4));  // the reduced shard crosses the replicas
  // Memory: states sharded over 4 ranks, not 16.
  const auto mf = memory_per_gpu(w, full.layout), mh = memory_per_gpu(w, hyb.layout);
  CHECK(mh.optimizer_bytes == doctest::Approx(4 * mf.optimizer_bytes));
  CHECK(mh.weights_bytes == doctest::Approx(4 * mf.weights_bytes));
  // zero=1 with a shard group: the optimizer's parameter all-gather stays in the group too.
  const Program h1 = expand(w, "zero=1,shard_group=4", 16);
  CHECK(count_coll(h1, Coll::AllGather, GroupDim::DPShard) > 0);
  CHECK(count_coll(h1, Coll::AllReduce, GroupDim::DPReplica) > 0);
  CHECK(count_coll(h1, Coll::AllGather, GroupDim::DP) == 0);
}
