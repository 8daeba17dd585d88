// Fabric generators against published reference designs and closed forms.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

Cluster rail(const std::string& node, int nodes, std::vector<std::string> sets = {}) {
  ClusterParams p;
  p.node = node;
  p.nodes = nodes;
  p.fabric = "rail_optimized";
  p.switch_id = "quantum-2-qm9700";
  p.sets = std::move(sets);
  return make_cluster(p);
}

int switches(const Cluster& c, const std::string& role) {
  for (const auto& g : c.facts.switches)
    if (g.role == role) return g.count;
  return 0;
}
long long cables(const Cluster& c, Tier t) {
  for (const auto& g : c.facts.cables)
    if (g.tier == t) return g.count;
  return 0;
}
long long bom_count(const Cluster& c, const std::string& category, const std::string& role_part) {
  long long n = 0;
  for (const auto& l : c.bom.lines)
    if (l.category == category && l.role.find(role_part) != std::string::npos) n += l.count;
  return n;
}
void within(double got, double want, double rel) {
  CHECK_MESSAGE(std::fabs(got - want) <= rel * want,
                "got " << got << ", want " << want << " within " << rel * 100 << "%");
}

// Capacity (line rate) of the directed links that cross from the left half to the right half of
// a Clos fabric: nodes, leaves and pods split in two; in 2 tiers spines split by position, in 3
// tiers cores split within each group. Computed from the links of the built graph.
double clos_cut_Bps(const Cluster& c) {
  const Topology& t = *c.topology;
  const auto& f = c.facts;
  int L = 0, spines = 0, cores = 0;
  long long leaf_ports = 0;
  for (const auto& g : f.switches) {
    if (g.role == "leaf") L = g.count, leaf_ports = g.ports_used;
    if (g.role == "spine") spines = g.count;
    if (g.role == "core") cores = g.count;
  }
  const long long E = f.node_ports;
  const int U = static_cast<int>((leaf_ports - E) / L);
  const int S = f.tiers == 3 ? U : spines;  // spines per pod
  const int pods = spines / S, C = cores ? cores / S : 1;
  auto left = [&](std::uint32_t dev) {
    const Device& d = t.devices()[dev];
    switch (d.kind) {
      case DeviceKind::Switch:
        if (d.level == 0) return static_cast<int>(d.index) < L / 2;
        if (d.level == 1)
          return f.tiers == 3 ? static_cast<int>(d.index) / S < pods / 2
                              : static_cast<int>(d.index) < S / 2;
        return static_cast<int>(d.index) % C < C / 2;
      default:
        return static_cast<int>(d.node) < c.nodes / 2;
    }
  };
  double cut = 0;
  for (const auto& l : t.links())
    if (left(l.src) && !left(l.dst)) cut += l.bandwidth_Bps / c.transport.efficiency;
  return cut;
}

}  // namespace

TEST_CASE(
    "fabric: DGX H100 SuperPOD 1-4 SU match NVIDIA's published counts (RA-H100 Table 4) within "
    "2%") {
  // NVIDIA: 31/63/95/127 nodes (32nd slot of each SU is UFM); leaves 8/16/24/32; spines 4/8/16/16;
  // node+UFM cables 252/508/764/1020; spine-leaf cables 256/512/768/1024.
  const int nodes[] = {31, 63, 95, 127};
  const int leaves[] = {8, 16, 24, 32}, spines[] = {4, 8, 16, 16};
  const int node_cables[] = {252, 508, 764, 1020}, spine_cables[] = {256, 512, 768, 1024};
  for (int i = 0; i < 4; ++i) {
    CAPTURE(nodes[i]);
    Cluster c = rail("dgx-h100", nodes[i]);
    CHECK(c.facts.tiers == 2);
    CHECK(switches(c, "leaf") == leaves[i]);
    CHECK(switches(c, "spine") == spines[i]);
    within(static_cast<double>(cables(c, Tier::Access)), node_cables[i],
           0.02);  // UFM ports not modelled
    CHECK(cables(c, Tier::LeafSpine) == spine_cables[i]);
  }
}

