// Routing modes on Clos fabrics (issue 22): ECMP (a hash per flow: flows collide on some links
// while others idle), adaptive routing and packet spraying (each flow spread evenly over the
// equal-cost cables of every tier, the fluid limit of per-packet balancing at each switch: one
// flow over bundles, Topology::link_bundle). On oversubscribed fabrics with hash collisions (a
// 2:1 fat-tree, a 3-tier fabric 2:1 at the core) the balanced modes reach the ideal fluid bound
// and ECMP does not; where nothing collides every mode gives the same time; and SimGrid, on the
// same routes and bundle capacities, agrees with the native engine within 1%.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "tutti/core/error.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {

// 8 DGX H100 (64 GPUs, 64 NICs) on 2 leaves of 32 NIC ports each, 2:1 oversubscribed: 16
// uplinks per leaf.
Cluster fat_tree_2to1(const std::string& routing) {
  ClusterParams p;
  p.name = "ft-2to1-" + routing;
  p.node = "dgx-h100";
  p.nodes = 8;
  p.fabric = "fat_tree";
  p.oversubscription = 2;
  p.sets = {"fabric.leaf_down_ports=32", "fabric.routing=" + routing};
  return make_cluster(p);
}

// GPU i of leaf 0 sends to GPU i of leaf 1 (32 flows over the 16 uplinks of leaf 0).
std::vector<CollectivePlan> cross_leaf_pairs(const CollectiveContext& ctx, double bytes) {
  std::vector<CollectivePlan> plans;
  for (int i = 0; i < 32; ++i) plans.push_back(plan_p2p(i, 32 + i, bytes, ctx));
  return plans;
}

double scale_out_capacity(const Topology& t, const CalibrationProfile& prof, Tier tier) {
  for (const Link& l : t.links())
    if (l.tier == tier) return l.bandwidth_Bps * prof.tier(tier).bandwidth_efficiency;
  return 0;
}

}  // namespace

TEST_CASE("routing: adaptive and spray send one flow over the bundles of every tier") {
  for (const char* mode : {"adaptive", "spray"}) {
    const Cluster c = fat_tree_2to1(mode);
    const Topology& t = *c.topology;
    INFO(mode);
    CHECK(t.max_paths() == 1);
    CHECK(t.paths(0, 32) == 1);  // one flow, spread over the 16 uplinks by its bundle
    std::set<std::uint32_t> up;
    std::vector<std::uint32_t> path, again;
    for (int i = 0; i < 32; ++i) {
      t.route(i, 32 + i, 12345 + i, path);
      t.route_path(i, 32 + i, 999, 0, again);
      CHECK(again == path);     // no hash: every flow of a leaf names the same cables
      CHECK(path.size() == 6);  // PCIe, access, up, down, access, PCIe
      for (std::uint32_t l : path) {
        const Tier tier = t.links()[l].tier;
        // 16 uplinks (and 16 downlinks into leaf 1) per bundle; one plane: one access cable.
        CHECK(t.link_bundle(l) == (tier == Tier::LeafSpine ? 16.0 : 1.0));
        if (tier == Tier::LeafSpine && t.devices()[t.links()[l].dst].level == 1) up.insert(l);
      }
    }
    CHECK(up.size() == 1);  // the bundle's representative cable
  }
  // ECMP and d-mod-k keep one hashed path per flow, over single cables.
  for (const char* mode : {"ecmp", "dmodk"}) {
    const Cluster c = fat_tree_2to1(mode);
    CHECK(c.topology->paths(0, 32) == 1);
    CHECK(c.topology->max_paths() == 1);
    for (std::uint32_t l = 0; l < c.topology->links().size(); ++l)
      CHECK(c.topology->link_bundle(l) == 1.0);
  }
}

