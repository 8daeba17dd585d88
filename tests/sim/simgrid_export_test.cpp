// The SimGrid platform export, loaded by SimGrid itself (issue 4, SimGrid part).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "simgrid_support.hpp"
#include "tutti/core/error.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/sim/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"
#include "tutti/topologies/simgrid_export.hpp"

using namespace tutti;

namespace {
std::string temp_path(const std::string& name) {
  return std::string(TUTTI_BINARY_DIR) + "/tests/" + name;
}
std::string link_name(std::uint32_t id) {
  std::string s(1, 'L');
  s += std::to_string(id);
  return s;
}
}  // namespace

TEST_CASE("simgrid export: SimGrid loads it and routes as tutti does (hand-built tree)") {
  testing::SmallTree topo(2, 4, 2);
  const std::string path = temp_path("simgrid_export_small.xml");
  {
    std::ofstream f(path);
    write_simgrid_platform(topo, 989e12, f);
  }
  for (auto [s, d] : {std::pair{0, 5}, std::pair{1, 2}, std::pair{7, 3}, std::pair{6, 0}}) {
    const SimgridPlatformProbe p =
        probe_simgrid_platform(path, "gpu" + std::to_string(s), "gpu" + std::to_string(d));
    CHECK(p.host_count == 8);
    CHECK(p.link_count == static_cast<int>(topo.links().size()));
    std::vector<std::uint32_t> want;
    topo.route(s, d, simgrid_export_hash(s, d), want);
    REQUIRE(p.route_links.size() == want.size());
    double lat = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      CHECK(p.route_links[i] == link_name(want[i]));
      lat += topo.links()[want[i]].latency_s;
    }
    CHECK(p.route_latency_s == doctest::Approx(lat).epsilon(1e-12));
  }
  std::remove(path.c_str());
}

TEST_CASE("simgrid export: a missing host and a malformed file are input errors") {
  testing::SmallTree topo(1, 2, 1);
  const std::string path = temp_path("simgrid_export_tiny.xml");
  {
    std::ofstream f(path);
    write_simgrid_platform(topo, 1e12, f);
  }
  CHECK_THROWS_AS(probe_simgrid_platform(path, "gpu0", "gpu9"), InputError);
  {
    std::ofstream f(path);
    f << "<?xml version='1.0'?>\n<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"><host id=\"a\"";
  }
  CHECK_THROWS(probe_simgrid_platform(path, "a", "a"));
  std::remove(path.c_str());
}

TEST_CASE("simgrid export: a 16-GPU DGX H100 fat-tree cluster, loaded by SimGrid") {
  ClusterParams cp;
  cp.name = "two-dgx";
  cp.node = "dgx-h100";
  cp.nodes = 2;
  cp.fabric = "fat_tree";
  const Cluster c = make_cluster(cp);
  const Topology& topo = *c.topology;
  const std::string path = temp_path("simgrid_export_cluster.xml");
  auto hash = [](int s, int d) { return flow_hash(1, s, d); };
  {
    std::ofstream f(path);
    write_simgrid_platform(c, f, hash);
  }
  for (auto [s, d] : {std::pair{0, 9}, std::pair{3, 4}, std::pair{15, 2}}) {
    const SimgridPlatformProbe p = probe_simgrid_platform(path, "gpu" + std::to_string(s), "gpu" + std::to_string(d));
    CHECK(p.host_count == 16);
    CHECK(p.link_count == static_cast<int>(topo.links().size()));
    std::vector<std::uint32_t> want;
    topo.route(s, d, hash(s, d), want);
    REQUIRE(p.route_links.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(p.route_links[i] == link_name(want[i]));
    CHECK(p.route_latency_s == doctest::Approx(topo.path_latency_s(want)).epsilon(1e-12));
    CHECK(p.route_latency_s > 0);
  }
  std::remove(path.c_str());
}