TEST_CASE("fabric: 4-SU / 127-node SuperPOD bill of materials matches RA-H100 Table 8 within 2%") {
  Cluster c = rail("dgx-h100", 127);
  within(static_cast<double>(c.bom.cables), 2040, 0.02);  // compute-fabric NDR cables
  within(static_cast<double>(bom_count(c, "transceiver", "switch side")), 1536,
         0.02);                                                                      // switch OSFP
  within(static_cast<double>(bom_count(c, "transceiver", "node side")), 508, 0.02);  // system OSFP
  CHECK(c.bom.switches == 48);  // 32 leaf + 16 spine
  CHECK(c.bom.cables == 2040);
  CHECK(bom_count(c, "transceiver", "switch side") == 1536);
  CHECK(bom_count(c, "transceiver", "node side") == 508);
}

TEST_CASE("fabric: DGX B200 SuperPOD switch counts per tier match RA-B200 (2 to 64 SU)") {
  struct Row {
    int nodes, leaf, spine, core;
  } rows[] = {{64, 16, 8, 0},      {128, 32, 16, 0},      {256, 64, 32, 0},
              {512, 128, 128, 64}, {1024, 256, 256, 128}, {2048, 512, 512, 256}};
  for (const auto& r : rows) {
    CAPTURE(r.nodes);
    Cluster c = rail("dgx-b200", r.nodes);
    CHECK(switches(c, "leaf") == r.leaf);
    CHECK(switches(c, "spine") == r.spine);
    CHECK(switches(c, "core") == r.core);
    CHECK(c.facts.tiers == (r.core ? 3 : 2));
  }
}

TEST_CASE(
    "fabric: DGX B300 SuperPOD scalable units match RA-B300 (Spectrum-X RoCE and XDR InfiniBand)") {
  // NVIDIA DGX SuperPOD B300 reference architecture, "Components" (docs/hardware-facts.md 4.1,
  // [RA-B300]): one Spectrum-X (RoCE) SU is 64 DGX B300 = 512 GPUs on 16 leaves and 8 spines; the
  // XDR InfiniBand variant's SU is 72 DGX B300 = 576 GPUs on 8 leaves and 4 spines. Both 1:1.
  struct Row {
    const char* switch_id;
    const char* transport;
    int nodes, leaf, spine;
  } rows[] = {{"spectrum-4-sn5600", "roce", 64, 16, 8},
              {"quantum-x800-q3400", "infiniband", 72, 8, 4}};
  for (const auto& r : rows) {
    CAPTURE(r.switch_id);
    ClusterParams p;
    p.node = "dgx-b300";
    p.nodes = r.nodes;
    p.fabric = "rail_optimized";
    p.switch_id = r.switch_id;
    p.transport = r.transport;
    // tutti's SU is the nodes under one leaf per rail, by default the leaf switch's catalog
    // nodes_per_su: the XDR SU is one (72 nodes on 144-port Q3400 leaves); the Spectrum-X SU of 64
    // nodes is two of the SN5600's 32. No nodes_per_su is set: the default must give the RA.
    Cluster c = make_cluster(p);
    CHECK(c.fabric.nodes_per_su == (r.nodes == 72 ? 72 : 32));
    CHECK(c.transport.kind == r.transport);
    CHECK(c.gpus() == r.nodes * 8);
    CHECK(c.facts.tiers == 2);
    CHECK(switches(c, "leaf") == r.leaf);
    CHECK(switches(c, "spine") == r.spine);
    CHECK(c.bom.switches == r.leaf + r.spine);
    // Non-blocking: as many leaf-spine cables as node cables.
    CHECK(cables(c, Tier::LeafSpine) == cables(c, Tier::Access));
  }
}

