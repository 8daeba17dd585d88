// The topology result read back (topology_result.hpp): real `tutti topo --json` output through the
// strict reader and back is the same document; a malformed key is an InputError naming its path.
#include "tutti/topologies/topology_result.hpp"

#include <doctest/doctest.h>

#include <string>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"

using nlohmann::json;
using tutti::testing::run_tutti;

namespace {

json topo(const std::string& cluster) {
  auto r = run_tutti({"--json", "topo", cluster});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  return r.json();
}

std::string error_of(const json& j) {
  try {
    tutti::topology_result_from_json(j, "topo.json", "architectures.1.topology");
  } catch (const tutti::InputError& e) {
    CHECK(e.file() == "topo.json");
    return e.key_path();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("topology result: real output round-trips through the strict reader") {
  for (const char* cluster : {"topologies/dgx-h100-superpod-1su.json", "topologies/torus.json",
                              "topologies/gb200-nvl72-576.json"}) {
    INFO(cluster);
    const json j = topo(cluster);
    const tutti::TopologyResult t = tutti::topology_result_from_json(j, "topo.json");
    CHECK(tutti::to_json(t).dump() == j.dump());
    CHECK(t.gpus == j.at("gpus").get<long long>());
    CHECK(t.network_capex_usd == j.at("network_capex_usd").get<double>());
    REQUIRE(t.bom.size() == j.at("bom").size());
    double network = 0;
    for (const auto& b : t.bom)
      if (b.network) network += b.price_usd;
    CHECK(network == doctest::Approx(t.network_capex_usd).epsilon(1e-9));
  }
}

TEST_CASE("topology result: a malformed key is an input error naming its path") {
  const json j = topo("topologies/dgx-h100-superpod-1su.json");
  json bad = j;
  bad["network_capex_usd"] = "1M";
  CHECK(error_of(bad) == "architectures.1.topology.network_capex_usd");
  bad = j;
  bad["bom"][0].erase("count");
  CHECK(error_of(bad).find("architectures.1.topology.bom.0") == 0);
  bad = j;
  bad["bom"][1]["network"] = "yes";
  CHECK(error_of(bad) == "architectures.1.topology.bom.1.network");
  bad = j;
  bad["schema_version"] = 7;
  CHECK(error_of(bad) == "architectures.1.topology.schema_version");
}
