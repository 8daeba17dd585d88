// Golden CLI tests of the SimGrid side of tutti: `simulate --engine simgrid` (same JSON document as
// the native engine, values within 1% of it) and `topo --export simgrid` (a SimGrid platform with
// every GPU and link of the cluster).
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "../support/run.hpp"

using namespace tutti::testing;

namespace {

std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.insert(it.key());
  return k;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

double rel(const nlohmann::json& a, const nlohmann::json& b) {
  return a.get<double>() / b.get<double>() - 1;
}

}  // namespace

TEST_CASE("golden: tutti simulate --engine simgrid, tiny-gpt TP 2 x PP 2 x DP 16 on 64 GPUs") {
  const std::vector<std::string> args = {"simulate",
                                         "-w",
                                         "models/tiny-gpt.json",
                                         "-c",
                                         "topologies/h100-64gpu-fattree.json",
                                         "--parallel",
                                         "tp=2,pp=2,mb=2",
                                         "--json"};
  auto n = run_tutti(args);
  REQUIRE_MESSAGE(n.rc == 0, n.err);
  std::vector<std::string> sg_args = args;
  sg_args.insert(sg_args.end(), {"--engine", "simgrid"});
  auto s = run_tutti(sg_args);
  REQUIRE_MESSAGE(s.rc == 0, s.err);
  const nlohmann::json jn = n.json(), js = s.json();
  // The same document: the same keys at the top and in the breakdown.
  CHECK(keys(js) == keys(jn));
  CHECK(keys(js["breakdown"]) == keys(jn["breakdown"]));
  CHECK(js["engine"] == "simgrid");
  CHECK(jn["engine"] == "native");
  for (const char* k : {"workload", "cluster", "gpus", "layout", "calibration"})
    CHECK_MESSAGE(js[k] == jn[k], k);
  // The default fabric (ECMP routing), 64 GPUs: the engines agree within 1%.
  for (const char* k :
       {"iteration_time_s", "mfu", "tokens_per_s_per_gpu", "samples_per_s", "time_to_train_s"}) {
    INFO(k << ": native " << jn[k] << ", simgrid " << js[k]);
    CHECK(std::abs(rel(js[k], jn[k])) < 0.01);
  }
  CHECK(std::abs(rel(js["breakdown"]["compute_s"], jn["breakdown"]["compute_s"])) < 0.01);
  REQUIRE(js["bottleneck_links"].is_array());
  CHECK(!js["bottleneck_links"].empty());
  for (const auto& l : js["bottleneck_links"]) {
    CHECK(l.contains("link"));
    CHECK(l["utilization"].get<double>() >= 0);
    CHECK(l["utilization"].get<double>() <= 1.0 + 1e-9);
  }
  // Deterministic: the same command gives the same simulated figures.
  auto again = run_tutti(sg_args);
  REQUIRE(again.rc == 0);
  CHECK(again.json()["iteration_time_s"] == js["iteration_time_s"]);
}

TEST_CASE("golden: tutti simulate --engine simgrid refuses what it cannot run") {
  auto big = run_tutti({"simulate", "-w", "models/llama3-405b.json", "-c",
                        "topologies/h100-16k-rail-3tier.json", "-p", "zero=2,vp=1", "--engine",
                        "simgrid", "--json"});
  CHECK(big.rc == 2);
  CHECK(big.err.find("--engine simgrid") != std::string::npos);
  CHECK(big.err.find("--engine native") != std::string::npos);
}

TEST_CASE("golden: tutti topo --export simgrid") {
  auto topo = run_tutti({"topo", "topologies/h100-64gpu-fattree.json", "--json"});
  REQUIRE_MESSAGE(topo.rc == 0, topo.err);
  auto x = run_tutti({"topo", "topologies/h100-64gpu-fattree.json", "--export", "simgrid"});
  REQUIRE_MESSAGE(x.rc == 0, x.err);
  const std::string& xml = x.out;
  CHECK(xml.rfind("<?xml", 0) == 0);
  CHECK(xml.find("<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">") !=
        std::string::npos);
  CHECK(xml.find("<platform version=\"4.1\">") != std::string::npos);
  CHECK(xml.find("</platform>") != std::string::npos);
  // One host per GPU, named as tutti's reports name them.
  CHECK(count(xml, "<host ") == 64);
  CHECK(xml.find("id=\"gpu0\"") != std::string::npos);
  CHECK(xml.find("id=\"gpu63\"") != std::string::npos);
  CHECK(xml.find("id=\"gpu64\"") == std::string::npos);
  // Every GPU pair has its route (Full routing), every directed tutti link is a SimGrid link.
  CHECK(count(xml, "<route ") == 64 * 63);
  CHECK(count(xml, "<link ") > 64 * 2);
  // Deterministic, and -o writes the same text to a file.
  auto again = run_tutti({"topo", "topologies/h100-64gpu-fattree.json", "--export", "simgrid"});
  CHECK(again.out == xml);
  const std::string path = temp_dir() + "/platform.xml";
  auto o =
      run_tutti({"topo", "topologies/h100-64gpu-fattree.json", "--export", "simgrid", "-o", path});
  REQUIRE_MESSAGE(o.rc == 0, o.err);
  std::ifstream in(path);
  std::stringstream file;
  file << in.rdbuf();
  CHECK(file.str() == xml);
  // An unknown format is a usage error.
  CHECK(run_tutti({"topo", "topologies/h100-64gpu-fattree.json", "--export", "ns3"}).rc == 2);
}