TEST_CASE(
    "fabric: the default scalable unit is the rail leaf's reference-architecture SU from the "
    "catalog") {
  // DGX B300 on XDR InfiniBand with no switch named: the NIC's default switch is the Q3400, whose
  // catalog SU is RA-B300's 72 nodes; 144 nodes are two SUs: 16 leaves + 8 spines.
  ClusterParams p;
  p.node = "dgx-b300";
  p.nodes = 144;
  p.fabric = "rail_optimized";
  Cluster c = make_cluster(p);
  CHECK(c.leaf_switch.id == "quantum-x800-q3400");
  CHECK(c.leaf_switch.nodes_per_su == 72);
  CHECK(c.fabric.nodes_per_su == 72);
  CHECK(switches(c, "leaf") == 16);
  CHECK(switches(c, "spine") == 8);
  // An explicit value still wins, and the DGX H100 SuperPOD keeps its 32 (the QM9700's).
  p.sets = {"fabric.nodes_per_su=36"};
  CHECK(make_cluster(p).fabric.nodes_per_su == 36);
  CHECK(rail("dgx-h100", 128).fabric.nodes_per_su == 32);
  // A switch without a cited SU keeps the generator's 32.
  CHECK(Catalog::builtin().switch_("tomahawk5-64x800g").nodes_per_su == 0);
}

TEST_CASE(
    "fabric: bisection of a k-ary fat-tree and its oversubscribed variant match the closed forms") {
  // HDR QM8700 (k = 40 ports of 200 Gb/s) under DGX A100 nodes (8 x 200G NICs).
  const double B = 200e9 / 8;
  const int k = 40;
  auto ft = [&](int nodes, std::vector<std::string> sets) {
    ClusterParams p;
    p.node = "dgx-a100-80gb";
    p.nodes = nodes;
    p.fabric = "fat_tree";
    p.switch_id = "quantum-qm8700";
    p.sets = std::move(sets);
    return make_cluster(p);
  };
  SUBCASE("2-tier, 1:1: N = k^2/2 hosts, bisection N B / 2") {
    Cluster c = ft(k * k / 2 / 8, {});
    const double N = k * k / 2;
    CHECK(c.facts.tiers == 2);
    CHECK(switches(c, "leaf") == k);
    CHECK(switches(c, "spine") == k / 2);
    CHECK(c.facts.bisection_Bps == doctest::Approx(N * B / 2));
    CHECK(clos_cut_Bps(c) == doctest::Approx(N * B / 2));
  }
  SUBCASE("3-tier, 1:1: N = k^3/4 hosts, k^2/2 leaves and spines, k^2/4 cores, bisection N B / 2") {
    Cluster c = ft(k * k * k / 4 / 8, {"fabric.tiers=3"});
    const double N = k * k * k / 4;
    CHECK(c.facts.tiers == 3);
    CHECK(switches(c, "leaf") == k * k / 2);
    CHECK(switches(c, "spine") == k * k / 2);
    CHECK(switches(c, "core") == k * k / 4);
    CHECK(c.facts.bisection_Bps == doctest::Approx(N * B / 2));
    CHECK(clos_cut_Bps(c) == doctest::Approx(N * B / 2));
    CHECK(c.facts.diameter_switch_hops == 5);
  }
  SUBCASE("2-tier, 3:1 at the leaves: bisection N B / (2 r)") {
    // k = 40 at 3:1: 30 host ports + 10 uplinks per leaf; 40 leaves -> 1,200 hosts.
    Cluster c = ft(150, {"fabric.oversubscription=3"});
    const double N = 1200, r = 3;
    CHECK(switches(c, "leaf") == 40);
    CHECK(c.facts.bisection_Bps == doctest::Approx(N * B / (2 * r)));
    CHECK(clos_cut_Bps(c) == doctest::Approx(N * B / (2 * r)));
  }
  SUBCASE("3-tier, 2:1 at the leaves and 1:1 above") {
    Cluster full = ft(2000, {"fabric.tiers=3", "fabric.leaf_down_ports=20"});
    Cluster over =
        ft(2000, {"fabric.tiers=3", "fabric.leaf_down_ports=20", "fabric.oversubscription=2"});
    CHECK(over.facts.bisection_Bps == doctest::Approx(full.facts.bisection_Bps / 2));
    CHECK(clos_cut_Bps(over) == doctest::Approx(16000 * B / 4));
    CHECK(over.bom.switches < full.bom.switches);
    CHECK(over.bom.network_capex_usd < full.bom.network_capex_usd);
  }
}

