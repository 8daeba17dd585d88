// Golden CLI tests: tutti topo and tutti catalog.
#include <doctest/doctest.h>

#include "../support/run.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti::testing;
using nlohmann::json;

TEST_CASE("cli: tutti topo --json on the 1-SU SuperPOD") {
  auto r = run_tutti({"topo", "topologies/dgx-h100-superpod-1su.json", "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  // Expected values worked out by hand from the catalog: 32 DGX H100 x 8 NICs on QM9700 (64 x 400G,
  // 32 twin-port cages): 8 rail leaves (32 down + 32 up), 4 spines (64 down); switch OSFPs
  // = 12 switches x 32 cages; node OSFPs = 32 x 4. Capex = 12 x $30k + 384 x $1,000 + 128 x $700
  // + 512 cables x $100; power = 12 x 747 W + 384 x 15 W + 128 x 9 W.
  json expected = {
      {"gpus", 256},
      {"nodes", 32},
      {"gpu", "h100-sxm-80gb"},
      {"switches", {{"leaf", 8}, {"spine", 4}, {"total", 12}}},
      {"cables", {{"access", 256}, {"leaf_spine", 256}, {"total", 512}}},
      {"transceivers", {{"switch_side", 384}, {"node_side", 128}, {"total", 512}}},
      {"bisection_bandwidth_Bps", 256 * 50e9 / 2},
      {"diameter", 3},
      {"diameter_links", 6},
      {"network_capex_usd", 12 * 30000.0 + 384 * 1000.0 + 128 * 700.0 + 512 * 100.0},
      {"network_power_W", 12 * 747.0 + 384 * 15.0 + 128 * 9.0},
      {"fabric", {{"kind", "rail_optimized"}, {"tiers", 2}, {"planes", 1}, {"routing", "ecmp"}}},
  };
  auto d = json_diff(r.json(), expected, 1e-9);
  CHECK_MESSAGE(d.empty(), d);
  CHECK(r.json()["bom"].is_array());
  // The output contract (schemas/topology_result.schema.json).
  const auto errors = tutti::validate_schema(
      tutti::load_schema(src("schemas/topology_result.schema.json")), r.json());
  CHECK_MESSAGE(errors.empty(), tutti::format_schema_errors(errors));
  CHECK(r.json().at("schema_version") == 1);
}

TEST_CASE("cli: tutti topo applies --set overrides through the same checks, and reads tables") {
  auto r =
      run_tutti({"topo", "topologies/dgx-h100-superpod-1su.json", "--json", "--set", "nodes=16"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  CHECK(r.json()["gpus"] == 128);
  auto bad = run_tutti(
      {"topo", "topologies/dgx-h100-superpod-1su.json", "--set", "fabric.nodes_per_su=40"});
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("fabric.leaf_switch") != std::string::npos);
  auto unit = run_tutti({"topo", "topologies/roce-400g.json", "--set", "fabric.link_speed=400"});
  CHECK(unit.rc == 2);
  CHECK(unit.err.find("fabric.link_speed") != std::string::npos);
  CHECK(run_tutti({"topo", "no/such/file.json"}).rc == 2);
  auto table = run_tutti({"topo", "topologies/h100-16k-rail-3tier.json"});
  REQUIRE(table.rc == 0);
  CHECK(table.out.find("512 x quantum-2-qm9700") != std::string::npos);
  CHECK(table.out.find("network capex") != std::string::npos);
}

TEST_CASE("cli: tutti catalog show h100-sxm-80gb --json") {
  auto r = run_tutti({"catalog", "show", "h100-sxm-80gb", "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  json expected = {
      {"id", "h100-sxm-80gb"},
      {"kind", "gpu"},
      {"memory", "81559MiB"},
      {"tdp", "700W"},
      {"peak", {{"bf16", "989.4TFLOPS"}, {"fp8", "1978.9TFLOPS"}}},
      {"si",
       {{"peak_flops",
         {{"bf16", 989.4e12}, {"fp16", 989.4e12}, {"fp8", 1978.9e12}, {"tf32", 494.7e12}}},
        {"hbm_bytes", 81559.0 * 1048576.0},
        {"hbm_bw_Bps", 3.35e12},
        {"scaleup_bw_Bps", 450e9},
        {"tdp_W", 700.0},
        {"price_usd", 30000.0}}},
  };
  auto d = json_diff(r.json(), expected, 1e-9);
  CHECK_MESSAGE(d.empty(), d);
  CHECK(r.json()["source"].get<std::string>().find("NV-H100-T") != std::string::npos);
}

TEST_CASE("cli: tutti catalog list and errors") {
  auto all = run_tutti({"catalog", "list", "--json"});
  REQUIRE(all.rc == 0);
  for (const char* k :
       {"gpu", "node", "nic", "switch", "optic", "storage", "facility", "transport"})
    CHECK_MESSAGE(all.json().contains(k), k);
  auto sw = run_tutti({"catalog", "list", "switch"});
  CHECK(sw.rc == 0);
  CHECK(sw.out.find("quantum-2-qm9700") != std::string::npos);
  auto miss = run_tutti({"catalog", "show", "h100"});
  CHECK(miss.rc == 2);
  CHECK(miss.err.find("h100-sxm-80gb") != std::string::npos);  // suggests close ids
  CHECK(run_tutti({"catalog", "list", "widgets"}).rc == 2);
  CHECK(run_tutti({"catalog", "frobnicate"}).rc == 2);
}

TEST_CASE("cli: tutti topo refuses optics of two media on one link") {
  auto bad = run_tutti({"topo", "topologies/roce-400g.json", "--set", "optics.node=osfp-400g-sr4"});
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("optics.node") != std::string::npos);
  CHECK(bad.err.find("singlemode") != std::string::npos);
  auto ok = run_tutti({"topo", "topologies/roce-400g.json", "--set", "optics.node=osfp-400g-dr4"});
  CHECK(ok.rc == 0);
}
