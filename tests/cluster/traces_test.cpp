// Trace readers: SWF, sacct --parsable2, tutti JSON, synthetic; their error paths.
#include <doctest/doctest.h>

#include <string>

#include "../support/run.hpp"
#include "tutti/cluster/jobs.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti;

namespace {
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("swf: fields, skipped records, processors per GPU") {
  const std::string t =
      "; Version: 2.2\n; MaxProcs: 64\n"
      "1 100 5 3600 16 -1 -1 16 7200 -1 1 3 1 -1 1 1 -1 -1\n"
      "2 50 0 0 8 -1 -1 8 600 -1 5 4 1 -1 1 1 -1 -1\n"      // cancelled: run time 0
      "3 200 1 60 -1 -1 -1 4 120 -1 1 3 2 -1 1 1 -1 -1\n";  // allocated unknown -> requested
  JobList l = read_swf(t, "t.swf", 2);
  REQUIRE(l.jobs.size() == 2);
  CHECK(l.skipped == 1);
  CHECK(l.jobs[0].id == "1");
  CHECK(l.jobs[0].submit_s == 0);  // shifted to the first submission
  CHECK(l.jobs[0].gpus == 8);      // 16 processors / 2
  CHECK(l.jobs[0].work.duration_s == 3600);
  CHECK(l.jobs[0].walltime_s == 7200);
  CHECK(l.jobs[1].submit_s == 100);
  CHECK(l.jobs[1].gpus == 2);
  CHECK(l.users[l.jobs[0].user] == "u3");
  CHECK(l.teams[l.jobs[1].team] == "g2");
}

TEST_CASE("swf: bad lines name the file, line and field") {
  CHECK(error_of([] { read_swf("; c\n1 0 0 10 4 -1 -1 4 20 -1 1 1 1 -1 1 1 -1\n", "a.swf"); }) ==
        "a.swf: line 2: got 17 fields, expected 18 whitespace-separated SWF fields");
  CHECK(error_of([] { read_swf("1 0 0 ten 4 -1 -1 4 20 -1 1 1 1 -1 1 1 -1 -1\n", "a.swf"); }) ==
        "a.swf: line 1, field 4 (run time): got \"ten\", expected a number (-1 for unknown)");
  CHECK(error_of([] { read_swf("; only comments\n", "a.swf"); }).find("no runnable job") !=
        std::string::npos);
  // Found by fuzz_job_traces in CI (stop 30): 1e116 processors was cast to int (undefined).
  CHECK(error_of([] { read_swf("1 0 0 10 1e116 -1 -1 4 20 -1 1 1 1 -1 1 1 -1 -1\n", "a.swf"); }) ==
        "a.swf: line 1, field 5 (allocated processors): got 1e+116 processors (1e+116 GPUs), "
        "expected at most "
        "16777216 GPUs at 1 processors per GPU");
}

TEST_CASE("swf: ids of any magnitude are text, never an out-of-range cast") {
  JobList l = read_swf("1e116 0 0 10 4 -1 -1 4 20 -1 1 1e30 2.5 -1 1 1 -1 -1\n", "a.swf");
  REQUIRE(l.jobs.size() == 1);
  CHECK(l.jobs[0].id == "1e+116");
  CHECK(l.users[l.jobs[0].user] == "u1e+30");
  CHECK(l.teams[l.jobs[0].team] == "g2.5");
}

TEST_CASE("sacct: TRES GPUs, steps and pending jobs skipped, NNodes fallback, limits") {
  JobList l = load_jobs(testing::src("tests/data/cluster/sacct-small.txt"), 1, 8);
  REQUIRE(l.jobs.size() == 4);
  CHECK(l.skipped == 2);  // 1001.batch, 1003 (never started)
  CHECK(l.jobs[0].id == "1001");
  CHECK(l.jobs[0].gpus == 8);
  CHECK(l.jobs[0].work.duration_s == 7200);
  CHECK(l.jobs[0].walltime_s == 4 * 3600);
  CHECK(l.jobs[1].gpus == 16);           // gres/gpu:h100=16
  CHECK(l.jobs[1].walltime_s == 86400);  // 1-00:00:00
  CHECK(l.jobs[1].submit_s == 600);
  CHECK(l.jobs[2].gpus == 32);          // no gres/gpu: NNodes 4 x 8
  CHECK(l.jobs[2].walltime_s == 1800);  // 30:00 = MM:SS
  CHECK(l.jobs[3].walltime_s == 0);     // UNLIMITED
  CHECK(l.users[l.jobs[3].user] == "dave");
  CHECK(l.teams[l.jobs[3].team] == "vision");
}

TEST_CASE("sacct: bad dumps name the line and column") {
  const std::string h = "JobID|User|Submit|Start|End|AllocTRES\n";
  CHECK(error_of([&] {
          read_sacct(
              h + "1|a|2024-03-01 08:00|2024-03-01T08:00:00|2024-03-01T09:00:00|gres/gpu=1\n",
              "s.txt");
        }) ==
        "s.txt: line 2, Submit: got \"2024-03-01 08:00\", expected a time such as "
        "2024-03-01T12:34:56");
  CHECK(error_of([&] {
          read_sacct(h + "1|a|2024-03-01T08:00:00|2024-03-01T08:00:00\n", "s.txt");
        }) == "s.txt: line 2: got 4 fields, expected 6 '|'-separated fields as in the header");
  CHECK(error_of([&] {
          read_sacct("JobID|User|Start|End|AllocTRES\n", "s.txt");
        }).find("no Submit column") != std::string::npos);
  CHECK(error_of([&] {
          read_sacct(
              h + "1|a|2024-03-01T08:00:00|2024-03-01T09:00:00|2024-03-01T08:00:00|gres/gpu=1\n",
              "s.txt");
        }).find("line 2, End") != std::string::npos);
  CHECK(error_of([&] {
          read_sacct(h + "1|a|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|gres/"
                         "gpu=99999999999\n",
                     "s.txt");
        }) == "s.txt: line 2: got 99999999999 GPUs, expected at most 16777216 GPUs");
}

TEST_CASE("json job list: strict keys with their paths") {
  JobList l = load_jobs(testing::src("tests/data/cluster/jobs-small.json"));
  CHECK(l.jobs.size() == 8);
  CHECK(l.workloads.size() == 2);
  CHECK(l.jobs[0].work.workload == 0);
  CHECK(l.jobs[0].work.iterations == 2000);
  CHECK(l.jobs[3].work.comm_fraction == doctest::Approx(0.3));
  CHECK(l.jobs[7].priority == 10);
  const std::string head = R"({"format": "tutti-jobs/1", "jobs": [)";
  CHECK(error_of([&] {
          read_job_json(head + R"({"gpus": 4, "duration": "1h", "colour": 1}]})", "j.json");
        }).find("jobs.0.colour") != std::string::npos);
  CHECK(error_of([&] {
          read_job_json(head + R"({"gpus": 4, "duration": 3600}]})", "j.json");
        }).find("jobs.0.duration") != std::string::npos);
  CHECK(error_of([&] {
          read_job_json(head + R"({"gpus": 4}]})", "j.json");
        }).find("exactly one of") != std::string::npos);
  CHECK(error_of([&] {
          read_job_json(head + R"({"workload": "nope", "iterations": 1}]})", "j.json");
        }).find("jobs.0.workload") != std::string::npos);
  CHECK(error_of([&] {
          read_job_json(head + R"({"gpus": 0, "duration": "1h"}]})", "j.json");
        }).find("jobs.0.gpus") != std::string::npos);
}

TEST_CASE("synthetic traces are seeded and follow their parameters") {
  SyntheticSpec s =
      parse_synthetic("jobs=2000,span=10d,min_gpus=2,max_gpus=32,median=1h,sigma=0.5,users=4");
  JobList a = synthetic_jobs(s, 7), b = synthetic_jobs(s, 7), c = synthetic_jobs(s, 8);
  REQUIRE(a.jobs.size() == 2000);
  bool same = true, differ = false;
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    same &= a.jobs[i].submit_s == b.jobs[i].submit_s && a.jobs[i].gpus == b.jobs[i].gpus;
    differ |= a.jobs[i].submit_s != c.jobs[i].submit_s;
    CHECK(a.jobs[i].gpus >= 2);
    CHECK(a.jobs[i].gpus <= 32);
    CHECK((a.jobs[i].gpus & (a.jobs[i].gpus - 1)) == 0);
  }
  CHECK(same);
  CHECK(differ);
  // Poisson arrivals over the span; lognormal median 1 h.
  CHECK(a.jobs.back().submit_s == doctest::Approx(10 * 86400.0).epsilon(0.1));
  std::vector<double> d;
  for (auto& j : a.jobs) d.push_back(j.work.duration_s);
  std::nth_element(d.begin(), d.begin() + 1000, d.end());
  CHECK(d[1000] == doctest::Approx(3600).epsilon(0.08));
  CHECK(error_of([] { parse_synthetic("jobs=10,colour=2"); }).find("--synthetic: colour") !=
        std::string::npos);
  CHECK(error_of([] { parse_synthetic("min_gpus=8,max_gpus=4"); }).find("min_gpus") !=
        std::string::npos);
}