TEST_CASE("fabric: 16,384-GPU rail-optimized 3-tier and its 2:1 variant") {
  Cluster full = rail("dgx-h100", 2048);
  CHECK(full.gpus() == 16384);
  CHECK(full.facts.tiers == 3);
  CHECK(switches(full, "leaf") == 512);
  CHECK(switches(full, "spine") == 512);
  CHECK(switches(full, "core") == 256);
  CHECK(full.facts.bisection_Bps == doctest::Approx(16384 * 50e9 / 2));
  Cluster over = rail("dgx-h100", 2048, {"fabric.oversubscription=2"});
  CHECK(over.facts.bisection_Bps == doctest::Approx(full.facts.bisection_Bps / 2));
  CHECK(switches(over, "leaf") == 512);
  CHECK(switches(over, "spine") == 256);
  CHECK(over.bom.network_capex_usd < 0.8 * full.bom.network_capex_usd);
}

TEST_CASE("fabric: a switch with too few ports for its links is an input error naming the part") {
  // 40 nodes per SU at 1:1 need 80 ports on each rail leaf; a QM9700 has 64.
  CHECK_THROWS_WITH_AS(rail("dgx-h100", 80, {"fabric.nodes_per_su=40"}),
                       doctest::Contains("fabric.leaf_switch"), InputError);
  try {
    rail("dgx-h100", 80, {"fabric.nodes_per_su=40"});
  } catch (const InputError& e) {
    std::string m = e.what();
    CHECK(m.find("quantum-2-qm9700") != std::string::npos);
    CHECK(m.find("80") != std::string::npos);
  }
  ClusterParams p;
  p.node = "dgx-h100";
  p.nodes = 16;
  p.fabric = "fat_tree";
  p.sets = {"fabric.leaf_down_ports=48"};  // 48 down + 48 up > 64
  CHECK_THROWS_WITH_AS(make_cluster(p), doctest::Contains("fabric.leaf_switch"), InputError);
  p.sets = {"fabric.tiers=2"};
  p.nodes = 4096;  // 32,768 NICs: 1,024 leaves cannot hang off 64-port spines in 2 tiers
  CHECK_THROWS_WITH_AS(make_cluster(p), doctest::Contains("fabric.tiers"), InputError);
  p.nodes = 8;
  p.fabric = "dragonfly";
  p.sets = {"fabric.groups=2", "fabric.routers_per_group=40", "fabric.nics_per_router=8",
            "fabric.global_links_per_router=20"};  // 8 + 39 + 20 = 67 ports > 64
  CHECK_THROWS_WITH_AS(make_cluster(p), doctest::Contains("fabric.leaf_switch"), InputError);
  p.fabric = "torus";
  p.sets = {"fabric.dims=[2,2]", "fabric.nics_per_router=4"};  // 4 routers x 4 NICs < 64 NICs
  CHECK_THROWS_WITH_AS(make_cluster(p), doctest::Contains("fabric.dims"), InputError);
  p.fabric = "rail_optimized";
  p.sets = {"fabric.switch=spectrum-4-sn5600"};  // Ethernet switch under InfiniBand transport
  CHECK_THROWS_WITH_AS(make_cluster(p), doctest::Contains("fabric.switch"), InputError);
  p.sets = {"fabric.dims=[4,4]"};  // a torus key on a Clos fabric
  CHECK_THROWS_WITH_AS(make_cluster(p), doctest::Contains("dims"), InputError);
}

