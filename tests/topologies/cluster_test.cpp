#include "tutti/topologies/cluster.hpp"

#include <doctest/doctest.h>

#include <filesystem>

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
