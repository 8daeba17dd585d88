// `tutti cluster simulate|compare` end to end: text, --json against its schema, --csv, exit codes.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "../support/run.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/core/schema.hpp"

using tutti::testing::run_tutti;
using tutti::testing::src;

TEST_CASE("tutti cluster simulate: JSON job list, text and JSON outputs, schema, determinism") {
  const std::vector<std::string> args = {"cluster",     "simulate",
                                         "--cluster",   "topologies/h100-64gpu-fattree.json",
                                         "--jobs",      "tests/data/cluster/jobs-small.json",
                                         "--scheduler", "easy-backfill",
                                         "--placement", "topology"};
  auto t = run_tutti(args);
  REQUIRE(t.rc == 0);
  CHECK(t.out.find("GPU utilisation") != std::string::npos);
  CHECK(t.out.find("idle: fragmentation") != std::string::npos);
  CHECK(t.out.find("queue wait           p50") != std::string::npos);
  CHECK(t.out.find("assumptions") != std::string::npos);
  std::vector<std::string> ja = args;
  ja.insert(ja.begin(), "--json");
  auto j1 = run_tutti(ja), j2 = run_tutti(ja);
  REQUIRE(j1.rc == 0);
  CHECK(j1.out == j2.out);  // byte-identical
  const auto schema = tutti::load_schema(src("schemas/cluster_result.schema.json"));
  auto errs = tutti::validate_schema(schema, j1.json());
  CHECK_MESSAGE(errs.empty(), tutti::format_schema_errors(errs));
  CHECK(j1.json()["jobs"] == 8);
  CHECK(j1.json()["completed"] == 8);
}

TEST_CASE("tutti cluster simulate: sacct dump, synthetic trace, CSV") {
  auto s = run_tutti({"cluster", "simulate", "--cluster", "topologies/h100-64gpu-fattree.json",
                      "--jobs", "tests/data/cluster/sacct-small.txt", "--scheduler", "fifo",
                      "--placement", "packed"});
  CHECK(s.rc == 0);
  CHECK(s.out.find("(4 jobs)") != std::string::npos);
  const std::string csv = tutti::testing::temp_dir() + "/jobs.csv";
  auto y =
      run_tutti({"--seed", "3", "cluster", "simulate", "--cluster",
                 "topologies/h100-64gpu-fattree.json", "--synthetic", "jobs=50,span=1d,max_gpus=16",
                 "--scheduler", "conservative-backfill", "--alloc", "gpu", "--csv", csv});
  CHECK(y.rc == 0);
  std::ifstream f(csv);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  CHECK(text.rfind("id,user,gpus,submit_s", 0) == 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 51);
}

TEST_CASE("tutti cluster compare: schedulers x placements side by side") {
  auto r =
      run_tutti({"--json", "cluster", "compare", "--cluster", "topologies/h100-64gpu-fattree.json",
                 "--synthetic", "jobs=200,span=2d,max_gpus=32", "--schedulers",
                 "fifo,easy-backfill", "--placements", "packed,topology", "--no-failures"});
  REQUIRE(r.rc == 0);
  auto j = r.json();
  REQUIRE(j["runs"].size() == 4);
  CHECK(j["runs"][0]["scheduler"] == "fifo");
  CHECK(j["runs"][2]["scheduler"] == "easy-backfill");
  // Backfill shortens the mean wait on the same trace.
  CHECK(j["runs"][2]["wait_s"]["mean"].get<double>() <
        j["runs"][0]["wait_s"]["mean"].get<double>());
  auto t = run_tutti({"cluster", "compare", "--cluster", "topologies/h100-64gpu-fattree.json",
                      "--synthetic", "jobs=50,span=1d"});
  CHECK(t.rc == 0);
  CHECK(t.out.find("easy-backfill") != std::string::npos);
}