TEST_CASE("fabric: routes take the expected hops") {
  std::vector<std::uint32_t> path;
  Cluster c = rail("dgx-h100", 64);  // 2 SU
  const Topology& t = *c.topology;
  t.route(0, 5, 1, path);  // same node: NVSwitch
  CHECK(path.size() == 2);
  CHECK(t.links()[path[0]].tier == Tier::NVLink);
  t.route(0, 8, 1, path);  // node 1, same rail, same SU: one leaf
  CHECK(path.size() == 4);
  CHECK(t.switch_hops(path) == 1);
  t.route(0, 9, 1, path);  // node 1, other rail: leaf, spine, leaf
  CHECK(t.switch_hops(path) == 3);
  t.route(0, 32 * 8, 1, path);  // other SU, same rail: up through a spine
  CHECK(t.switch_hops(path) == 3);
  CHECK(t.path_latency_s(path) > 1e-6);
  CHECK(t.path_bandwidth_Bps(path) == doctest::Approx(50e9 * c.transport.efficiency));

  // ECMP spreads flows over every uplink of the leaf; d-mod-k ignores the hash.
  std::set<std::uint32_t> up;
  for (std::uint64_t h = 0; h < 2000; ++h) {
    t.route(0, 9, h, path);
    up.insert(path[2]);
  }
  CHECK(up.size() == 32);
  Cluster d = rail("dgx-h100", 64, {"fabric.routing=dmodk"});
  std::set<std::uint32_t> one;
  for (std::uint64_t h = 0; h < 100; ++h) {
    d.topology->route(0, 9, h, path);
    one.insert(path[2]);
  }
  CHECK(one.size() == 1);
}

TEST_CASE("fabric: GB200 NVLink domains span 18 trays, torus and dragonfly routes are minimal") {
  std::vector<std::uint32_t> path;
  ClusterParams p;
  p.node = "gb200-nvl72";
  p.nodes = 36;
  p.fabric = "fat_tree";
  Cluster g = make_cluster(p);
  g.topology->route(0, 71, 3, path);
  CHECK(path.size() == 2);  // same 72-GPU NVLink domain
  g.topology->route(0, 72, 3, path);
  CHECK(g.topology->switch_hops(path) >= 1);
  p.nodes = 20;
  CHECK_THROWS_AS(make_cluster(p), InputError);  // not whole NVL72 racks

  p.node = "dgx-h100";
  p.nodes = 16;  // 128 NICs on a 4x4x4 torus, 2 NICs per router
  p.fabric = "torus";
  p.sets = {"fabric.dims=[4,4,4]", "fabric.nics_per_router=2"};
  Cluster t = make_cluster(p);
  const Topology& tt = *t.topology;
  for (int s = 0; s < 128; s += 5)
    for (int d = 0; d < 128; d += 3) {
      if (s / 8 == d / 8) continue;
      int rs = s / 2, rd = d / 2, dist = 0;  // NIC == GPU index for DGX (one NIC per GPU)
      for (int k = 0, st = 1; k < 3; ++k, st *= 4) {
        int a = rs / st % 4, b = rd / st % 4, dd = std::abs(a - b);
        dist += std::min(dd, 4 - dd);
      }
      tt.route(s, d, 17, path);
      CHECK(tt.switch_hops(path) == dist + 1);
    }
  CHECK(t.facts.diameter_switch_hops == 7);

  p.fabric = "dragonfly";
  p.sets = {"fabric.groups=4", "fabric.routers_per_group=4", "fabric.nics_per_router=8",
            "fabric.global_links_per_router=3"};
  Cluster df = make_cluster(p);
  for (int s = 0; s < 128; s += 3)
    for (int d = 1; d < 128; d += 7) {
      if (s / 8 == d / 8) continue;
      df.topology->route(s, d, static_cast<std::uint64_t>(s * 131 + d), path);
      int global = 0;
      for (auto id : path) global += df.topology->links()[id].tier == Tier::Global;
      CHECK(global <= 1);
      CHECK(df.topology->switch_hops(path) <= 4);
    }
  CHECK(df.facts.diameter_switch_hops == 4);
}