TEST_CASE("shipped SWF sample: its header's bounds and the excerpt's totals") {
  JobList l = load_jobs(testing::src("tests/data/cluster/lublin-256-excerpt.swf"));
  REQUIRE(l.jobs.size() == 300);
  CHECK(l.skipped == 0);
  int widest = 0;
  double longest = 0, proc_hours = 0;
  for (const JobSpec& j : l.jobs) {
    widest = std::max(widest, j.gpus);
    longest = std::max(longest, j.work.duration_s);
    proc_hours += j.gpus * j.work.duration_s / 3600;
  }
  CHECK(widest <= 256);      // ; MaxNodes: 256
  CHECK(longest <= 162754);  // ; MaxRuntime: 162754
  CHECK(widest == 256);
  CHECK(longest == 38466);
  CHECK(proc_hours == doctest::Approx(14099).epsilon(1e-3));
  CHECK(l.jobs.back().submit_s == 320038 - 5094);  // shifted to the first submission
}

TEST_CASE(
    "schemas/cluster_jobs.schema.json and the reader agree on the shipped job list and on a bad "
    "one") {
  const auto schema = load_schema(testing::src("schemas/cluster_jobs.schema.json"));
  const auto ok = load_schema(testing::src("tests/data/cluster/jobs-small.json"));  // any JSON file
  auto errs = validate_schema(schema, ok);
  CHECK_MESSAGE(errs.empty(), format_schema_errors(errs));
  const auto bad = parse_json_text(R"({"format": "tutti-jobs/1", "jobs": [{"gpus": 4}]})", "bad");
  CHECK(!validate_schema(schema, bad).empty());
  CHECK_THROWS_AS(read_job_json(bad.dump(), "bad"), InputError);
}