TEST_CASE("tutti cluster: bad traces and flags exit 2 naming the line or key") {
  const std::string dir = tutti::testing::temp_dir();
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  const std::string swf =
      write("bad.swf", "; header\n1 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 1 1 -1 -1\n2 5 0 x 8\n");
  auto a = run_tutti(
      {"cluster", "simulate", "--cluster", "topologies/h100-64gpu-fattree.json", "--jobs", swf});
  CHECK(a.rc == 2);
  CHECK(a.err.find("bad.swf: line 3, field 4 (run time): got \"x\"") != std::string::npos);
  const std::string js = write(
      "bad.json",
      R"({"format": "tutti-jobs/1", "jobs": [{"gpus": 4, "duration": "1h"}, {"gpus": "four", "duration": "1h"}]})");
  auto b = run_tutti(
      {"cluster", "simulate", "--cluster", "topologies/h100-64gpu-fattree.json", "--jobs", js});
  CHECK(b.rc == 2);
  CHECK(b.err.find("jobs.1.gpus") != std::string::npos);
  const std::string sa = write("bad.sacct",
                               "JobID|Submit|Start|End|AllocTRES\n7|2024-01-01T00:00:00|2024-01-"
                               "01T00:00:00|soon|gres/gpu=1\n");
  auto c = run_tutti(
      {"cluster", "simulate", "--cluster", "topologies/h100-64gpu-fattree.json", "--jobs", sa});
  CHECK(c.rc == 2);
  CHECK(c.err.find("line 2, End: got \"soon\"") != std::string::npos);
  auto d = run_tutti({"cluster", "simulate", "--cluster", "topologies/h100-64gpu-fattree.json",
                      "--synthetic", "jobs=5", "--scheduler", "lifo"});
  CHECK(d.rc == 2);
  CHECK(d.err.find("--scheduler: scheduler: got \"lifo\"") != std::string::npos);
  const std::string big =
      write("big.json",
            R"({"format": "tutti-jobs/1", "jobs": [{"id": "x", "gpus": 1000, "duration": "1h"}]})");
  auto e = run_tutti(
      {"cluster", "simulate", "--cluster", "topologies/h100-64gpu-fattree.json", "--jobs", big});
  CHECK(e.rc == 2);
  CHECK(e.err.find("1000 GPUs") != std::string::npos);
}

TEST_CASE("tutti cluster size: the smallest node count meeting a p90 wait target, or exit 1") {
  auto r =
      run_tutti({"--json", "cluster", "size", "--cluster", "topologies/dgx-h100-superpod-1su.json",
                 "--jobs", "tests/data/cluster/lublin-256-excerpt.swf", "--alloc", "gpu",
                 "--p90-wait", "1h", "--no-failures", "-q"});
  REQUIRE(r.rc == 0);
  auto j = r.json();
  CHECK(j["fits"] == true);
  const int n = j["nodes"].get<int>();
  CHECK(n >= 32);  // the widest SWF job needs 256 GPUs
  CHECK(j["result"]["wait_s"]["p90"].get<double>() <= 3600);
  // The answer is minimal among the node counts tried: one fewer misses the target.
  bool below_checked = false;
  for (const auto& t : j["tried"])
    if (t["nodes"] == n - 1) {
      below_checked = true;
      CHECK(t["wait_p90_s"].get<double>() > 3600);
    }
  CHECK(below_checked);
  auto no = run_tutti({"cluster", "size", "--cluster", "topologies/dgx-h100-superpod-1su.json",
                       "--jobs", "tests/data/cluster/lublin-256-excerpt.swf", "--alloc", "gpu",
                       "--p90-wait", "1s", "--max-nodes", "33", "--no-failures", "-q"});
  CHECK(no.rc == 1);
  CHECK(no.out.find("no cluster up to 33 nodes") != std::string::npos);
}