TEST_CASE("fabric: dual-plane and RoCE variants") {
  ClusterParams p;
  p.node = "dgx-h100";
  p.nodes = 64;
  p.fabric = "dual_plane";
  Cluster c = make_cluster(p);
  CHECK(c.fabric.planes == 2);
  CHECK(c.facts.link_bw_Bps == doctest::Approx(25e9));  // 2 x 200G per 400G NIC
  CHECK(c.facts.node_ports == 64 * 8 * 2);
  CHECK(c.facts.bisection_Bps == doctest::Approx(512 * 50e9 / 2));
  std::set<std::uint32_t> first_hop;
  std::vector<std::uint32_t> path;
  for (std::uint64_t h = 0; h < 64; ++h) {
    c.topology->route(0, 100, h, path);
    first_hop.insert(path[1]);
  }
  CHECK(first_hop.size() == 2);  // both planes used

  p.fabric = "fat_tree";
  p.transport = "roce";
  p.switch_id = "spectrum-4-sn5600";
  p.sets = {"fabric.link_speed=400Gbps"};
  Cluster r = make_cluster(p);
  CHECK(r.transport.kind == "roce");
  CHECK(r.facts.switches[0].radix == 128);
  ClusterParams q;
  q.node = "dgx-h100";
  q.nodes = 64;
  q.fabric = "fat_tree";
  Cluster ib = make_cluster(q);
  r.topology->route(0, 100, 1, path);
  double roce_lat = r.topology->path_latency_s(path);
  ib.topology->route(0, 100, 1, path);
  CHECK(roce_lat > ib.topology->path_latency_s(path));
}

TEST_CASE("fabric: PXN routing keeps cross-rail traffic on the destination's rail") {
  std::vector<std::uint32_t> path;
  Cluster plain = rail("dgx-h100", 64);
  Cluster pxn = rail("dgx-h100", 64, {"fabric.pxn=true"});
  plain.topology->route(0, 9, 5, path);  // node 0 rail 0 -> node 1 rail 1
  CHECK(plain.topology->switch_hops(path) == 3);
  pxn.topology->route(0, 9, 5, path);
  CHECK(pxn.topology->switch_hops(path) == 1);  // NVLink to GPU 1, then rail 1's leaf
  CHECK(pxn.topology->links()[path[0]].tier == Tier::NVLink);
  CHECK(pxn.topology->links()[path[1]].dst == pxn.topology->gpu_device(1));
  pxn.topology->route(0, 8, 5, path);  // same rail: unchanged
  CHECK(path.size() == 4);
}

namespace {
Cluster fat(const std::string& node, int nodes, const std::string& sw, double oversub,
            std::string transport = "") {
  ClusterParams p;
  p.node = node;
  p.nodes = nodes;
  p.fabric = "fat_tree";
  p.switch_id = sw;
  p.sets = {fmt::format("fabric.oversubscription={:g}", oversub)};
  if (!transport.empty()) p.sets.push_back("transport.kind=" + transport);
  return make_cluster(p);
}
}  // namespace

TEST_CASE(
    "fabric: RoCE 2-tier fat tree of 1,024 x 400G on 128-port (breakout) switches matches the "
    "closed form") {
  // Non-blocking 2-tier folded Clos of k-port switches (k = 128 at 400G): k/2 hosts per leaf,
  // leaves = N / (k/2), spines = leaves * (k/2) / k (Al-Fares et al., SIGCOMM 2008).
  Cluster c = fat("dgx-h100", 128, "spectrum-4-sn5600", 1, "roce");
  CHECK(c.facts.tiers == 2);
  CHECK(switches(c, "leaf") == 16);
  CHECK(switches(c, "spine") == 8);
  CHECK(cables(c, Tier::LeafSpine) == 1024);
  CHECK(cables(c, Tier::Access) == 1024);
}

TEST_CASE("fabric: oversubscription never raises the switch count or the network cost") {
  for (const char* sw : {"spectrum-4-sn5600", "quantum-2-qm9700"})
    for (int nodes : {4, 16, 48, 128, 250, 512}) {
      CAPTURE(sw);
      CAPTURE(nodes);
      const std::string tr = std::string(sw).rfind("spectrum", 0) == 0 ? "roce" : "";
      Cluster one = fat("dgx-h100", nodes, sw, 1, tr);
      for (double r : {1.5, 2.0, 3.0, 4.0}) {
        CAPTURE(r);
        Cluster over = fat("dgx-h100", nodes, sw, r, tr);
        CHECK(over.bom.switches <= one.bom.switches);
        CHECK(over.bom.network_capex_usd <= one.bom.network_capex_usd + 1e-6);
        CHECK(over.facts.bisection_Bps <= one.facts.bisection_Bps * (1 + 1e-9));
      }
    }
  // The 2:1 RoCE fabric of the issue: was 43 spines at ~10% port use.
  Cluster c = fat("dgx-h100", 128, "spectrum-4-sn5600", 2, "roce");
  CHECK(switches(c, "spine") <= 8);
  CHECK(fat("dgx-h100", 128, "spectrum-4-sn5600", 2, "roce").bom.network_capex_usd <
        fat("dgx-h100", 128, "spectrum-4-sn5600", 1, "roce").bom.network_capex_usd);
}

