#include "tutti/topologies/catalog.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

TEST_CASE("catalog: builtin parses and holds the required ids") {
  const Catalog& c = Catalog::builtin();
  for (const char* id :
       {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm-80gb", "h200-sxm-141gb", "b200", "gb200",
        "v100-sxm2-16gb", "h100-pcie-80gb", "l40s", "mi300x", "mi325x", "gaudi3", "cpu-host"})
    CHECK_MESSAGE(c.gpu(id).id == id, id);
  for (const char* id : {"dgx-a100-80gb", "dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72",
                         "l40s-8x-pcie", "cpu-node"})
    CHECK_MESSAGE(c.node(id).id == id, id);
  for (const char* id : {"cx6-200g", "cx7-400g", "cx8-800g", "roce-400g"})
    CHECK(c.nic(id).id == id);
  for (const char* id : {"quantum-qm8700", "quantum-2-qm9700", "quantum-x800-q3400",
                         "spectrum-4-sn5600", "tomahawk5-64x800g"})
    CHECK(c.switch_(id).id == id);
  CHECK(c.facility("air-cooled").pue >= 1.3);
  CHECK(c.facility("liquid-cooled").rack_power_W >= 100e3);
  CHECK(c.transport("roce").kind == "roce");
  CHECK(!c.optics().empty());
  CHECK(!c.storages().empty());
}

TEST_CASE("catalog: numbers are the cited ones, in SI") {
  const Catalog& c = Catalog::builtin();
  const GpuSpec& h = c.gpu("h100-sxm-80gb");
  CHECK(h.peak(DType::BF16) == doctest::Approx(989.4e12));
  CHECK(h.peak(DType::FP8) == doctest::Approx(1978.9e12));
  CHECK(h.hbm_bytes == doctest::Approx(81559.0 * 1048576.0));  // what nvidia-smi reports
  CHECK(h.hbm_bw_Bps == doctest::Approx(3.35e12));
  CHECK(h.scaleup_bw_Bps == doctest::Approx(450e9));  // 900 GB/s bidirectional
  CHECK(h.tdp_W == doctest::Approx(700));
  CHECK(c.gpu("b200").peak(DType::BF16) == doctest::Approx(2250e12));
  CHECK(c.gpu("mi300x").peak(DType::BF16) == doctest::Approx(1307.4e12));
  CHECK(c.gpu("v100-sxm2-16gb").peak(DType::BF16) == 0);  // V100 has no bf16
  const SwitchSpec& q = c.switch_("quantum-2-qm9700");
  CHECK(q.radix == 64);
  CHECK(q.port_bw_Bps == doctest::Approx(50e9));
  CHECK(q.radix_at(25e9) == 128);
  CHECK(q.radix_at(100e9) == 0);
  CHECK(c.switch_("spectrum-4-sn5600").radix_at(50e9) == 128);
  CHECK(c.node("dgx-h100").max_power_W == doctest::Approx(10.2e3));
  CHECK(c.node("gb200-nvl72").nvlink_domain_gpus == 72);
  CHECK(c.facility("air-cooled").electricity_usd_per_J * kJoulePerKWh == doctest::Approx(0.0806));
}

TEST_CASE("catalog: every entry cites a source and its estimates name real fields") {
  const Catalog& c = Catalog::builtin();
  std::set<std::string> seen;
  for (const auto& kind : Catalog::kinds())
    for (const auto& id : c.ids(kind)) {
      CHECK_MESSAGE(seen.insert(id).second, id);
      auto [k, e] = c.find(id);
      CHECK(k == kind);
      CHECK_MESSAGE(e->at("source").get<std::string>().size() > 10, id);
      CHECK(e->at("estimates").is_array());
    }
}

