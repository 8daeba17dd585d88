// Benchmark of the topology generators and routing (figures recorded in bench/topologies.md).
//   build/bench_topologies [cluster.json ...]
// For each cluster: time to load + build (catalog parse excluded, best of 5), then routes per
// second over 4M random (src, dst, hash) flows with one reused path vector (no allocation).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) files.push_back(argv[i]);
  if (files.empty())
    files = {std::string(TUTTI_SOURCE_DIR) + "/topologies/h100-16k-rail-3tier.json",
             std::string(TUTTI_SOURCE_DIR) + "/topologies/h100-16k-rail-3tier-2to1.json",
             std::string(TUTTI_SOURCE_DIR) + "/topologies/dgx-h100-superpod-4su.json",
             std::string(TUTTI_SOURCE_DIR) + "/topologies/dragonfly.json",
             std::string(TUTTI_SOURCE_DIR) + "/topologies/torus.json"};
  tutti::Catalog::builtin();  // parse the embedded catalog once, outside the timings
  std::printf("%-32s %8s %9s %9s %10s %12s %10s %8s\n", "cluster", "gpus", "devices", "links",
              "build_ms", "routes/s", "ns/route", "avg_len");
  for (const auto& f : files) {
    double best_ms = 1e300;
    tutti::Cluster c;
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = Clock::now();
      c = tutti::load_cluster(f);
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      best_ms = std::min(best_ms, ms);
    }
    const tutti::Topology& t = *c.topology;
    const int G = t.num_gpus();
    const int kFlows = 4'000'000;
    std::vector<std::uint32_t> src(kFlows), dst(kFlows);
    std::uint64_t x = 88172645463325252ULL;
    auto next = [&] {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      return x;
    };
    for (int i = 0; i < kFlows; ++i) {
      src[i] = static_cast<std::uint32_t>(next() % G);
      do dst[i] = static_cast<std::uint32_t>(next() % G);
      while (dst[i] == src[i] && G > 1);
    }
    std::vector<std::uint32_t> path;
    path.reserve(64);
    std::uint64_t total_len = 0, checksum = 0;
    auto t0 = Clock::now();
    for (int i = 0; i < kFlows; ++i) {
      t.route(static_cast<int>(src[i]), static_cast<int>(dst[i]),
              static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL, path);
      total_len += path.size();
      checksum += path.empty() ? 0 : path[path.size() / 2];
    }
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::string name = f.substr(f.find_last_of('/') + 1);
    std::printf("%-32s %8d %9zu %9zu %10.2f %12.3g %10.1f %8.2f\n", name.c_str(), G,
                t.devices().size(), t.links().size(), best_ms, kFlows / s, s / kFlows * 1e9,
                static_cast<double>(total_len) / kFlows);
    if (checksum == 42) std::printf(" ");  // keep the loop observable
  }
  return 0;
}
