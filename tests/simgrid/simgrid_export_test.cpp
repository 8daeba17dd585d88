// The SimGrid platform export, loaded by SimGrid itself (issue 4, SimGrid part).
#include "tutti/topologies/simgrid_export.hpp"

#include <doctest/doctest.h>
#include <expat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "simgrid_support.hpp"
#include "tutti/core/error.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"

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
    f << "<?xml version='1.0'?>\n<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"><host "
         "id=\"a\"";
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
    const SimgridPlatformProbe p =
        probe_simgrid_platform(path, "gpu" + std::to_string(s), "gpu" + std::to_string(d));
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

// A strict XML parser (expat, non-validating: well-formedness only) reads the export. SimGrid's own
// parser accepts "--" inside a comment; XML does not (issue 24).
namespace {
struct XmlScan {
  int hosts = 0;
  int routes = 0;
  std::vector<std::pair<std::string, std::string>> config;  // prop id, value inside <config>
  bool in_config = false;
  std::string error;
};
XmlScan parse_xml(const std::string& text) {
  XmlScan scan;
  XML_Parser p = XML_ParserCreate(nullptr);
  XML_SetUserData(p, &scan);
  XML_SetElementHandler(
      p,
      [](void* ud, const XML_Char* name, const XML_Char** attrs) {
        auto& s = *static_cast<XmlScan*>(ud);
        const std::string n = name;
        if (n == "host") ++s.hosts;
        if (n == "route") ++s.routes;
        if (n == "config") s.in_config = true;
        if (n == "prop" && s.in_config) {
          std::string id, value;
          for (int i = 0; attrs[i]; i += 2) {
            if (std::string(attrs[i]) == "id") id = attrs[i + 1];
            if (std::string(attrs[i]) == "value") value = attrs[i + 1];
          }
          s.config.emplace_back(id, value);
        }
      },
      [](void* ud, const XML_Char* name) {
        if (std::string(name) == "config") static_cast<XmlScan*>(ud)->in_config = false;
      });
  if (XML_Parse(p, text.data(), static_cast<int>(text.size()), 1) == XML_STATUS_ERROR)
    scan.error = std::string(XML_ErrorString(XML_GetErrorCode(p))) + " at line " +
                 std::to_string(XML_GetCurrentLineNumber(p));
  XML_ParserFree(p);
  return scan;
}
}  // namespace

TEST_CASE("simgrid export: well-formed XML by a strict parser, the network options in <config>") {
  // The parser is strict: the old export's comment ("Run it with --cfg=network/model:CM02") fails.
  CHECK_FALSE(
      parse_xml(
          "<?xml version='1.0'?>\n<!-- Run it with --cfg=network/model:CM02 -->\n<platform/>\n")
          .error.empty());
  ClusterParams cp;
  cp.name = "two-dgx";
  cp.node = "dgx-h100";
  cp.nodes = 2;
  cp.fabric = "fat_tree";
  const Cluster c = make_cluster(cp);
  std::ostringstream os;
  write_simgrid_platform(c, os);
  const std::string xml = os.str();
  const XmlScan scan = parse_xml(xml);
  INFO(scan.error);
  CHECK(scan.error.empty());
  CHECK(scan.hosts == 16);
  CHECK(scan.routes == 16 * 15);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"network/model", "CM02"}, {"network/crosstraffic", "0"}, {"network/TCP-gamma", "0"}};
  CHECK(scan.config == want);
  // No "--" anywhere in a comment.
  for (std::size_t at = xml.find("<!--"); at != std::string::npos; at = xml.find("<!--", at + 4)) {
    const std::size_t end = xml.find("-->", at + 4);
    REQUIRE(end != std::string::npos);
    CHECK(xml.substr(at + 4, end - at - 4).find("--") == std::string::npos);
  }
}
