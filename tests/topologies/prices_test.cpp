// The user's prices (topologies/src/prices.cpp): strict parsing and how they re-price a cluster.
#include "tutti/topologies/prices.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

Prices prices_of(const std::string& text) {
  return parse_prices(Doc::parse(text, "p.json").root());
}

// The InputError message parsing `text` gives ("" when it parses).
std::string error_of(const std::string& text) {
  try {
    prices_of(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

Cluster small_cluster(const std::string& transport = "infiniband") {
  ClusterParams p;
  p.node = "dgx-h100";
  p.nodes = 4;
  p.fabric = "rail_optimized";
  p.transport = transport;
  p.storage = "superpod-good-1su";
  return make_cluster(p);
}

const BomLine* line(const Cluster& c, const std::string& category) {
  for (const auto& l : c.bom.lines)
    if (l.category == category) return &l;
  return nullptr;
}

}  // namespace

TEST_CASE("prices: the shipped example parses and validates against the schema") {
  Prices p = load_prices(testing::src("topologies/prices/example-quote.json"));
  CHECK(p.gpus.at("h100-sxm-80gb").price_usd.value() == 24000);
  CHECK(p.gpus.at("h100-sxm-80gb").cloud_usd_per_s.value() * 3600 == doctest::Approx(2.5));
  CHECK(p.nodes_usd.at("dgx-h100") == 265000);
  CHECK(p.electricity_usd_per_J.value() * 3.6e6 == doctest::Approx(0.065));
  CHECK(p.buildout_usd_per_W.value() == 9);
  CHECK(p.rack_usd_per_s.value() * (365.0 * 86400 / 12) == doctest::Approx(1800));
  auto schema = load_schema(testing::src("schemas/prices.schema.json"));
  auto doc = nlohmann::json::parse(
      Doc::load(testing::src("topologies/prices/example-quote.json")).json().dump());
  auto errs = validate_schema(schema, doc);
  CHECK_MESSAGE(errs.empty(), format_schema_errors(errs));
}

TEST_CASE("prices: bad input names the file, the key path, what was found and what was expected") {
  std::string e = error_of(R"({"gpus": {"h100-fake": {"price": "$1"}}})");
  CHECK(e.find("p.json") != std::string::npos);
  CHECK(e.find("gpus.h100-fake") != std::string::npos);
  e = error_of(R"({"switches": {"quantum-2-qm9700": "30000"}})");  // no unit
  CHECK(e.find("switches.quantum-2-qm9700") != std::string::npos);
  CHECK(e.find("$25000") != std::string::npos);  // the expected form
  e = error_of(R"({"electricity": "$0.06"})");
  CHECK(e.find("electricity") != std::string::npos);
  e = error_of(R"({"gpus": {"b200": {}}})");
  CHECK(e.find("gpus.b200") != std::string::npos);
  CHECK(error_of(R"({"source": "nothing"})").find("at least one price") != std::string::npos);
  CHECK(error_of(R"({"switch": {}})").find("switch") != std::string::npos);  // unknown key
  CHECK(error_of(R"({"buildout": "$9"})").find("$10/W") != std::string::npos);
  CHECK(error_of(R"({"nodes": {"dgx-h100": "$-5"}})") != "");
  CHECK(error_of(R"({"nodes": {"dgx-h100": "$265k"}})") == "");
}

TEST_CASE("prices: quotes re-price the bill of materials and every line says its origin") {
  Cluster base = small_cluster();
  REQUIRE(line(base, "switch") != nullptr);
  CHECK(line(base, "switch")->origin == PriceOrigin::Estimate);  // the catalog marks it an estimate
  CHECK(base.price_origins.electricity == PriceOrigin::Catalog);

  Cluster c = small_cluster();
  apply_prices(
      c, prices_of(R"({"switches": {"quantum-2-qm9700": "$10000"}, "nodes": {"dgx-h100": "$200k"},
                                "electricity": "$0.05/kWh", "source": "quote 7"})"));
  const BomLine* sw = line(c, "switch");
  CHECK(sw->unit_price_usd == 10000);
  CHECK(sw->origin == PriceOrigin::User);
  CHECK(line(c, "node")->origin == PriceOrigin::User);
  CHECK(c.bom.compute_capex_usd == 4 * 200000.0);
  CHECK(c.bom.compute_origin == PriceOrigin::User);
  // Switches quoted, optics still the catalog's estimates: the network sum is an estimate.
  CHECK(c.bom.network_origin == PriceOrigin::Estimate);
  CHECK(c.bom.network_capex_usd < base.bom.network_capex_usd);
  CHECK(c.bom.network_capex_usd ==
        doctest::Approx(base.bom.network_capex_usd -
                        (line(base, "switch")->unit_price_usd - 10000) * sw->count));
  CHECK(c.price_origins.electricity == PriceOrigin::User);
  CHECK(c.facility.electricity_usd_per_J * 3.6e6 == doctest::Approx(0.05));
  CHECK(c.price_origins.source == "quote 7");
  // Storage untouched: still the catalog's.
  CHECK(c.bom.storage_capex_usd == base.bom.storage_capex_usd);
}

TEST_CASE(
    "prices: a GPU quote alone re-prices the catalog server's GPUs, a NIC quote goes on the "
    "network bill") {
  Cluster base = small_cluster();
  Cluster c = small_cluster();
  apply_prices(c, prices_of(R"({"gpus": {"h100-sxm-80gb": {"price": "$20000", "cloud": "$2/h"}},
                                "nics": {"cx7-400g": "$1000"}})"));
  CHECK(c.node.price_usd ==
        doctest::Approx(base.node.price_usd - 8 * (base.gpu.price_usd - 20000)));
  CHECK(c.price_origins.gpu == PriceOrigin::User);
  CHECK(c.price_origins.cloud == PriceOrigin::User);
  CHECK(c.gpu.cloud_usd_per_hour == doctest::Approx(2.0));
  // The server price still carries the catalog's estimate for the rest of the server.
  CHECK(line(c, "node")->origin == PriceOrigin::Estimate);
  const BomLine* nic = line(c, "nic");
  REQUIRE(nic != nullptr);
  if (nic->id == "cx7-400g") {
    CHECK(nic->network);
    CHECK(c.bom.network_capex_usd ==
          doctest::Approx(base.bom.network_capex_usd + nic->count * 1000.0));
  }
}

TEST_CASE("prices: origin of a sum is its weakest part") {
  CHECK(combine(PriceOrigin::Catalog, PriceOrigin::User) == PriceOrigin::User);
  CHECK(combine(PriceOrigin::User, PriceOrigin::Estimate) == PriceOrigin::Estimate);
  CHECK(combine(PriceOrigin::Estimate, PriceOrigin::None) == PriceOrigin::None);
  CHECK(combine(PriceOrigin::Catalog, PriceOrigin::Catalog) == PriceOrigin::Catalog);
  CHECK(catalog_origin(0, false) == PriceOrigin::None);
  CHECK(catalog_origin(5, true) == PriceOrigin::Estimate);
  CHECK(std::string(to_string(PriceOrigin::None)) == "no price");
}