TEST_CASE("catalog: unknown ids and malformed entries are input errors") {
  const Catalog& c = Catalog::builtin();
  try {
    c.gpu("h100");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("h100-sxm-80gb") != std::string::npos);  // lists known ids
  }
  auto bad = [](const std::string& text) { return Catalog::parse({{"gpus.json", text}}); };
  const std::string ok_entry =
      R"({"id":"x","name":"X","vendor":"nvidia","generation":"hopper","peak":{"bf16":"1TFLOPS"},"memory":"1GB","memory_bandwidth":"1GB/s",)"
      R"("scaleup_link":"","scaleup_bandwidth":"0GB/s","pcie_gen":4,"tdp":"100W","idle_power":"10W","price":"$1",)"
      R"("source":"a test entry","estimates":[]})";
  CHECK_NOTHROW(bad(R"({"kind":"gpu","entries":[)" + ok_entry + "]}"));
  std::string unit = ok_entry;
  unit.replace(unit.find("\"100W\""), 6, "\"100\"");
  CHECK_THROWS_AS(bad(R"({"kind":"gpu","entries":[)" + unit + "]}"), InputError);
  std::string extra = ok_entry;
  extra.insert(1, R"("colour":"green",)");
  CHECK_THROWS_WITH_AS(bad(R"({"kind":"gpu","entries":[)" + extra + "]}"),
                       doctest::Contains("colour"), InputError);
  std::string est = ok_entry;
  est.replace(est.find("\"estimates\":[]"), 14, R"("estimates":["nonsense"])");
  CHECK_THROWS_AS(bad(R"({"kind":"gpu","entries":[)" + est + "]}"), InputError);
  CHECK_THROWS_AS(bad(R"({"kind":"gpu","entries":[)" + ok_entry + "," + ok_entry + "]}"),
                  InputError);    // dup
  std::string no_gen = ok_entry;  // the generation is a required fact, from a fixed list
  no_gen.erase(no_gen.find(R"("generation":"hopper",)"), 22);
  CHECK_THROWS_WITH_AS(bad(R"({"kind":"gpu","entries":[)" + no_gen + "]}"),
                       doctest::Contains("generation"), InputError);
  std::string odd_gen = ok_entry;
  odd_gen.replace(odd_gen.find("hopper"), 6, "kepler");
  CHECK_THROWS_WITH_AS(bad(R"({"kind":"gpu","entries":[)" + odd_gen + "]}"),
                       doctest::Contains("kepler"), InputError);
}

TEST_CASE("catalog: issue 17 hardware, usual systems and NVLS as data") {
  const Catalog& c = Catalog::builtin();
  for (const char* id : {"b300", "gb300", "h800-sxm-80gb", "h100-sxm-96gb", "gh200", "mi355x"})
    CHECK_MESSAGE(c.gpu(id).id == id, id);
  // Every GPU names the system it usually ships in, and that system holds that GPU.
  for (const GpuSpec& g : c.gpus()) {
    CAPTURE(g.id);
    REQUIRE(!g.usual_node.empty());
    CHECK(c.usual_node(g.id).gpu == g.id);
  }
  CHECK(c.usual_node("gb200").id == "gb200-nvl72");
  CHECK(c.usual_node("gb300").id == "gb300-nvl72");
  CHECK(c.usual_node("h100-sxm-96gb").id == "grand-teton-h100-96gb");
  const NodeSpec& gb300 = c.node("gb300-nvl72");
  CHECK(gb300.nvlink_domain_gpus == 72);
  CHECK(gb300.nic == "cx8-800g");
  CHECK(gb300.nvls);
  CHECK(c.gpu("gb300").scaleup_bw_Bps == doctest::Approx(900e9));          // 1.8 TB/s bidirectional
  CHECK(c.gpu("h800-sxm-80gb").scaleup_bw_Bps == doctest::Approx(200e9));  // 400 GB/s bidirectional
  // NVLS is a node capability: Hopper-and-later NVSwitch systems have it, A100 and meshes do not.
  CHECK(c.node("dgx-h100").nvls);
  CHECK(c.node("gb200-nvl72").nvls);
  CHECK_FALSE(c.node("dgx-a100-80gb").nvls);
  CHECK_FALSE(c.node("mi355x-8x").nvls);
  CHECK_THROWS_AS(c.usual_node("h100"), InputError);
  // Hardware facts are catalog fields, not id prefixes: every GPU states its generation (H800 is
  // Hopper though its id does not start with "h100"), and the DGX servers their SuperPOD
  // scalable unit (20 DGX A100, 32 DGX H100), which validate builds a published case's fabric on.
  for (const GpuSpec& g : c.gpus()) {
    CAPTURE(g.id);
    CHECK(!g.generation.empty());
  }
  CHECK(c.gpu("h800-sxm-80gb").generation == "hopper");
  CHECK(c.gpu("gb200").generation == "blackwell");
  CHECK(c.gpu("a100-sxm4-40gb").generation == "ampere");
  CHECK(c.gpu("mi355x").generation == "amd-cdna");
  CHECK(c.node("dgx-a100-80gb").nodes_per_su == 20);
  CHECK(c.node("dgx-h100").nodes_per_su == 32);
  CHECK(c.node("hgx-h200").nodes_per_su == 0);  // none cited
  // A usual_node that holds another GPU is an input error naming the key.
  const std::string entry =
      R"({"id":"x","name":"X","vendor":"nvidia","generation":"hopper","peak":{"bf16":"1TFLOPS"},"memory":"1GB","memory_bandwidth":"1GB/s",)"
      R"("scaleup_link":"","scaleup_bandwidth":"0GB/s","pcie_gen":4,"tdp":"100W","idle_power":"10W","price":"$1",)"
      R"("usual_node":"nope","source":"a test entry","estimates":[]})";
  try {
    Catalog::parse({{"gpus.json", R"({"kind":"gpu","entries":[)" + entry + "]}"}});
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("usual_node") != std::string::npos);
  }
}

