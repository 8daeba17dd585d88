#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "facility_fixture.hpp"
#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

TEST_CASE("facility reliability: the catalog reproduces Llama 3's 419 interruptions") {
  // 16,384 H100 in 2,048 hosts, one 400G NIC per GPU, 3-tier Clos (3 cables per GPU).
  FacilityInputs in = testing::small_cluster();
  in.gpus = 16384;
  in.nodes = 2048;
  in.nics = 16384;
  in.network_links = 3 * 16384;
  FacilityOptions o;
  o.monte_carlo_trials = 0;
  ReliabilityResult r = compute_reliability(in, o, 54 * 86400.0);
  double in_54_days = r.failures_per_day * 54;
  CHECK(in_54_days == doctest::Approx(419).epsilon(0.10));
  CHECK(r.mtbf_s / 3600 == doctest::Approx(54 * 24 / 419.0).epsilon(0.10));  // ~3.1 h
  // GPU-related classes (GPU + HBM) are the majority, as in the paper (58.7% incl. SRAM etc.).
  double gpu = 0;
  for (const auto& x : r.rates)
    if (x.id == "gpu" || x.id == "hbm") gpu += x.failures_per_day;
  CHECK(gpu / r.failures_per_day > 0.6);
  // Rates scale with the cluster: a quarter of everything is a quarter of the failures.
  in.gpus /= 4;
  in.nodes /= 4;
  in.nics /= 4;
  in.network_links /= 4;
  CHECK(compute_reliability(in, o, 1).failures_per_day * 54 == doctest::Approx(419 / 4.0));
}

TEST_CASE("facility reliability: Young, Daly and the expected wall time by hand") {
  CHECK(young_interval_s(60, 10800) == doctest::Approx(std::sqrt(2.0 * 60 * 10800)));
  CHECK(daly_interval_s(60, 10800) == doctest::Approx(std::sqrt(2.0 * 60 * 10800) - 60));
  CHECK(daly_interval_s(6000, 10000) == doctest::Approx(10000));
  // W = 1e6 (1 + 50/1000) / (1 - (600 + 525) / 20000)
  CHECK(expected_wall_time_s(1e6, 1000, 50, 600, 20000) ==
        doctest::Approx(1.05e6 / (1 - 1125.0 / 20000)));
  CHECK(std::isinf(expected_wall_time_s(1e6, 1000, 50, 20000, 20000)));
  CHECK(expected_wall_time_s(1e6, 1000, 50, 600, INFINITY) == doctest::Approx(1.05e6));
}

TEST_CASE("facility reliability: checkpoint sizing, interval, goodput on the fixture") {
  FacilityInputs in = testing::small_cluster();
  FacilityOptions o;
  o.monte_carlo_trials = 0;
  ReliabilityResult r = compute_reliability(in, o, 1e6);
  CHECK(r.checkpoint_write_s == doctest::Approx(10));  // 1 TB at 100 GB/s
  CHECK(r.checkpoint_interval_s == doctest::Approx(std::sqrt(2 * 10 * r.mtbf_s)));
  CHECK(r.restart_s == doctest::Approx(600));
  double w = expected_wall_time_s(1e6, r.checkpoint_interval_s, 10, 600, r.mtbf_s);
  CHECK(r.effective_time_to_train_s == doctest::Approx(w));
  CHECK(r.goodput == doctest::Approx(1e6 / w));
  CHECK(r.checkpoint_overhead_s + r.rework_s + r.restart_total_s + 1e6 == doctest::Approx(w));
  o.checkpoint_interval_s = 3600;
  o.restart_s = 60;
  r = compute_reliability(in, o, 1e6);
  CHECK(r.checkpoint_interval_s == 3600);
  CHECK(r.restart_s == 60);
  in.storage_write_Bps = 0;  // no storage: checkpoint-dependent figures are unknown, not made up
  r = compute_reliability(in, o, 1e6);
  CHECK(std::isnan(r.checkpoint_write_s));
  CHECK(std::isnan(r.goodput));
  CHECK(std::isnan(r.effective_time_to_train_s));
  CHECK(r.mtbf_s > 0);
  FacilityResult f = evaluate_facility(in, o);
  CHECK(facility_to_json(f)["reliability"]["goodput"].is_null());
  CHECK(f.cost.cost_per_run_usd > 0);
  o.reliability_profile = "nope";
  CHECK_THROWS_AS(compute_reliability(in, o, 1e6), InputError);
}

