// `tutti topo --collectives`: the predicted nccl-tests table (issue 24).
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include "../support/run.hpp"

using namespace tutti::testing;

TEST_CASE(
    "topo --collectives: size, algbw and busbw per collective and group, busbw = algbw x bus "
    "factor") {
  auto r = run_tutti({"topo", src("topologies/h100-64gpu-fattree.json"), "--collectives", "--sizes",
                      "1MiB:1GiB", "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  auto j = r.json();
  REQUIRE(j["groups"].size() == 3);  // one node, two nodes, the cluster
  CHECK(j["groups"][0]["ranks"] == 8);
  CHECK(j["groups"][1]["ranks"] == 16);
  CHECK(j["groups"][2]["ranks"] == 64);
  std::set<std::string> ops;
  for (const auto& g : j["groups"]) {
    const int n = g["ranks"].get<int>();
    for (const auto& c : g["collectives"]) {
      const std::string op = c["op"].get<std::string>();
      ops.insert(op);
      const double factor = op == "all_reduce"  ? 2.0 * (n - 1) / n
                            : op == "broadcast" ? 1.0
                                                : (n - 1.0) / n;
      CHECK(c["bus_factor"].get<double>() == doctest::Approx(factor));
      REQUIRE(c["points"].size() == 6);  // 1 MiB to 1 GiB, factor 4
      double prev_algbw = 0;
      for (const auto& p : c["points"]) {
        const double size = p["size_bytes"], t = p["time_s"], algbw = p["algbw_Bps"],
                     busbw = p["busbw_Bps"];
        CHECK(t > 0);
        CHECK(algbw == doctest::Approx(size / t));
        CHECK(busbw == doctest::Approx(algbw * factor));
        // Larger messages amortise latency: algbw does not fall much with size.
        CHECK(algbw >= 0.8 * prev_algbw);
        prev_algbw = algbw;
        // No collective beats the GPU's NVLink (H100: 450 GB/s each way) in bus bandwidth by more
        // than NVLS's in-switch reduction gains (NCCL reports ~480 GB/s busbw on 8 H100s, and
        // NVLS tree 487 GB/s on 2 x 8 H100:
        // sim/calibration/microbench/nccl-sweep-p5-h100-2node.json).
        CHECK(busbw < 530e9);
      }
    }
  }
  CHECK(ops == std::set<std::string>{"all_reduce", "all_gather", "reduce_scatter", "alltoall",
                                     "broadcast"});
  // Inside a node (NVLink) a large all-reduce runs much faster than across the 64-GPU fabric.
  const double in_node = j["groups"][0]["collectives"][0]["points"][5]["busbw_Bps"];
  const double cluster = j["groups"][2]["collectives"][0]["points"][5]["busbw_Bps"];
  CHECK(in_node > 100e9);
  CHECK(cluster < in_node);
  // The text table has the nccl-tests columns.
  auto t = run_tutti(
      {"topo", src("topologies/h100-64gpu-fattree.json"), "--collectives", "--sizes", "1MiB:4MiB"});
  REQUIRE(t.rc == 0);
  CHECK(t.out.find("algbw GB/s") != std::string::npos);
  CHECK(t.out.find("busbw GB/s") != std::string::npos);
  CHECK(t.out.find("# all_reduce inside one NVLink domain (8 GPUs)") != std::string::npos);
  CHECK(run_tutti({"topo", src("topologies/h100-64gpu-fattree.json"), "--collectives"}).out ==
        run_tutti({"topo", src("topologies/h100-64gpu-fattree.json"), "--collectives"}).out);
}

TEST_CASE("topo --collectives: bad sizes and factor are usage errors naming the flag") {
  for (const char* bad : {"8GiB:1MiB", "1MiB", "x:1GiB"}) {
    auto r = run_tutti(
        {"topo", src("topologies/dgx-h100-single.json"), "--collectives", "--sizes", bad});
    CHECK(r.rc == 2);
    CHECK(r.err.find("--sizes") != std::string::npos);
  }
  auto f =
      run_tutti({"topo", src("topologies/dgx-h100-single.json"), "--collectives", "--factor", "1"});
  CHECK(f.rc == 2);
  CHECK(f.err.find("--factor") != std::string::npos);
  auto e = run_tutti(
      {"topo", src("topologies/dgx-h100-single.json"), "--collectives", "--export", "simgrid"});
  CHECK(e.rc == 2);
}