TEST_CASE(
    "routing: across pods of a 3-tier fabric adaptive and spray reach the core's fluid bound") {
  // 256 DGX H100 on the 16k rail-optimized fabric with spines 2:1 towards the cores: two pods
  // (5 and 3 scalable units). Every GPU of pod 1 (nodes 160-255) sends to its rail peer in pod 0:
  // 768 flows over pod 1's spine-to-core cables, fewer than the flows. Balanced at every switch,
  // each flow gets (cables / flows) of a cable; ECMP hashing at the core leaves some cables idle
  // and others doubled, and the former model (split over leaf uplinks only, core hops hashed)
  // kept diluted collisions at the core.
  const CalibrationProfile& prof = default_calibration();
  const double bytes = 64e6;
  auto cluster = [](const std::string& mode) {
    return load_cluster(std::string(TUTTI_SOURCE_DIR) + "/topologies/h100-16k-rail-3tier.json",
                        {"nodes=256", "fabric.spine_oversubscription=2", "fabric.routing=" + mode});
  };
  auto plans_of = [&](const Topology& t) {
    CollectiveContext ctx = make_collective_context(t, prof, false, false);
    std::vector<CollectivePlan> plans;
    for (int i = 0; i < 96; ++i)
      for (int r = 0; r < 8; ++r)
        plans.push_back(plan_p2p((160 + i) * 8 + r, i * 8 + r, bytes, ctx));
    return plans;
  };
  double t_ecmp = 0;
  {
    const Cluster c = cluster("ecmp");
    t_ecmp = simulate_collectives(plans_of(*c.topology), *c.topology, prof);
  }
  for (const char* mode : {"adaptive", "spray"}) {
    const Cluster c = cluster(mode);
    const Topology& t = *c.topology;
    const auto plans = plans_of(t);
    // Spine-to-core cables: spines are built whole per pod, so each pod has half of them.
    double up_cables = 0, core_cap = 0;
    std::uint32_t core_link = 0;
    for (std::uint32_t l = 0; l < t.links().size(); ++l) {
      const Link& L = t.links()[l];
      if (L.tier == Tier::SpineCore && t.devices()[L.src].level == 1) {
        ++up_cables;
        core_cap = L.bandwidth_Bps * prof.tier(Tier::SpineCore).bandwidth_efficiency;
        core_link = l;
      }
    }
    INFO(mode);
    CHECK(t.link_bundle(core_link) == up_cables / 2);
    std::vector<std::uint32_t> path;
    t.route(160 * 8, 0, 0, path);
    CHECK(path.size() == 8);  // PCIe, access, leaf up, spine up, core down, leaf down, access, PCIe
    double lat = 0;
    for (std::uint32_t l : path)
      lat += t.links()[l].latency_s + prof.tier(t.links()[l].tier).extra_latency_s;
    const double rate = std::min(scale_out_capacity(t, prof, Tier::Access),
                                 core_cap * (up_cables / 2) / static_cast<double>(plans.size()));
    const double bound = plans[0].fixed_latency_s + lat + bytes / rate;
    const double ts = simulate_collectives(plans, t, prof);
    std::printf(
        "3-tier 2:1 at the core, 768 cross-pod flows: ECMP %.6f s, %s %.6f s, fluid bound "
        "%.6f s\n",
        t_ecmp, mode, ts, bound);
    CHECK(ts == doctest::Approx(bound).epsilon(1e-6));
    CHECK(t_ecmp > ts * 1.1);
  }
}

TEST_CASE(
    "routing: on a 2:1 fat-tree with ECMP collisions adaptive and spray reach the fluid bound") {
  const CalibrationProfile& prof = default_calibration();
  const double bytes = 256e6;
  double t_ecmp = 0;
  {
    const Cluster c = fat_tree_2to1("ecmp");
    CollectiveContext ctx = make_collective_context(*c.topology, prof, false, false);
    t_ecmp = simulate_collectives(cross_leaf_pairs(ctx, bytes), *c.topology, prof);
  }
  for (const char* mode : {"adaptive", "spray"}) {
    const Cluster c = fat_tree_2to1(mode);
    const Topology& t = *c.topology;
    CollectiveContext ctx = make_collective_context(t, prof, false, false);
    const auto plans = cross_leaf_pairs(ctx, bytes);
    const double ts = simulate_collectives(plans, t, prof);
    // Fluid bound: 32 flows share 16 uplinks evenly (half an uplink each) unless the NIC is slower.
    std::vector<std::uint32_t> path;
    t.route_path(0, 32, 0, 0, path);
    double lat = 0;
    for (std::uint32_t l : path)
      lat += t.links()[l].latency_s + prof.tier(t.links()[l].tier).extra_latency_s;
    const double rate = std::min(scale_out_capacity(t, prof, Tier::Access),
                                 scale_out_capacity(t, prof, Tier::LeafSpine) * 16 / 32);
    const double bound = plans[0].fixed_latency_s + lat + bytes / rate;
    INFO(mode << ": " << ts << " s, fluid bound " << bound << " s, ECMP " << t_ecmp << " s");
    std::printf("2:1 fat-tree, 32 cross-leaf flows: ECMP %.6f s, %s %.6f s, fluid bound %.6f s\n",
                t_ecmp, mode, ts, bound);
    CHECK(ts == doctest::Approx(bound).epsilon(1e-6));
    CHECK(t_ecmp > ts * 1.2);  // hash collisions: some uplinks carry 3-4 flows, others none
  }
}

