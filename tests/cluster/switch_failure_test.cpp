// tutti cluster with per-component failures: a leaf switch failure stops every job behind it.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tutti/cluster/cluster_sim.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

TEST_CASE(
    "cluster: the llama3-fabric profile adds leaf switch failures that stop the jobs behind them") {
  // 128 DGX H100 on QM9700 rails: 32 leaves, each the only attachment of one rail of 32 nodes.
  ClusterParams p;
  p.node = "dgx-h100";
  p.nodes = 128;
  const Cluster c = make_cluster(p);
  JobList l;
  l.file = "test";
  l.users = {"u"};
  l.teams = {"t"};
  for (int k = 0; k < 8; ++k) {
    JobSpec j;
    j.id = "j" + std::to_string(k);
    j.submit_s = 0;
    j.gpus = 128;
    j.work.duration_s = 200 * 86400.0;  // long enough for switch failures at ~2.6 a year
    l.jobs.push_back(j);
  }
  ClusterSimOptions o;
  o.reliability_profile = "llama3-fabric";
  o.seed = 3;
  ClusterResult r = simulate_cluster(c, l, o);
  CHECK(r.completed == 8);
  // 32 leaves x 2 failures per 100 switches per 91 days (Singh et al. 2021) = 2.57 a year.
  bool said = false;
  for (const auto& d : r.defaults)
    said = said || d.find("2.57 switch failures per year") != std::string::npos;
  CHECK_MESSAGE(said, "defaults name the switch failure rate");
  CHECK(r.failures > 0);
  CHECK(r.restarts > 0);
  // Deterministic for a seed.
  CHECK(to_json(simulate_cluster(c, l, o)).dump() == to_json(r).dump());
  // The node-level profile charges no switch failures.
  o.reliability_profile = "llama3";
  for (const auto& d : simulate_cluster(c, l, o).defaults)
    CHECK(d.find("switch failures") == std::string::npos);
}