TEST_CASE("facility reliability: Monte-Carlo is deterministic and agrees with the formula") {
  const double work = 30 * 86400.0, c = 30, rst = 600, m = 3 * 3600.0;
  const double tau = young_interval_s(c, m);
  MonteCarloResult a = monte_carlo_time_to_train(work, tau, c, rst, m, 400, 42);
  MonteCarloResult b = monte_carlo_time_to_train(work, tau, c, rst, m, 400, 42);
  MonteCarloResult d = monte_carlo_time_to_train(work, tau, c, rst, m, 400, 43);
  CHECK(a.p50_s == b.p50_s);
  CHECK(a.p90_s == b.p90_s);
  CHECK(a.mean_s == b.mean_s);
  CHECK(a.mean_s != d.mean_s);
  CHECK(a.p50_s <= a.p90_s);
  double w = expected_wall_time_s(work, tau, c, rst, m);
  CHECK(a.mean_s == doctest::Approx(w).epsilon(0.02));
  CHECK(a.mean_failures == doctest::Approx(w / m).epsilon(0.05));
  // No failures: exactly the work plus its checkpoints.
  MonteCarloResult none = monte_carlo_time_to_train(1000, 100, 1, 10, INFINITY, 5, 1);
  CHECK(none.p50_s == doctest::Approx(1010));
}

TEST_CASE("facility reliability: profiles parse strictly") {
  auto doc = Doc::parse(R"({"profiles":[{"id":"x","name":"n","source":"s",
      "observed":{"duration":"10d","gpus":8,"nodes":1,"nics":8,"links":0,"switches":0},
      "restart_time":"5min","classes":[{"id":"gpu","per":"gpu","failures":2,"causes":"c"}]}]})",
                        "rel.json");
  auto p = parse_reliability(doc);
  REQUIRE(p.size() == 1);
  CHECK(p[0].classes[0].rate_per_unit_s == doctest::Approx(2.0 / (8 * 10 * 86400.0)));
  CHECK(p[0].restart_s == doctest::Approx(300));
  // A class scaled by a unit the study did not observe, and an unknown key.
  CHECK_THROWS_AS(parse_reliability(Doc::parse(R"({"profiles":[{"id":"x","name":"n","source":"s",
      "observed":{"duration":"10d","gpus":8,"nodes":1,"nics":8,"links":0,"switches":0},
      "restart_time":"5min","classes":[{"id":"l","per":"link","failures":2,"causes":"c"}]}]})",
                                               "rel.json")),
                  InputError);
  CHECK_THROWS_AS(parse_reliability(Doc::parse(R"({"profiles":[], "extra": 1})", "rel.json")),
                  InputError);
  // The built-in catalog loads and has the Llama 3 profile.
  CHECK(reliability_profile("llama3").classes.size() >= 6);
  CHECK_THROWS_AS(reliability_profile("unknown"), InputError);
}

TEST_CASE("facility reliability: schema and parser agree") {
  using nlohmann::json;
  json schema = load_schema(testing::src("schemas/reliability.schema.json"));
  Doc catalog = Doc::load(testing::src("topologies/catalog/reliability.json"));
  CHECK(format_schema_errors(validate_schema(schema, catalog.json())) == "");
  CHECK_NOTHROW(parse_reliability(catalog));
  auto both_reject = [&](const std::string& key_path, const json& value, bool erase) {
    json j = catalog.json();
    json* at = &j;
    std::string rest = key_path;
    std::string last;
    while (true) {
      auto dot = rest.find('.');
      std::string k = rest.substr(0, dot);
      if (dot == std::string::npos) {
        last = k;
        break;
      }
      at = at->is_array() ? &(*at)[std::stoul(k)] : &(*at)[k];
      rest = rest.substr(dot + 1);
    }
    if (erase)
      at->erase(last);
    else
      (*at)[last] = value;
    CHECK_MESSAGE(!validate_schema(schema, j).empty(), key_path);
    CHECK_THROWS_AS_MESSAGE(parse_reliability(Doc::from_json(j, "rel.json")), InputError, key_path);
  };
  both_reject("profiles.0.unknown", 1, false);
  both_reject("profiles.0.restart_time", nullptr, true);
  both_reject("profiles.0.restart_time", 600, false);
  both_reject("profiles.0.observed.gpus", -1, false);
  both_reject("profiles.0.classes.0.per", "rack", false);
  both_reject("profiles.0.classes.0.failures", -2, false);
  both_reject("profiles.0.classes", json::array(), false);
}

