#include "tutti/topologies/cluster.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"

using namespace tutti;

namespace {
std::vector<std::string> shipped() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(testing::src("topologies")))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_CASE("cluster: every shipped topology loads and routes valid paths") {
  auto files = shipped();
  REQUIRE(files.size() >= 12);
  std::vector<std::uint32_t> path;
  for (const auto& f : files) {
    CAPTURE(f);
    Cluster c = load_cluster(f);
    const Topology& t = *c.topology;
    REQUIRE(t.num_gpus() == c.gpus());
    const int G = t.num_gpus();
    const int step = std::max(1, G / 61);
    for (int s = 0; s < G; s += step)
      for (int d = (s * 7 + 3) % G, n = 0; n < 24; d = (d + 37 + step) % G, ++n) {
        if (s == d) continue;
        t.route(s, d, static_cast<std::uint64_t>(s) * 1000003u + d, path);
        REQUIRE(!path.empty());
        CHECK(t.links()[path.front()].src == t.gpu_device(s));
        CHECK(t.links()[path.back()].dst == t.gpu_device(d));
        for (std::size_t i = 1; i < path.size(); ++i)
          REQUIRE(t.links()[path[i - 1]].dst == t.links()[path[i]].src);
      }
  }
}

TEST_CASE("cluster: skipping the diameter walk changes nothing but the diameter") {
  // The planner builds its clusters without the diameter route walk (ClusterParams::diameter);
  // every other fact, the bill of materials and the graph must be those of the full build.
  for (const auto& f : shipped()) {
    CAPTURE(f);
    Cluster full = load_cluster(f);
    Cluster quick = parse_cluster(Doc::load(f), false);
    nlohmann::json a = to_json(full), b = to_json(quick);
    CHECK(b["diameter"] == 0);
    CHECK(b["diameter_links"] == 0);
    if (full.gpus() > 1) CHECK(full.facts.diameter_links > 0);
    a.erase("diameter"), a.erase("diameter_links");
    b.erase("diameter"), b.erase("diameter_links");
    CHECK(a == b);
    REQUIRE(quick.topology->links().size() == full.topology->links().size());
    CHECK(quick.topology->devices().size() == full.topology->devices().size());
  }
}

TEST_CASE("cluster: a Clos fabric's links are allocated once, at their final count") {
  // Growing the link vector by doubling copied a 131k-GPU graph several times (bench/plan.md);
  // the generator reserves the exact count, so capacity equals size.
  for (const char* f : {"h100-16k-rail-3tier.json", "dgx-h100-superpod-4su.json",
                        "h100-64gpu-fattree.json", "gb200-nvl72-576.json"}) {
    CAPTURE(f);
    Cluster c = load_cluster(testing::src(std::string("topologies/") + f));
    CHECK(c.topology->links().capacity() == c.topology->links().size());
  }
}