TEST_CASE(
    "json job list: elastic ranges (min_gpus <= gpus <= max_gpus, fixed-duration jobs only)") {
  JobList l = load_jobs(testing::src("tests/data/cluster/jobs-elastic.json"));
  REQUIRE(l.jobs.size() == 5);
  CHECK(l.jobs[0].min_gpus == 8);
  CHECK(l.jobs[0].max_gpus == 40);
  CHECK(l.jobs[0].elastic());
  CHECK(!l.jobs[1].elastic());
  CHECK(l.jobs[1].max_gpus == 0);
  const auto schema = load_schema(testing::src("schemas/cluster_jobs.schema.json"));
  auto errs =
      validate_schema(schema, load_schema(testing::src("tests/data/cluster/jobs-elastic.json")));
  CHECK_MESSAGE(errs.empty(), format_schema_errors(errs));
  const std::string head = R"({"format": "tutti-jobs/1", "jobs": [)";
  // Only max given: min defaults to gpus.
  JobList m = read_job_json(head + R"({"gpus": 4, "max_gpus": 16, "duration": "1h"}]})", "j.json");
  CHECK(m.jobs[0].min_gpus == 4);
  CHECK(m.jobs[0].elastic());
  CHECK(error_of([&] {
          read_job_json(head + R"({"gpus": 4, "min_gpus": 8, "duration": "1h"}]})", "j.json");
        }).find("jobs.0.min_gpus") != std::string::npos);
  CHECK(error_of([&] {
          read_job_json(head + R"({"gpus": 4, "max_gpus": 2, "duration": "1h"}]})", "j.json");
        }).find("jobs.0.max_gpus") != std::string::npos);
  const std::string wl =
      R"({"format": "tutti-jobs/1", "workloads": {"w": {"workload": "x.json"}}, "jobs": [)";
  CHECK(error_of([&] {
          read_job_json(wl + R"({"workload": "w", "iterations": 5, "max_gpus": 16}]})", "j.json");
        }).find("jobs.0.max_gpus") != std::string::npos);
}
