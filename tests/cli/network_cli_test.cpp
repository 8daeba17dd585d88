// The networks people build (issue 22): routing modes through --set, failure injection
// (--fail link=..., --fail switch=..., --fail-rate), rail-only fabrics, and report compare
// variants, end to end through the CLI.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../support/run.hpp"

using namespace tutti::testing;

namespace {

// tiny-gpt on 8 DGX H100 (2 leaves of 32 NICs, 2:1 oversubscribed): data-parallel traffic
// crosses the spines.
std::vector<std::string> sim_args(std::vector<std::string> extra) {
  std::vector<std::string> a = {"--set",
                                "fabric.oversubscription=2",
                                "--set",
                                "fabric.leaf_down_ports=32",
                                "simulate",
                                "--workload",
                                "models/tiny-gpt.json",
                                "--cluster",
                                "topologies/h100-64gpu-fattree.json",
                                "--parallel",
                                "tp=2,pp=1,dp=32,mb=1",
                                "--json"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::string> with_set(const std::string& set, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = sim_args(std::move(extra));
  a.insert(a.begin(), {"--set", set});
  return a;
}

double iteration(const RunResult& r) {
  return r.json()["iteration_time_s"].get<double>();
}

// tiny-gpt data-parallel over one DGX SuperPOD SU (32 nodes, 8 rail leaves, 4 spines with 8
// parallel cables to each leaf): a spine can fail without cutting anyone off.
std::vector<std::string> su_args(std::vector<std::string> extra) {
  std::vector<std::string> a = {"simulate",
                                "--workload",
                                "models/tiny-gpt.json",
                                "--cluster",
                                "topologies/dgx-h100-superpod-1su.json",
                                "--parallel",
                                "tp=2,pp=1,dp=128,mb=1",
                                "--global-batch",
                                "128",
                                "--json"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace

TEST_CASE("cli network: --set fabric.routing selects adaptive and spray, named in the output") {
  auto ecmp = run_tutti(sim_args({}));
  REQUIRE_MESSAGE(ecmp.rc == 0, ecmp.err);
  CHECK_FALSE(ecmp.json().contains("routing"));  // the default is not repeated
  for (const char* mode : {"adaptive", "spray"}) {
    auto r = run_tutti(with_set(std::string("fabric.routing=") + mode));
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    CHECK(r.json()["routing"] == mode);
    CHECK(iteration(r) <= iteration(ecmp) * (1 + 1e-9));  // no hash collisions left
  }
  auto text =
      run_tutti({"--set", "fabric.routing=spray", "simulate", "--workload", "models/tiny-gpt.json",
                 "--cluster", "topologies/h100-64gpu-fattree.json"});
  REQUIRE_MESSAGE(text.rc == 0, text.err);
  CHECK(text.out.find("routing    spray (each flow split evenly over its equal-cost paths)") !=
        std::string::npos);
  auto bad = run_tutti(with_set("fabric.routing=random"));
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("fabric.routing") != std::string::npos);
}

TEST_CASE("cli network: --fail switch takes a spine down and names it") {
  auto healthy = run_tutti(su_args({}));
  REQUIRE_MESSAGE(healthy.rc == 0, healthy.err);
  auto r = run_tutti(su_args({"--fail", "switch=spine0"}));
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const auto j = r.json();
  REQUIRE(j.contains("failures"));
  CHECK(j["failures"]["switches"] == std::vector<std::string>{"spine0"});
  CHECK(j["failures"]["request"] == "--fail switch=spine0");
  CHECK(iteration(r) >= iteration(healthy) * (1 - 1e-9));
  auto bad = run_tutti(su_args({"--fail", "switch=spine99"}));
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("spine99") != std::string::npos);
  auto nic = run_tutti(su_args({"--fail", "switch=nic3"}));
  CHECK(nic.rc == 2);
  CHECK(nic.err.find("a switch") != std::string::npos);
}

TEST_CASE("cli network: --fail link by cable name and by link id") {
  auto r = run_tutti(su_args({"--fail", "link=leaf0-spine0#1", "--fail", "link=spine0->leaf1"}));
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const auto j = r.json();
  CHECK(j["failures"]["cables"].size() == 2);
  CHECK(j["failures"]["cables"][0] == "leaf0-spine0#1");
  CHECK(j["failures"]["cables"][1] == "leaf1-spine0#0");
  // The `link` of the JSON output's busiest links ("spine0->leaf0") names a cable too.
  auto healthy = run_tutti(sim_args({}));  // 2:1 fat-tree: its busiest links are leaf uplinks
  REQUIRE(healthy.rc == 0);
  std::string name;
  const auto jh = healthy.json();
  for (const auto& l : jh["bottleneck_links"])
    if (l["tier"] == "leaf_spine") {
      name = l["link"].get<std::string>();
      break;
    }
  REQUIRE_FALSE(name.empty());
  auto by_name = run_tutti(sim_args({"--fail", "link=" + name}));
  REQUIRE_MESSAGE(by_name.rc == 0, by_name.err);
  CHECK(by_name.json()["failures"]["cables"].size() == 1);
  CHECK(iteration(by_name) >= iteration(healthy) * (1 - 1e-9));
  for (const char* bad : {"link=leaf0-spine9", "link=gpu0-leaf0", "link=leaf0-leaf1",
                          "link=leaf0-spine0#99", "link=1", "port=leaf0", "link="}) {
    auto e = run_tutti(su_args({"--fail", bad}));
    INFO(bad << ": " << e.err);
    CHECK(e.rc == 2);
    CHECK(e.err.find("--fail") != std::string::npos);
  }
}

TEST_CASE("cli network: --fail-rate draws failures from the seed") {
  auto a = run_tutti(sim_args({"--fail-rate", "links=0.2"}));
  REQUIRE_MESSAGE(a.rc == 0, a.err);
  auto b = run_tutti(sim_args({"--fail-rate", "links=0.2"}));
  REQUIRE(b.rc == 0);
  CHECK(a.json()["failures"] == b.json()["failures"]);  // deterministic
  const auto ja = a.json();
  const auto& f = ja["failures"];
  CHECK(f["cables"].size() > 0);
  CHECK(f["request"].get<std::string>().find("--fail-rate links=0.2") != std::string::npos);
  std::vector<std::string> seeded = sim_args({"--fail-rate", "links=0.2"});
  seeded.insert(seeded.begin(), {"--seed", "7"});
  auto c = run_tutti(seeded);
  REQUIRE(c.rc == 0);
  CHECK(c.json()["failures"]["cables"] != f["cables"]);  // another seed, other cables
  for (const char* bad : {"links=2", "links=-0.1", "cables=0.1", "links"}) {
    auto e = run_tutti(sim_args({"--fail-rate", bad}));
    INFO(bad);
    CHECK(e.rc == 2);
    CHECK(e.err.find("--fail-rate") != std::string::npos);
  }
}

TEST_CASE("cli network: a pair cut off by failures is an input error naming it") {
  // Every leaf-0 uplink down: GPUs of leaf 0 cannot reach leaf 1.
  auto r = run_tutti(sim_args({"--fail", "switch=leaf0"}));
  CHECK(r.rc == 2);
  CHECK(r.err.find("no path left") != std::string::npos);
  CHECK(r.err.find("gpu") != std::string::npos);
  // Failures on a fabric without a failure model.
  auto t = run_tutti({"simulate", "--workload", "models/tiny-gpt.json", "--cluster",
                      "topologies/torus.json", "--fail", "switch=leaf0"});
  CHECK(t.rc == 2);
  CHECK(t.err.find("Clos") != std::string::npos);
}

TEST_CASE("cli network: report compare puts routing modes and failure scenarios side by side") {
  auto r = run_tutti({"report", "compare", "--workload", "models/tiny-gpt.json", "--cluster",
                      "topologies/dgx-h100-superpod-1su.json", "--parallel", "tp=4,pp=2,dp=32,mb=1",
                      "--oversubscription", "0", "--variant", "spray: --set fabric.routing=spray",
                      "--variant", "spine0 down: --fail switch=spine0", "--format", "json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const auto j = r.json();
  const auto& archs = j["data"]["architectures"];
  REQUIRE(archs.size() == 3);
  CHECK(archs[1]["name"].get<std::string>().find("[spray]") != std::string::npos);
  CHECK(archs[1]["simulation"]["routing"] == "spray");
  CHECK(archs[2]["simulation"]["failures"]["switches"][0] == "spine0");
  CHECK(r.json()["command"].get<std::string>().find("--variant") != std::string::npos);
  auto bad =
      run_tutti({"report", "compare", "--workload", "models/tiny-gpt.json", "--cluster",
                 "topologies/h100-64gpu-fattree.json", "--variant", "nolabel", "--format", "json"});
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("--variant") != std::string::npos);
}

TEST_CASE(
    "cli network: --replicas strict runs the exact replica groups the default names, equal to "
    "one timeline per replica") {
  // Llama 3 8B data-parallel over 128 RoCE nodes, sprayed: every replica's transfers meet the
  // same loads (one timeline), but the data-parallel rings cross the spines at some replicas only
  // (the strict groups set 8 apart).
  auto args = [](const std::string& mode) {
    std::vector<std::string> a = {"--set",
                                  "fabric.routing=spray",
                                  "simulate",
                                  "--workload",
                                  "models/llama3-8b.json",
                                  "--cluster",
                                  "topologies/roce-400g.json",
                                  "--parallel",
                                  "zero=2,pp=4",
                                  "--json"};
    if (!mode.empty()) a.insert(a.end(), {"--replicas", mode});
    return a;
  };
  auto named = [](const RunResult& r) {
    const auto j = r.json();
    if (!j.contains("approximations")) return false;
    for (const auto& a : j["approximations"])
      if (a.get<std::string>().find("replica groups") != std::string::npos) return true;
    return false;
  };
  const auto def = run_tutti(args("")), grouped = run_tutti(args("grouped")),
             strict = run_tutti(args("strict")), each = run_tutti(args("each"));
  for (const auto* r : {&def, &grouped, &strict, &each}) REQUIRE_MESSAGE(r->rc == 0, r->err);
  CHECK(named(def));  // the default groups, and the output says what they leave out
  CHECK(def.err.find("there would be 8, exact (--replicas strict runs them)") != std::string::npos);
  CHECK(named(grouped));
  CHECK(iteration(def) == iteration(grouped));
  CHECK_FALSE(named(strict));
  CHECK_FALSE(named(each));
  CHECK(iteration(strict) == doctest::Approx(iteration(each)).epsilon(1e-9));
  // Bad input: a mode that does not exist, another engine, expert parallelism.
  auto bad = run_tutti(args("all"));
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("--replicas: got \"all\", expected grouped, strict, each") !=
        std::string::npos);
  auto a = args("each");
  a.insert(a.end(), {"--engine", "analytic"});
  auto other = run_tutti(a);
  CHECK(other.rc == 2);
  CHECK(other.err.find("--engine native") != std::string::npos);
  auto ep = run_tutti({"simulate", "--workload", "models/deepseek-v3.json", "--cluster",
                       "topologies/roce-400g.json", "--replicas", "strict", "--json"});
  CHECK(ep.rc == 2);
  CHECK(ep.err.find("with ep=") != std::string::npos);
}

TEST_CASE("cli network: a rail-only fabric needs fewer switches than rail-optimized") {
  // One SU (32 nodes): each rail is one 64-port switch, no spines; rail-optimized needs spines.
  auto ro = run_tutti({"--set", "fabric.kind=rail_only", "--set", "fabric.nodes_per_su=0", "topo",
                       "topologies/dgx-h100-superpod-1su.json", "--json"});
  REQUIRE_MESSAGE(ro.rc == 0, ro.err);
  auto opt = run_tutti({"topo", "topologies/dgx-h100-superpod-1su.json", "--json"});
  REQUIRE(opt.rc == 0);
  const auto jr = ro.json(), jo = opt.json();
  CHECK(jr["switches"]["total"] == 8);  // 8 rail switches
  CHECK_FALSE(jr["switches"].contains("spine"));
  CHECK(jo["switches"]["total"] == 12);  // 8 rail leaves + 4 spines
  CHECK(jr["fabric"]["kind"] == "rail_only");
  CHECK(jr["fabric"]["description"].get<std::string>().find("rail-only") != std::string::npos);
  auto bad = run_tutti({"--set", "fabric.kind=rail_only", "topo", "topologies/l40s-8x-pcie.json"});
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("rail_only") != std::string::npos);
}

TEST_CASE("cli network: EFA's SRD sprays by default, named in the output, ECMP on request") {
  // tiny-gpt data-parallel over 64 p5.48xlarge (512 H100), the fabric 2:1 oversubscribed so
  // that per-flow hashing can collide on the uplinks.
  auto args = [](std::vector<std::string> sets, bool json) {
    std::vector<std::string> a;
    for (auto& s : sets) a.insert(a.end(), {"--set", s});
    a.insert(a.end(), {"simulate", "--workload", "models/tiny-gpt.json", "--cluster",
                       "topologies/aws-p5-efa-512.json", "--parallel", "tp=2,pp=1,dp=256,mb=1",
                       "--global-batch", "512"});
    if (json) a.push_back("--json");
    return a;
  };
  auto srd = run_tutti(args({"fabric.oversubscription=2"}, true));
  REQUIRE_MESSAGE(srd.rc == 0, srd.err);
  CHECK(srd.json()["routing"] == "spray");
  auto ecmp = run_tutti(args({"fabric.oversubscription=2", "fabric.routing=ecmp"}, true));
  REQUIRE_MESSAGE(ecmp.rc == 0, ecmp.err);
  CHECK_FALSE(ecmp.json().contains("routing"));
  CHECK(iteration(srd) <= iteration(ecmp) * (1 + 1e-9));
  auto text = run_tutti(args({}, false));
  REQUIRE_MESSAGE(text.rc == 0, text.err);
  CHECK(text.out.find("routing    spray (each flow split evenly over its equal-cost paths; the "
                      "default of transport srd)") != std::string::npos);
  auto bad = run_tutti(args({"transport.kind=roce"}, true));
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("EFA") != std::string::npos);
}
