// The cluster trace run document read back through its strict reader
// (tutti/cluster/cluster_result.hpp): real `tutti cluster simulate --json` output round-trips into
// the typed view, and a malformed document is an InputError naming the key path.
#include "tutti/cluster/cluster_result.hpp"

#include <doctest/doctest.h>

#include "../support/result_doc.hpp"

using nlohmann::json;
using tutti::ClusterResultView;
using tutti::testing::check_corruptions;
using tutti::testing::run_json;

namespace {
json cluster_run() {
  return run_json({"--json", "cluster", "simulate", "--cluster",
                   "topologies/h100-64gpu-fattree.json", "--jobs",
                   "tests/data/cluster/jobs-small.json", "--scheduler", "easy-backfill",
                   "--placement", "topology"});
}

const auto read_cluster = [](const json& j, const std::string& source, const std::string& at) {
  return ClusterResultView::from_json(j, source, at);
};
}  // namespace

TEST_CASE("cluster result: tutti cluster simulate --json reads back into the typed view") {
  const json j = cluster_run();
  CHECK(j.at("schema_version") == tutti::kClusterResultSchemaVersion);
  const ClusterResultView v = ClusterResultView::from_json(j, "run.json");
  CHECK(v.schema_version == 1);
  CHECK(v.cluster == j.at("cluster"));
  CHECK(v.trace == j.at("trace"));
  CHECK(v.scheduler == "easy-backfill");
  CHECK(v.placement == "topology");
  CHECK(v.jobs == 8);
  CHECK(v.gpus == j.at("gpus").get<std::int64_t>());
  CHECK(v.makespan_s == j.at("makespan_s").get<double>());
  CHECK(v.goodput == j.at("goodput").get<double>());
  CHECK(v.wait_s.p90 == j.at("wait_s").at("p90").get<double>());
  CHECK(v.jct_s.p90 == j.at("jct_s").at("p90").get<double>());
  CHECK(v.slowdown.p90 == j.at("slowdown").at("p90").get<double>());
  CHECK(v.idle_gpu_hours.fragmentation == j.at("idle_gpu_hours").at("fragmentation").get<double>());
  CHECK(v.cost_usd == j.at("cost_usd").get<double>());
  REQUIRE(v.timeline.size() == j.at("timeline").size());
  for (std::size_t i = 0; i < v.timeline.size(); ++i) {
    CHECK(v.timeline[i].t_s == j.at("timeline")[i].at("t_s").get<double>());
    CHECK(v.timeline[i].busy == j.at("timeline")[i].at("busy").get<double>());
  }
  REQUIRE(v.job_waits_s.has_value());
  REQUIRE(v.job_waits_s->size() == 8);
  for (std::size_t i = 0; i < 8; ++i)
    CHECK((*v.job_waits_s)[i] == j.at("job_outcomes")[i].at("wait_s").get<double>());
  // Written without jobs (`tutti cluster compare`'s brief runs): no job outcomes in the view.
  json brief = j;
  brief.erase("job_outcomes");
  CHECK_FALSE(ClusterResultView::from_json(brief, "brief.json").job_waits_s.has_value());
}

TEST_CASE("cluster result: a malformed run is an InputError naming the key path") {
  const json good = cluster_run();
  check_corruptions(read_cluster, good,
                    {{"/wait_s/p90", "long", "wait_s.p90"},
                     {"/schema_version", 2, "schema_version"},
                     {"/timeline/1/busy", -1, "timeline.1.busy"},
                     {"/job_outcomes/2/wait_s", "x", "job_outcomes.2.wait_s"}},
                    "cluster report", "runs.1");
  json old = good;
  old.erase("schema_version");
  CHECK_THROWS_WITH_AS(ClusterResultView::from_json(old, "old.json"),
                       doctest::Contains("schema_version"), tutti::InputError);
}