TEST_CASE("routing: where no flows collide every routing mode gives the same time") {
  const CalibrationProfile& prof = default_calibration();
  std::vector<double> times;
  for (const char* mode : {"ecmp", "dmodk", "adaptive", "spray"}) {
    const Cluster c = fat_tree_2to1(mode);
    CollectiveContext ctx = make_collective_context(*c.topology, prof, false, false);
    // One flow across the leaves, plus a ring all-reduce inside leaf 0 (4 nodes, no spine).
    std::vector<int> leaf0;
    for (int i = 0; i < 32; ++i) leaf0.push_back(i);
    times.push_back(simulate_collectives({plan_p2p(40, 8, 128e6, ctx)}, *c.topology, prof));
    times.push_back(simulate_collectives({plan_collective(Coll::AllReduce, 256e6, leaf0, ctx)},
                                         *c.topology, prof));
  }
  for (std::size_t i = 2; i < times.size(); ++i)
    CHECK(times[i] == doctest::Approx(times[i % 2]).epsilon(1e-9));
}

TEST_CASE("routing: SimGrid agrees with the native engine on sprayed flows on a 2:1 fat-tree") {
  const CalibrationProfile& prof = default_calibration();
  for (const char* mode : {"spray"}) {
    const Cluster c = fat_tree_2to1(mode);
    const Topology& t = *c.topology;
    CollectiveContext ctx = make_collective_context(t, prof, false, false);
    std::vector<int> all;
    for (int i = 0; i < t.num_gpus(); ++i) all.push_back(i);
    std::vector<CollectivePlan> plans = cross_leaf_pairs(ctx, 64e6);
    plans.push_back(plan_collective(Coll::AllReduce, 256e6, all, ctx));
    plans.push_back(plan_collective(Coll::AllToAll, 64e6, all, ctx));
    std::vector<double> native, sg;
    const double tn = simulate_collectives(plans, t, prof, 1, &native);
    SimgridStats st;
    const double ts = simulate_collectives_simgrid(plans, t, prof, 1, &sg, &st);
    std::printf(
        "2:1 fat-tree %s, 32 p2p + all-reduce + all-to-all: native %.6e s simgrid %.6e s ratio "
        "%.5f "
        "(%.0f flows, %.2f s)\n",
        mode, tn, ts, tn / ts, st.flows, st.wall_s);
    REQUIRE(ts > 0);
    CHECK(std::abs(tn / ts - 1) < 0.01);
    for (std::size_t i = 0; i < plans.size(); ++i) {
      INFO("plan " << i << ": native " << native[i] << " s, simgrid " << sg[i] << " s");
      CHECK(std::abs(native[i] / sg[i] - 1) < 0.01);
    }
  }
}

TEST_CASE("routing: adaptive and spray are refused on fabrics other than Clos") {
  ClusterParams p;
  p.node = "dgx-h100";
  p.nodes = 8;
  p.fabric = "torus";
  p.sets = {"fabric.dims=[2,2,2]", "fabric.nics_per_router=8", "fabric.routing=spray"};
  try {
    make_cluster(p);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("fabric.routing") != std::string::npos);
    CHECK(std::string(e.what()).find("Clos") != std::string::npos);
  }
}

// Failures (failures.hpp): routes avoid what is down, ECMP and split flows use what is left.
#include "../support/run.hpp"
#include "tutti/topologies/failures.hpp"