TEST_CASE("catalog: join of files read one by one is parse, with the same first error") {
  // Catalog::join(read_file...) is what the catalog fuzz target runs (the unchanged files read
  // once); it must accept and refuse exactly what Catalog::parse does, with the same message.
  auto outcome_parse =
      [](const std::vector<std::pair<std::string, std::string>>& files) -> std::string {
    try {
      Catalog c = Catalog::parse(files);
      return "ok " + std::to_string(c.gpus().size()) + " " + std::to_string(c.nodes().size()) +
             " " + c.si_json("node", "dgx-h100").dump() + " " + std::to_string(c.files().size());
    } catch (const InputError& e) {
      return e.what();
    }
  };
  auto outcome_join =
      [](const std::vector<std::pair<std::string, std::string>>& files) -> std::string {
    try {
      std::vector<Catalog::File> parts;
      for (const auto& [name, text] : files) parts.push_back(Catalog::read_file(name, text));
      Catalog c = Catalog::join(parts);
      return "ok " + std::to_string(c.gpus().size()) + " " + std::to_string(c.nodes().size()) +
             " " + c.si_json("node", "dgx-h100").dump() + " " + std::to_string(c.files().size());
    } catch (const InputError& e) {
      return e.what();
    }
  };
  const auto base = embedded_catalog_files();
  CHECK(outcome_join(base) == outcome_parse(base));
  CHECK(outcome_join(base).rfind("ok ", 0) == 0);
  auto with = [&](const std::string& name, const std::string& text) {
    auto files = base;
    for (auto& f : files)
      if (f.first == name) f.second = text;
    return files;
  };
  nlohmann::json gpus;
  for (const auto& [name, text] : base)
    if (name == "gpus.json") gpus = nlohmann::json::parse(text);
  // An id twice in one file, then a malformed entry after it: parse stops at the duplicate.
  auto dup = gpus;
  dup["entries"].push_back(gpus["entries"][0]);
  dup["entries"].push_back(nlohmann::json{{"id", "Bad Id"}});
  // An id of another file (a node id) in gpus.json: the duplicate is found in the later file.
  auto cross = gpus;
  cross["entries"][1]["id"] = "dgx-h100";
  const std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, std::string>> bad{
      {with("gpus.json", dup.dump()), "already defined as a gpu"},
      {with("gpus.json", cross.dump()),
       "catalog/nodes.json"},  // "dgx-h100" already defined as a gpu
      {with("gpus.json", "{"), "gpus.json"},
      {with("nodes.json", "[]"), "nodes.json"},
      {with("nics.json", R"({"kind":"nic","entries":[]})"),
       "the id of a nic"},  // dangling references
      {with("gpus.json", R"({"kind":"gpu","entries":[],"extra":1})"), "extra"}};
  for (const auto& [files, want] : bad) {
    std::string p = outcome_parse(files);
    CAPTURE(p);
    CHECK(p.find(want) != std::string::npos);
    CHECK(outcome_join(files) == p);
  }
}