TEST_CASE("facility reliability: Llama 3 405B effective training time above 90%, as reported") {
  // 16,384 H100, 405B parameters x 14 B (bf16 weights + fp32 master and Adam moments) written to
  // Tectonic at its 2 TB/s sustained rate (docs/hardware-facts.md 5). Llama 3 reports > 90%
  // effective training time. (The 10 min restart default was bounded with this report, so this
  // checks the chain of formulas with published inputs rather than predicting the report
  // independently.)
  FacilityInputs in = testing::small_cluster();
  in.gpus = 16384;
  in.nodes = 2048;
  in.nics = 16384;
  in.network_links = 3 * 16384;
  in.checkpoint_bytes = 405e9 * 14;
  in.storage_write_Bps = 2e12;
  FacilityOptions o;
  o.monte_carlo_trials = 200;
  ReliabilityResult r = compute_reliability(in, o, 54 * 86400.0);
  CHECK(r.goodput > 0.90);
  CHECK(r.goodput < 0.97);
  CHECK(r.monte_carlo.p50_s == doctest::Approx(r.effective_time_to_train_s).epsilon(0.02));
}

TEST_CASE("facility reliability: site MTBF, recovery parts and checkpoint modes") {
  FacilityInputs in = testing::small_cluster();
  in.storage_write_Bps = 1e9;    // 1 TB checkpoint: 1,000 s to storage
  in.node_scaleout_Bps = 400e9;  // 8 x 400G per node (bytes/s)
  in.gpu_host_Bps = 50e9;        // PCIe Gen5 x16
  FacilityOptions o;
  o.monte_carlo_trials = 0;
  const double work = 30 * 86400.0;

  // A measured MTBF per node replaces the profile's rates: 2 nodes at 10 days = one per 5 days.
  o.node_mtbf_s = 10 * 86400.0;
  ReliabilityResult site = compute_reliability(in, o, work);
  CHECK(site.rates_source == "site MTBF");
  CHECK(site.mtbf_s == doctest::Approx(5 * 86400.0));
  REQUIRE(site.rates.size() == 1);
  CHECK(site.rates[0].failures_per_day == doctest::Approx(0.2));
  o.gpu_mtbf_s = 160 * 86400.0;  // 16 GPUs: one per 10 days more
  CHECK(compute_reliability(in, o, work).failures_per_day == doctest::Approx(0.3));
  o.gpu_mtbf_s = 0;

  // Recovery = detect + restart + reload; reload from storage reads the whole checkpoint, from
  // peer memory one node's share over its NICs.
  o.restart_s = 300;
  o.detect_s = 120;
  o.reload = "storage";
  ReliabilityResult st = compute_reliability(in, o, work);
  CHECK(st.reload_s == doctest::Approx(1e12 / 1e9));
  CHECK(st.restart_s == doctest::Approx(300 + 120 + 1000));
  o.reload = "peer";
  ReliabilityResult peer = compute_reliability(in, o, work);
  CHECK(peer.reload_s == doctest::Approx(0.5e12 / 400e9));
  CHECK(peer.effective_time_to_train_s < st.effective_time_to_train_s);

  // Checkpoint on the critical path: sync = the storage write; async = the PCIe snapshot (the
  // write bounds the interval); memory = one node's share to a peer.
  o.reload.clear();
  o.detect_s = -1;
  ReliabilityResult sync = compute_reliability(in, o, work);
  CHECK(sync.checkpoint_critical_s == doctest::Approx(1000));
  o.checkpoint_mode = "async";
  ReliabilityResult async = compute_reliability(in, o, work);
  CHECK(async.checkpoint_critical_s == doctest::Approx(1e12 / 16 / 50e9));
  CHECK(async.checkpoint_interval_s >= async.checkpoint_write_s);
  CHECK(async.goodput > sync.goodput);
  o.checkpoint_mode = "memory";
  ReliabilityResult mem = compute_reliability(in, o, work);
  CHECK(mem.checkpoint_critical_s == doctest::Approx(0.5e12 / 400e9));
  CHECK(mem.goodput > sync.goodput);

  // The flag.
  FacilityOptions f = parse_facility_flag("node_mtbf=30d,detect=2min,reload=peer,checkpoint=async");
  CHECK(f.node_mtbf_s == doctest::Approx(30 * 86400.0));
  CHECK(f.detect_s == doctest::Approx(120));
  CHECK(f.reload == "peer");
  CHECK(f.checkpoint_mode == "async");
  CHECK_THROWS_AS(parse_facility_flag("checkpoint=sometimes"), InputError);
  CHECK_THROWS_AS(parse_facility_flag("reload=tape"), InputError);
}