TEST_CASE("fabric: a 2-node cluster is one switch, no spines and no uplinks") {
  Cluster c = rail("dgx-h100", 2);
  CHECK(c.bom.switches == 1);
  CHECK(c.facts.tiers == 1);
  CHECK(cables(c, Tier::LeafSpine) == 0);
  CHECK(cables(c, Tier::Access) == 16);
  // 16 nodes fill half a 32-node SU: leaves get uplinks for 16, not 32.
  Cluster h = rail("dgx-h100", 16);
  CHECK(cables(h, Tier::LeafSpine) == 8 * 16);
  CHECK(switches(h, "spine") == 2);
}

TEST_CASE("fabric: both ends of an optical link share one media") {
  // DGX H100 (ConnectX-7, multimode SR4 by default) on RoCE Spectrum-4 (single-mode DR8 default).
  Cluster c = fat("dgx-h100", 16, "spectrum-4-sn5600", 1, "roce");
  REQUIRE(!c.switch_optic.id.empty());
  REQUIRE(!c.node_optic.id.empty());
  CHECK(c.switch_optic.media == c.node_optic.media);
  CHECK(c.node_optic.bandwidth_Bps >= c.nic.bandwidth_Bps);
  Cluster ib = rail("dgx-h100", 31);
  CHECK(ib.switch_optic.media == ib.node_optic.media);
}

TEST_CASE("fabric: an EFA node runs SRD, whose multipath transport sprays every flow") {
  Cluster c = load_cluster(testing::src("topologies/aws-p5-efa-512.json"));
  CHECK(c.nic.id == "efa-v2-400g");
  CHECK(c.transport.kind == "srd");
  CHECK(c.transport.multipath);
  CHECK(c.fabric.routing == Routing::Spray);
  CHECK(c.leaf_switch.transport == "ethernet");
  CHECK(c.gpus() == 512);
  // The cluster can still name a routing, e.g. to compare with per-flow hashing.
  Cluster e = load_cluster(testing::src("topologies/aws-p5-efa-512.json"), {"fabric.routing=ecmp"});
  CHECK(e.fabric.routing == Routing::Ecmp);
  // A torus has no equal-cost paths to spray over: hashing stays the default there.
  ClusterParams t;
  t.node = "aws-p5-48xlarge";
  t.nodes = 8;
  t.fabric = "torus";
  t.transport = "srd";
  t.sets = {"fabric.dims=[2,2,2]", "fabric.nics_per_router=8"};
  CHECK(make_cluster(t).fabric.routing == Routing::Ecmp);
  // SRD needs an EFA NIC, and an EFA NIC speaks nothing else.
  ClusterParams p;
  p.node = "aws-p5-48xlarge";
  p.nodes = 8;
  p.fabric = "fat_tree";
  for (const char* tr : {"infiniband", "roce"}) {
    p.transport = tr;
    try {
      make_cluster(p);
      FAIL("expected an input error for transport " << tr);
    } catch (const InputError& err) {
      CHECK(std::string(err.what()).find("\"srd\"") != std::string::npos);
      CHECK(std::string(err.what()).find("EFA") != std::string::npos);
    }
  }
  ClusterParams d;
  d.node = "dgx-h100";
  d.nodes = 8;
  d.fabric = "fat_tree";
  d.transport = "srd";
  CHECK_THROWS_AS(make_cluster(d), InputError);
}