// Issue 23: the switch a fabric gets by default is a catalog fact of the NIC (nics.json "switch"),
// not a speed threshold in code.
TEST_CASE(
    "catalog: every NIC names its default switch per transport it speaks, of that transport") {
  const Catalog& c = Catalog::builtin();
  for (const NicSpec& n : c.nics()) {
    CAPTURE(n.id);
    const double per_port = n.bandwidth_Bps / n.ports;
    if (n.transport != "ethernet" && n.transport != "srd") {  // EFA (SRD) runs over Ethernet
      REQUIRE(!n.ib_switch.empty());
      const SwitchSpec& s = c.switch_(n.ib_switch);
      CHECK(s.transport == "infiniband");
      CHECK(s.port_bw_Bps >= per_port * (1 - 1e-9));
    }
    if (n.transport != "infiniband") {
      REQUIRE(!n.eth_switch.empty());
      const SwitchSpec& s = c.switch_(n.eth_switch);
      CHECK(s.transport == "ethernet");
      CHECK(s.port_bw_Bps >= per_port * (1 - 1e-9));
    }
  }
  CHECK(c.nic("cx7-400g").ib_switch == "quantum-2-qm9700");
  CHECK(c.nic("cx8-800g").ib_switch == "quantum-x800-q3400");
  CHECK(c.nic("cx6-200g").ib_switch == "quantum-qm8700");
  CHECK(c.nic("roce-400g").eth_switch == "spectrum-4-sn5600");
  // A default switch that is not a switch of the catalog is an input error naming the key.
  const std::string nic =
      R"({"id":"n","name":"N","bandwidth":"400Gbps","latency":"1us","power":"1W","price":"$1","transport":"vpi",)"
      R"("optic":"","switch":{"infiniband":"no-such-switch"},"source":"a test entry","estimates":[]})";
  try {
    Catalog::parse({{"nics.json", R"({"kind":"nic","entries":[)" + nic + "]}"}});
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("switch.infiniband") != std::string::npos);
  }
}

TEST_CASE(
    "catalog: a server's cooling is data and picks the facility preset a cluster defaults to") {
  const Catalog& c = Catalog::builtin();
  // Liquid: the NVL72 racks, the 1,400 W MI355X and JUPITER's GH200 node; air: the 8-GPU servers,
  // DGX B300 included (1,100 W per GPU in a fan-cooled chassis).
  for (const char* id : {"gb200-nvl72", "gb300-nvl72", "mi355x-8x", "gh200-quad"})
    CHECK_MESSAGE(c.node(id).liquid_cooled, id);
  for (const char* id : {"dgx-h100", "dgx-b200", "dgx-b300", "mi325x-8x", "gaudi3-8x"})
    CHECK_MESSAGE(!c.node(id).liquid_cooled, id);
  const auto preset = [](const char* node, int nodes) {
    const nlohmann::json j = {
        {"name", "x"}, {"node", node}, {"nodes", nodes}, {"fabric", {{"kind", "none"}}}};
    return parse_cluster(Doc::from_json(j, "x.json")).facility.id;
  };
  CHECK(preset("dgx-b300", 1) == "air-cooled");
  CHECK(preset("gb200-nvl72", 18) == "liquid-cooled");
  CHECK(preset("gh200-quad", 1) == "liquid-cooled");
  // A server without a cooling, or with one the catalog does not know, is an input error.
  const std::string node =
      R"({"id":"n","name":"N","gpu":"h100-sxm-80gb","gpus":8,"scaleup":"nvswitch","nvlink_domain_gpus":8,)"
      R"("nvswitch_chips":4,"nics":8,"nic":"cx7-400g","nic_transceivers":4,"pcie_bandwidth":"64GB/s",)"
      R"("max_power":"10kW","overhead_power":"3kW","price":"$1","rack_units":8,"nodes_per_rack":4,)"
      R"("source":"a test entry","estimates":[])";
  const auto parse_node = [](const std::string& entry) {
    Catalog::parse({{"nodes.json", R"({"kind":"node","entries":[)" + entry + "]}"}});
  };
  CHECK_THROWS_WITH_AS(parse_node(node + "}"), doctest::Contains("cooling"), InputError);
  CHECK_THROWS_WITH_AS(parse_node(node + R"(,"cooling":"water"})"), doctest::Contains("water"),
                       InputError);
}