TEST_CASE(
    "facility reliability: the llama3-fabric profile splits components and adds leaf switches") {
  // Llama 3's cluster as in the first test, plus 1,024 leaves whose failure cuts ranks off.
  FacilityInputs in = testing::small_cluster();
  in.gpus = 16384;
  in.nodes = 2048;
  in.nics = 16384;
  in.network_links = 3 * 16384;
  in.blocking_switches = 1024;
  FacilityOptions o;
  o.monte_carlo_trials = 0;
  o.reliability_profile = "llama3-fabric";
  ReliabilityResult r = compute_reliability(in, o, 54 * 86400.0);
  double sw = 0, rest = 0;
  for (const auto& x : r.rates) (x.id == "switch" ? sw : rest) += x.failures_per_day * 54;
  // Everything but the switch class is Table 5 of the Llama 3 paper, split differently: 419.
  CHECK(rest == doctest::Approx(419).epsilon(0.10));
  o.reliability_profile = "llama3";
  CHECK(rest == doctest::Approx(compute_reliability(in, o, 1).failures_per_day * 54));
  // Switches: 2 per 100 in 91 days (Singh et al. 2021), per blocking switch.
  CHECK(sw == doctest::Approx(1024 * 0.02 * 54 / 91));
  const ReliabilityProfile& p = reliability_profile("llama3-fabric");
  for (const char* id : {"gpu", "hbm", "software", "cable", "host", "psu", "nic", "switch"}) {
    CAPTURE(id);
    CHECK(std::count_if(p.classes.begin(), p.classes.end(),
                        [&](const FailureClass& c) { return c.id == id; }) == 1);
  }
  // No blocking switch (a dual-plane fabric): the switch class adds nothing.
  in.blocking_switches = 0;
  o.reliability_profile = "llama3-fabric";
  CHECK(compute_reliability(in, o, 1).failures_per_day * 54 == doctest::Approx(rest));
}

TEST_CASE(
    "facility reliability: a leaf failure stops the ranks behind it, spines and dual planes do "
    "not") {
  auto blocking = [](const std::string& fabric, int nodes) {
    ClusterParams p;
    p.node = "dgx-h100";
    p.nodes = nodes;
    p.fabric = fabric;
    if (fabric == "dual_plane") p.transport = "roce";
    FacilityInputs in;
    fill_cluster_inputs(in, make_cluster(p));
    return std::make_pair(in.blocking_switches, in.switches);
  };
  // 128 DGX H100 (4 SU): 32 rail leaves + 16 spines; only the leaves cut ranks off.
  auto [rail_block, rail_all] = blocking("rail_optimized", 128);
  CHECK(rail_all == 48);
  CHECK(rail_block == 32);
  // Each NIC on two planes (Alibaba HPN): losing one leaf leaves every rank a path.
  auto [dual_block, dual_all] = blocking("dual_plane", 128);
  CHECK(dual_all > 0);
  CHECK(dual_block == 0);
  // One node: no fabric, nothing to fail.
  CHECK(blocking("none", 1).first == 0);
  // Which nodes each failure stops (what `tutti cluster` stops on a switch failure): a rail leaf
  // serves one rail of its 32-node scalable unit; a fat-tree leaf of 32 ports serves 4 DGX nodes.
  ClusterParams p;
  p.node = "dgx-h100";
  p.nodes = 128;
  const auto rail = switch_failure_domains(make_cluster(p));
  REQUIRE(rail.size() == 32);
  CHECK(rail[0].size() == 32);
  CHECK(rail[0].front() == 0);
  CHECK(rail.back().back() == 127);
  const auto tree = switch_failure_domains(load_cluster(
      testing::src("topologies/h100-64gpu-fattree.json"), {"fabric.leaf_down_ports=32"}));
  REQUIRE(tree.size() == 2);
  CHECK(tree[0] == std::vector<int>{0, 1, 2, 3});
  CHECK(tree[1] == std::vector<int>{4, 5, 6, 7});
}