TEST_CASE("failures: routes avoid failed cables and switches, split flows use the paths left") {
  for (const char* mode : {"ecmp", "spray"}) {
    Cluster c = fat_tree_2to1(mode);
    const std::shared_ptr<const Topology> keep = c.topology;
    const Topology& healthy = *keep;
    std::vector<std::uint32_t> before;
    healthy.route(0, 40, 99, before);
    FailureRequest r;
    r.items = {"link=leaf0-spine0#3", "link=spine0->leaf1#5"};
    const AppliedFailures f = apply_failures(c, r);
    CHECK(f.cables == std::vector<std::string>{"leaf0-spine0#3", "leaf1-spine0#5"});
    const Topology& t = *c.topology;
    CHECK(&t != &healthy);
    std::vector<std::uint32_t> path;
    std::set<std::uint32_t> used_healthy, used_failed;
    // The cables in use when healthy: ECMP's hashed routes (the same link ids in every mode;
    // healthy spray routes name one representative cable per bundle).
    const Cluster ce = fat_tree_2to1("ecmp");
    for (int s = 0; s < 32; ++s)
      for (int d = 32; d < 64; ++d) {
        ce.topology->route(s, d, 7 * s + d, path);
        used_healthy.insert(path.begin(), path.end());
        const int n = t.paths(s, d);
        for (int i = 0; i < n; ++i) {
          t.route_path(s, d, 7 * s + d, n > 1 ? i : -1, path);
          used_failed.insert(path.begin(), path.end());
        }
      }
    // Exactly the two cables' uplink/downlink directions in use before are gone after.
    std::vector<std::uint32_t> gone;
    for (std::uint32_t l : used_healthy)
      if (!used_failed.count(l)) gone.push_back(l);
    std::string names;
    for (std::uint32_t l : gone) names += fabric_link_name(t, l) + " ";
    INFO(std::string(mode) << ": " << names);
    CHECK(gone.size() == 2);  // leaf0 -> spine0 #3 up, spine0 -> leaf1 #5 down
    for (std::uint32_t l : gone) CHECK(t.links()[l].tier == Tier::LeafSpine);
    if (std::string(mode) == "spray") CHECK(t.paths(0, 40) == 15);  // 16 uplinks, one down
    // No failure: the routes are the healthy ones.
    Cluster c2 = fat_tree_2to1(mode);
    apply_failures(c2, FailureRequest{});
    std::vector<std::uint32_t> again;
    c2.topology->route(0, 40, 99, again);
    CHECK(again == before);
  }
}

TEST_CASE(
    "failures: a failed spine on a 3-tier fabric reroutes through the other spines of the pod") {
  Cluster c = load_cluster(tutti::testing::src("topologies/h100-16k-rail-3tier.json"));
  std::vector<std::uint32_t> path;
  // A spine-to-core cable that a cross-pod route uses (spine position != 0).
  std::string cable;
  std::uint32_t cable_link = 0;
  for (std::uint64_t h = 0; h < 64 && cable.empty(); ++h) {
    c.topology->route(0, c.topology->num_gpus() - 1, h, path);
    for (std::uint32_t l : path) {
      const Link& L = c.topology->links()[l];
      const Device& a = c.topology->devices()[L.src];
      if (L.tier == Tier::SpineCore && a.level == 1 && a.index != 0) {
        cable = fabric_device_name(a) + "-" + fabric_device_name(c.topology->devices()[L.dst]);
        cable_link = l;
        break;
      }
    }
  }
  REQUIRE_FALSE(cable.empty());
  FailureRequest r;
  r.items = {"switch=spine0", "link=" + std::to_string(cable_link)};  // a link id: that very cable
  const AppliedFailures f = apply_failures(c, r);
  CHECK(f.switches == std::vector<std::string>{"spine0"});
  REQUIRE(f.cables.size() == 1);
  CHECK(f.cables[0].rfind(cable + "#", 0) == 0);
  const Topology& t = *c.topology;
  // GPU 0 (pod 0) to the last GPU (last pod): every route avoids spine0 and the failed cable.
  std::uint32_t spine0 = 0;
  for (std::uint32_t d = 0; d < t.devices().size(); ++d)
    if (t.devices()[d].kind == DeviceKind::Switch && t.devices()[d].level == 1 &&
        t.devices()[d].index == 0)
      spine0 = d;
  for (std::uint64_t h = 0; h < 200; ++h) {
    t.route(0, t.num_gpus() - 1, h, path);
    for (std::uint32_t l : path) {
      CHECK(t.links()[l].src != spine0);
      CHECK(t.links()[l].dst != spine0);
      CHECK(l != cable_link);
    }
  }
}
