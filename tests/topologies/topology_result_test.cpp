// The topology result read back (topology_result.hpp): real `tutti topo --json` output through the
// strict reader and back is the same document; a malformed key is an InputError naming its path.
#include "tutti/topologies/topology_result.hpp"

#include <doctest/doctest.h>

#include <string>

#include "../support/result_doc.hpp"

using nlohmann::json;
using tutti::testing::check_corruptions;
using tutti::testing::check_round_trip;
using tutti::testing::KeyMatch;
using tutti::testing::run_json;

namespace {

json topo(const std::string& cluster) {
  return run_json({"--json", "topo", cluster});
}

const auto read_topology = [](const json& j, const std::string& source, const std::string& at) {
  return tutti::topology_result_from_json(j, source, at);
};

}  // namespace

TEST_CASE("topology result: real output round-trips through the strict reader") {
  for (const char* cluster : {"topologies/dgx-h100-superpod-1su.json", "topologies/torus.json",
                              "topologies/gb200-nvl72-576.json"}) {
    INFO(cluster);
    const json j = topo(cluster);
    const tutti::TopologyResult t = check_round_trip(read_topology, j, "topo.json");
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
  check_corruptions(read_topology, topo("topologies/dgx-h100-superpod-1su.json"),
                    {{"/network_capex_usd", "1M", "network_capex_usd"},
                     {"/bom/0/count", std::nullopt, "bom.0", KeyMatch::prefix},
                     {"/bom/1/network", "yes", "bom.1.network"},
                     {"/schema_version", 7, "schema_version"}},
                    "topo.json", "architectures.1.topology");
}