TEST_CASE("facility reliability: goodput loss by cause adds up to the lost goodput") {
  FacilityInputs in = testing::small_cluster();
  in.blocking_switches = 2;
  FacilityOptions o;
  o.monte_carlo_trials = 0;
  o.reliability_profile = "llama3-fabric";
  ReliabilityResult r = compute_reliability(in, o, 1e6);
  REQUIRE(std::isfinite(r.effective_time_to_train_s));
  double sum = r.checkpoint_loss;
  for (const auto& x : r.rates) sum += x.goodput_loss;
  CHECK(sum == doctest::Approx(1 - r.goodput));
  CHECK(r.checkpoint_loss ==
        doctest::Approx(r.checkpoint_overhead_s / r.effective_time_to_train_s));
  // Each class in proportion to its rate: GPU vs HBM losses as 196 : 72.
  auto loss = [&](const std::string& id) {
    for (const auto& x : r.rates)
      if (x.id == id) return x.goodput_loss;
    return -1.0;
  };
  CHECK(loss("gpu") / loss("hbm") == doctest::Approx(196.0 / 72));
  CHECK(loss("switch") > 0);
  // The table line names every cause, largest first, and the JSON carries the figures.
  const std::string text = goodput_loss_text(r);
  // At Young's interval checkpoints cost about as much as all the rework; of the failure classes
  // the GPUs' costs most, a leaf switch's less.
  CHECK(text.rfind("checkpoints ", 0) == 0);
  REQUIRE(text.find("switch ") != std::string::npos);
  CHECK(text.find("gpu ") < text.find("switch "));
  FacilityResult f = evaluate_facility(in, o);
  const auto j = facility_to_json(f)["reliability"];
  CHECK(j["checkpoint_loss"].get<double>() == doctest::Approx(f.reliability.checkpoint_loss));
  CHECK(j["failure_classes"][0]["goodput_loss"].get<double>() ==
        doctest::Approx(f.reliability.rates[0].goodput_loss));
}

TEST_CASE("facility reliability: a class from another study carries its own observation window") {
  auto doc = Doc::parse(R"({"profiles":[{"id":"x","name":"n","source":"s",
      "observed":{"duration":"10d","gpus":8,"nodes":1,"nics":8,"links":0,"switches":0},
      "restart_time":"5min","classes":[{"id":"sw","per":"switch","failures":2,"causes":"c","source":"t",
      "observed":{"duration":"100d","units":50}}]}]})",
                        "rel.json");
  auto p = parse_reliability(doc);
  CHECK(p[0].classes[0].rate_per_unit_s == doctest::Approx(2.0 / (50 * 100 * 86400.0)));
  // Its unit count must be positive and its keys known; the error names the key.
  auto bad = [](const std::string& observed) {
    return Doc::parse(R"({"profiles":[{"id":"x","name":"n","source":"s",
      "observed":{"duration":"10d","gpus":8,"nodes":1,"nics":8,"links":0,"switches":0},
      "restart_time":"5min","classes":[{"id":"sw","per":"switch","failures":2,"causes":"c",
      "observed":)" + observed +
                          "}]}]}",
                      "rel.json");
  };
  CHECK_THROWS_WITH_AS(parse_reliability(bad(R"({"duration":"100d","units":0})")),
                       doctest::Contains("units"), InputError);
  CHECK_THROWS_WITH_AS(parse_reliability(bad(R"({"duration":"100d","units":5,"x":1})")),
                       doctest::Contains("x"), InputError);
}
