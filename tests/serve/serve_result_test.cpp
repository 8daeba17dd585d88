// The serving run document read back through its strict reader (tutti/serve/serve_result.hpp):
// real `tutti serve simulate --json` output round-trips into the typed view, and a malformed
// document is an InputError naming the key path.
#include "tutti/serve/serve_result.hpp"

#include <doctest/doctest.h>

#include "../support/result_doc.hpp"

using nlohmann::json;
using tutti::serve::ServeResultView;
using tutti::testing::check_corruptions;
using tutti::testing::KeyMatch;
using tutti::testing::run_json;

namespace {
json serving_run() {
  return run_json({"--json", "serve", "simulate", "-w", "models/llama3-70b.json", "-c",
                   "topologies/dgx-h100-single.json", "--config",
                   "sim/serve/examples/chat-llama3-70b.json", "--requests"});
}

const auto read_serve = [](const json& j, const std::string& source, const std::string& at) {
  return ServeResultView::from_json(j, source, at);
};
}  // namespace

TEST_CASE("serve result: tutti serve simulate --json reads back into the typed view unchanged") {
  const json j = serving_run();
  CHECK(j.at("schema_version") == tutti::serve::kServeResultSchemaVersion);
  const ServeResultView v = ServeResultView::from_json(j, "run.json");
  CHECK(v.schema_version == 1);
  CHECK(v.model == j.at("model"));
  CHECK(v.cluster == j.at("cluster"));
  CHECK(v.gpu == j.at("gpu"));
  CHECK(v.requests == j.at("requests").get<std::int64_t>());
  CHECK(v.gpus == j.at("gpus").get<std::int64_t>());
  CHECK(v.tp == j.at("serving").at("tp").get<std::int64_t>());
  CHECK(v.replicas == j.at("serving").at("replicas").get<std::int64_t>());
  CHECK(v.ttft_s.p99 == j.at("ttft_s").at("p99").get<double>());
  CHECK(v.tpot_s.mean == j.at("tpot_s").at("mean").get<double>());
  CHECK(v.e2e_s.p50 == j.at("e2e_s").at("p50").get<double>());
  CHECK(v.queue_s.p90 == j.at("queue_s").at("p90").get<double>());
  CHECK(v.output_tokens_per_s_per_gpu ==
        j.at("throughput").at("output_tokens_per_s_per_gpu").get<double>());
  CHECK(v.slo_attainment == j.at("goodput").at("slo_attainment").get<double>());
  CHECK(v.preemptions == j.at("kv_cache").at("preemptions").get<std::int64_t>());
  CHECK(v.usd_per_million_output_tokens_owned ==
        j.at("facility").at("usd_per_million_output_tokens_owned").get<double>());
  CHECK(v.notes == j.at("notes").get<std::vector<std::string>>());
  REQUIRE(v.request_records.size() == j.at("request_records").size());
  REQUIRE(v.request_records.size() == 400);
  for (std::size_t i = 0; i < v.request_records.size(); ++i) {
    const json& q = j.at("request_records")[i];
    CHECK(v.request_records[i].arrival_s == q.at("arrival_s").get<double>());
    CHECK(v.request_records[i].ttft_s == q.at("ttft_s").get<double>());
    CHECK(v.request_records[i].prompt_tokens == q.at("prompt_tokens").get<std::int64_t>());
  }
}

TEST_CASE("serve result: a malformed serving run is an InputError naming the key path") {
  const json good = serving_run();
  check_corruptions(
      read_serve, good,
      {{"/ttft_s/p99", "slow", "ttft_s.p99"},
       {"/schema_version", 2, "schema_version"},
       {"/serving/tp", 1.5, "serving.tp"},
       {"/request_records/3/prompt_tokens", json(), "request_records.3", KeyMatch::prefix},
       {"/kind", "plan", "kind"}},
      "bad-run.json");
  json old = good;
  old.erase("schema_version");
  CHECK_THROWS_WITH_AS(ServeResultView::from_json(old, "old.json"),
                       doctest::Contains("schema_version"), tutti::InputError);
}
