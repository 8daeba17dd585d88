// tutti's bill of materials against published cluster capital costs
// (tests/data/cost/published-capex.json; docs/facility.md "Checked against a published figure").
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/run.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;
using nlohmann::json;

namespace {

json published() {
  std::ifstream in(testing::src("tests/data/cost/published-capex.json"));
  REQUIRE(in.good());
  return json::parse(in);
}

}  // namespace

TEST_CASE(
    "cost: the bill of materials lands within the stated band of each published cluster capex") {
  const json doc = published();
  REQUIRE(doc.at("figures").size() >= 1);
  for (const auto& f : doc.at("figures")) {
    const std::string id = f.at("id").get<std::string>();
    CAPTURE(id);
    CHECK(!f.at("source").get<std::string>().empty());
    const json& pub = f.at("published");
    const json& cfg = f.at("tutti");
    ClusterParams p;
    p.node = cfg.at("node").get<std::string>();
    p.nodes = cfg.at("nodes").get<int>();
    p.fabric = cfg.at("fabric").get<std::string>();
    p.transport = cfg.at("transport").get<std::string>();
    p.switch_id = cfg.value("switch", std::string());
    const Cluster c = make_cluster(p);
    const int gpus = pub.at("gpus").get<int>();
    REQUIRE(c.gpus() == gpus);
    REQUIRE(c.nodes == pub.at("nodes").get<int>());
    if (pub.contains("switches")) CHECK(c.bom.switches == pub.at("switches").get<long long>());

    const double pub_network =
        pub.at("switches_usd").get<double>() + pub.at("cables_usd").get<double>();
    const double pub_hw = pub.at("servers_usd").get<double>() + pub_network;
    const double ours_hw = c.bom.compute_capex_usd + c.bom.network_capex_usd;
    const double hw_band = f.at("check").at("hardware_per_gpu_band").get<double>();
    const double net_band = f.at("check").at("network_per_gpu_band").get<double>();
    const double hw_dev = ours_hw / pub_hw - 1;
    const double net_dev = c.bom.network_capex_usd / pub_network - 1;
    MESSAGE(id << ": hardware per GPU $" << ours_hw / gpus << " vs published $" << pub_hw / gpus
               << " (" << hw_dev * 100 << "%), network per GPU $" << c.bom.network_capex_usd / gpus
               << " vs $" << pub_network / gpus << " (" << net_dev * 100 << "%)");
    CHECK(std::abs(hw_dev) <= hw_band);
    CHECK(std::abs(net_dev) <= net_band);
    // Storage and facility build-out are not in the published figure: the check must not hide them.
    CHECK(c.bom.storage_capex_usd == 0);
  }
}
