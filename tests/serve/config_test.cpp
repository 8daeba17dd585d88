// Serving configuration: strict reading (key paths in errors), defaults stated, schema agreement,
// traces, seeded generation.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "serve_fixture.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"

using namespace tutti;
using namespace tutti::serve;
using namespace tutti::serve::testing;

TEST_CASE("serve config: defaults are applied and stated") {
  ServeConfig c = parse_serve_config(config_text(2, 10, 100, 20, "{\"tp\": 8}"), "c.json");
  CHECK(c.serving.max_batch == 256);
  CHECK(c.serving.kv_block_tokens == 16);
  CHECK(c.serving.chunked_prefill);
  CHECK(c.serving.gpu_memory_utilization == doctest::Approx(0.9));
  bool said = false;
  for (const std::string& d : c.defaults_applied)
    said |= d.find("serving.max_batch = 256") != std::string::npos;
  CHECK(said);
}

TEST_CASE("serve config: errors name the file and key path") {
  CHECK_THROWS_WITH_AS(
      parse_serve_config(config_text(2, 10, 100, 20, "{\"tp\": 8, \"bogus\": 1}"), "c.json"),
      doctest::Contains("c.json: serving"), InputError);
  CHECK_THROWS_WITH_AS(parse_serve_config(config_text(2, 10, 100, 20, "{\"tp\": 0}"), "c.json"),
                       doctest::Contains("serving.tp"), InputError);
  CHECK_THROWS_WITH_AS(
      parse_serve_config(config_text(2, 10, 100, 20, "{\"tp\": 8, \"ep\": 3}"), "c.json"),
      doctest::Contains("serving.ep"), InputError);
  CHECK_THROWS_WITH_AS(
      parse_serve_config(config_text(2, 10, 100, 20, "{\"tp\": 8}", ", \"slo\": {\"ttft\": 2}"),
                         "c.json"),
      doctest::Contains("slo.ttft"), InputError);
  CHECK_THROWS_WITH_AS(parse_serve_config(config_text(-1, 10, 100, 20, "{\"tp\": 8}"), "c.json"),
                       doctest::Contains("traffic.rate_per_s"), InputError);
  CHECK_THROWS_WITH_AS(
      parse_serve_config(config_text(2, 10, 100, 20,
                                     "{\"tp\": 8, \"replicas\": 2, \"disaggregation\": "
                                     "{\"prefill_replicas\": 1, \"decode_replicas\": 1}}"),
                         "c.json"),
      doctest::Contains("serving.replicas"), InputError);
  CHECK_THROWS_AS(parse_serve_config("{\"traffic\": {\"arrival\": \"poisson\"}}", "c.json"),
                  InputError);
}

TEST_CASE(
    "serve config: the schema accepts the shipped examples and rejects what the parser rejects") {
  nlohmann::json schema = load_schema(tutti::testing::src("schemas/serve.schema.json"));
  for (const char* f :
       {"sim/serve/examples/chat-llama3-70b.json", "sim/serve/examples/chat-mixtral-8x7b.json",
        "sim/serve/examples/trace-llama3-70b.json"}) {
    std::ifstream in(tutti::testing::src(f));
    nlohmann::json j = nlohmann::json::parse(in);
    CHECK_MESSAGE(validate_schema(schema, j).empty(), f);
    CHECK_NOTHROW(load_serve_config(tutti::testing::src(f)));
    // Every shipped example runs (Poisson loads cut to 50 requests to keep the test short).
    const std::string path = tutti::testing::src(f);
    ServeConfig cfg = j["traffic"]["arrival"] == "trace"
                          ? load_serve_config(path)
                          : load_serve_config(path, {"traffic.requests=50"});
    const std::string m =
        std::string(f).find("mixtral") != std::string::npos ? "mixtral-8x7b" : "llama3-70b";
    ServeResult r = simulate_serving(model(m), cfg, sim_cluster(cluster("dgx-h100-single")),
                                     default_calibration(), 1);
    CHECK(r.requests == (j["traffic"]["arrival"] == "trace" ? 60 : 50));
    CHECK(r.output_tokens_per_s > 0);
  }
  nlohmann::json bad =
      nlohmann::json::parse(config_text(2, 10, 100, 20, "{\"tp\": 8, \"bogus\": 1}"));
  CHECK_FALSE(validate_schema(schema, bad).empty());
  CHECK_THROWS_AS(parse_serve_config(bad.dump(), "c.json"), InputError);
}

TEST_CASE("serve config: trace CSV") {
  auto t = read_trace_csv("arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,200,20\n", "t.csv");
  REQUIRE(t.size() == 2);
  CHECK(t[1].arrival_s == 0.5);
  CHECK(t[1].prompt_tokens == 200);
  CHECK_THROWS_WITH_AS(
      read_trace_csv("arrival_s,prompt_tokens,output_tokens\n0,100,10\n1,x,2\n", "t.csv"),
      doctest::Contains("t.csv: line 3"), InputError);
  CHECK_THROWS_WITH_AS(
      read_trace_csv("arrival_s,prompt_tokens,output_tokens\n1,100,10\n0.5,1,2\n", "t.csv"),
      doctest::Contains("non-decreasing"), InputError);
  CHECK_THROWS_WITH_AS(read_trace_csv("a,b,c\n", "t.csv"), doctest::Contains("header"), InputError);
  // A trace drives the simulation as given.
  std::string dir = tutti::testing::temp_dir();
  {
    std::ofstream out(dir + "/trace.csv");
    out << "arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.25,300,5\n2,50,50\n";
  }
  ServeConfig c = parse_serve_config(
      "{\"traffic\": {\"arrival\": \"trace\", \"file\": \"trace.csv\"}, \"serving\": {\"tp\": 8}}",
      "c.json", {}, dir);
  CHECK(c.traffic.requests == 3);
  ServeResult r = simulate_serving(model("llama3-70b"), c, sim_cluster(cluster("dgx-h100-single")),
                                   default_calibration(), 1);
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[2].arrival_s == 2);
  CHECK(r.records[1].output_tokens == 5);
}

TEST_CASE("serve config: generated requests follow the distributions, seeded") {
  Traffic t;
  t.arrival = "poisson";
  t.rate_per_s = 10;
  t.requests = 4000;
  t.prompt.dist = "uniform";
  t.prompt.min = 10;
  t.prompt.max = 20;
  t.output.dist = "lognormal";
  t.output.median = 100;
  t.output.sigma = 0.5;
  t.output.min = 1;
  t.output.max = 100000;
  auto a = generate_requests(t, 3);
  auto b = generate_requests(t, 3);
  CHECK(a.back().arrival_s == b.back().arrival_s);
  CHECK(a.back().arrival_s == doctest::Approx(400).epsilon(0.06));  // 4000 / 10 per s
  std::vector<double> outs;
  for (const auto& r : a) {
    CHECK(r.prompt_tokens >= 10);
    CHECK(r.prompt_tokens <= 20);
    outs.push_back(static_cast<double>(r.output_tokens));
  }
  CHECK(percentiles(outs).p50 == doctest::Approx(100).epsilon(0.05));
  CHECK(generate_requests(t, 4).back().arrival_s != a.back().arrival_s);
}