TEST_CASE(
    "tutti cluster simulate --elastic: elastic jobs raise utilisation on a trace with idle GPUs") {
  const std::vector<std::string> args = {"--json",
                                         "cluster",
                                         "simulate",
                                         "--cluster",
                                         "topologies/h100-64gpu-fattree.json",
                                         "--jobs",
                                         "tests/data/cluster/jobs-elastic.json",
                                         "--alloc",
                                         "gpu",
                                         "--no-failures"};
  auto rigid = run_tutti(args);
  std::vector<std::string> ea = args;
  ea.push_back("--elastic");
  auto el = run_tutti(ea);
  REQUIRE(rigid.rc == 0);
  REQUIRE(el.rc == 0);
  const auto schema = tutti::load_schema(src("schemas/cluster_result.schema.json"));
  auto errs = tutti::validate_schema(schema, el.json());
  CHECK_MESSAGE(errs.empty(), tutti::format_schema_errors(errs));
  const auto r = rigid.json(), e = el.json();
  CHECK(e["busy_utilization"].get<double>() > r["busy_utilization"].get<double>());
  CHECK(e["makespan_s"].get<double>() < r["makespan_s"].get<double>());
  CHECK(e["jct_s"]["mean"].get<double>() < r["jct_s"]["mean"].get<double>());
  CHECK(!r.contains("resizes"));
  CHECK(e["resizes"].get<int>() > 0);
  int elastic_jobs = 0;
  for (const auto& o : e["job_outcomes"])
    if (o.contains("min_gpus_used")) {
      ++elastic_jobs;
      if (o["id"] == "train-a") {
        CHECK(o["min_gpus_used"].get<int>() >= 8);
        CHECK(o["max_gpus_used"].get<int>() <= 40);
      } else {
        CHECK(o["min_gpus_used"].get<int>() >= 4);
        CHECK(o["max_gpus_used"].get<int>() <= 32);
      }
    }
  CHECK(elastic_jobs == 2);
  auto text = run_tutti({"cluster", "simulate", "--cluster", "topologies/h100-64gpu-fattree.json",
                         "--jobs", "tests/data/cluster/jobs-elastic.json", "--elastic"});
  CHECK(text.rc == 0);
  CHECK(text.out.find("grow/shrink steps") != std::string::npos);
  CHECK(text.out.find("elastic = ") != std::string::npos);
}

TEST_CASE("tutti plan --jobs: sizes a cluster for a trace, the same answer as tutti cluster size") {
  const std::vector<std::string> flags = {"--cluster",    "topologies/h100-64gpu-fattree.json",
                                          "--jobs",       "tests/data/cluster/jobs-elastic.json",
                                          "--alloc",      "gpu",
                                          "--p90-wait",   "10min",
                                          "--no-failures"};
  std::vector<std::string> plan = {"--json", "-q", "plan"},
                           size = {"--json", "-q", "cluster", "size"};
  plan.insert(plan.end(), flags.begin(), flags.end());
  size.insert(size.end(), flags.begin(), flags.end());
  auto p = run_tutti(plan), s = run_tutti(size);
  REQUIRE(p.rc == 0);
  REQUIRE(s.rc == 0);
  CHECK(p.out == s.out);
  auto j = p.json();
  CHECK(j["format"] == "tutti-cluster-size/1");
  CHECK(j["fits"] == true);
  CHECK(j["result"]["wait_s"]["p90"].get<double>() <= 600);
  const int n = j["nodes"].get<int>();
  CHECK(n >= 4);  // the widest job asks 32 GPUs
  for (const auto& t : j["tried"])
    if (t["nodes"] == n - 1) CHECK(t["wait_p90_s"].get<double>() > 600);
  // Text output names the answer; a trace flag without --jobs, or with a training request, is
  // exit 2.
  std::vector<std::string> text = {"plan"};
  text.insert(text.end(), flags.begin(), flags.end());
  auto t = run_tutti(text);
  CHECK(t.rc == 0);
  CHECK(t.out.find("smallest cluster meeting wait p90") != std::string::npos);
  auto a =
      run_tutti({"plan", "--cluster", "topologies/h100-64gpu-fattree.json", "--p90-wait", "1h"});
  CHECK(a.rc == 2);
  CHECK(a.err.find("--jobs TRACE") != std::string::npos);
  auto b = run_tutti({"plan", "--example", "--jobs", "tests/data/cluster/jobs-elastic.json",
                      "--p90-wait", "1h", "--cluster", "topologies/h100-64gpu-fattree.json"});
  CHECK(b.rc == 2);
  CHECK(b.err.find("not both") != std::string::npos);
  auto c =
      run_tutti({"plan", "--jobs", "tests/data/cluster/jobs-elastic.json", "--p90-wait", "1h"});
  CHECK(c.rc == 2);
  CHECK(c.err.find("--cluster FILE") != std::string::npos);
}
