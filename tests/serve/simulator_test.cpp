// Continuous-batching simulator: latency and throughput move the right way with load, batch
// limit and TP on Llama 3 70B and a MoE model; KV-cache exhaustion shows as queueing and
// preemption; determinism; disaggregation.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "serve_fixture.hpp"

using namespace tutti;
using namespace tutti::serve;
using namespace tutti::serve::testing;

namespace {
const char* kH100 = "dgx-h100-single";
const std::string kTp8 = "{\"tp\": 8}";
}  // namespace

TEST_CASE("serve: Llama 3 70B latency and throughput rise with load") {
  ServeResult light = run("llama3-70b", kH100, config_text(0.5, 60, 512, 128, kTp8));
  ServeResult heavy = run("llama3-70b", kH100, config_text(16, 60, 512, 128, kTp8));
  CHECK(light.requests == 60);
  CHECK(heavy.ttft.p50 > light.ttft.p50);
  CHECK(heavy.ttft.p99 > light.ttft.p99);
  CHECK(heavy.tpot.p50 > light.tpot.p50);  // bigger decode batches
  CHECK(heavy.e2e.p90 > light.e2e.p90);
  CHECK(heavy.output_tokens_per_s > 2 * light.output_tokens_per_s);
  CHECK(heavy.mean_batch_sequences > light.mean_batch_sequences);
  // Light load: the arrival rate sets the throughput (requests/s close to 0.5).
  CHECK(light.requests_per_s == doctest::Approx(0.5).epsilon(0.35));
  CHECK(light.tpot.p50 > 0.005);
  CHECK(light.tpot.p50 < 0.1);
}

TEST_CASE("serve: a smaller batch limit lowers TPOT and throughput under a burst") {
  const std::string small = "{\"tp\": 8, \"max_batch\": 4}";
  const std::string large = "{\"tp\": 8, \"max_batch\": 128}";
  auto burst = [](const std::string& s) {
    return "{\"traffic\": {\"arrival\": \"burst\", \"requests\": 128, \"prompt_tokens\": "
           "{\"dist\": "
           "\"fixed\", \"value\": 256}, \"output_tokens\": {\"dist\": \"fixed\", \"value\": 64}}, "
           "\"serving\": " +
           s + "}";
  };
  ServeResult a = run("llama3-70b", kH100, burst(small));
  ServeResult b = run("llama3-70b", kH100, burst(large));
  CHECK(a.tpot.p50 < b.tpot.p50);
  CHECK(a.output_tokens_per_s < b.output_tokens_per_s / 3);
  CHECK(a.queue.p90 > b.queue.p90);
  CHECK(a.mean_batch_sequences <= 4.0 + 1e-9);
}

TEST_CASE("serve: higher TP lowers Llama 3 70B decode latency") {
  ServeResult t4 = run("llama3-70b", kH100, config_text(0.5, 30, 512, 128, "{\"tp\": 4}"));
  ServeResult t8 = run("llama3-70b", kH100, config_text(0.5, 30, 512, 128, kTp8));
  CHECK(t8.tpot.p50 < t4.tpot.p50);
  CHECK(t8.ttft.p50 < t4.ttft.p50);
  // Per GPU, the smaller TP degree is more efficient at light load (same token rate, half the
  // GPUs).
  CHECK(t4.output_tokens_per_s_per_gpu > t8.output_tokens_per_s_per_gpu);
  // KV heads: tp 8 holds 1 of 8 per GPU, tp 4 two: per-token KV per GPU halves with tp.
  CHECK(t8.memory.kv_bytes_per_token == doctest::Approx(t4.memory.kv_bytes_per_token / 2));
}

TEST_CASE("serve: MoE (Mixtral 8x7B) moves the right way with load, TP and batch limit") {
  const std::string tp2 = "{\"tp\": 2, \"ep\": 2}";
  ServeResult light = run("mixtral-8x7b", kH100, config_text(1, 60, 512, 128, tp2));
  ServeResult heavy = run("mixtral-8x7b", kH100, config_text(20, 60, 512, 128, tp2));
  CHECK(heavy.ttft.p50 > light.ttft.p50);
  CHECK(heavy.tpot.p50 > light.tpot.p50);
  CHECK(heavy.output_tokens_per_s > 2 * light.output_tokens_per_s);
  ServeResult tp4 =
      run("mixtral-8x7b", kH100, config_text(1, 60, 512, 128, "{\"tp\": 4, \"ep\": 4}"));
  CHECK(tp4.tpot.p50 < light.tpot.p50);
  ServeResult capped =
      run("mixtral-8x7b", kH100,
          config_text(20, 60, 512, 128, "{\"tp\": 2, \"ep\": 2, \"max_batch\": 2}"));
  CHECK(capped.output_tokens_per_s < heavy.output_tokens_per_s);
  CHECK(capped.queue.p50 > heavy.queue.p50);
  // Qwen3 30B-A3B (128 experts, top-8) runs too, with expert parallelism over the TP group.
  ServeResult qwen =
      run("qwen3-30b-a3b", kH100, config_text(4, 40, 512, 128, "{\"tp\": 2, \"ep\": 2}"));
  CHECK(qwen.tpot.p50 > 0);
  CHECK(qwen.tpot.p50 < light.tpot.p50);  // 3B active parameters read per token vs 13B
}

TEST_CASE("serve: KV-cache exhaustion shows as queueing and preemption") {
  // Long outputs and little memory for the KV cache: decodes outgrow the blocks.
  const std::string roomy = "{\"tp\": 8}";
  const std::string tight = "{\"tp\": 8, \"gpu_memory_utilization\": 0.25}";
  auto load = [](const std::string& s) {
    return "{\"traffic\": {\"arrival\": \"burst\", \"requests\": 200, \"prompt_tokens\": "
           "{\"dist\": "
           "\"fixed\", \"value\": 1024}, \"output_tokens\": {\"dist\": \"fixed\", \"value\": "
           "1024}}, "
           "\"serving\": " +
           s + "}";
  };
  ServeResult a = run("llama3-70b", kH100, load(roomy));
  ServeResult b = run("llama3-70b", kH100, load(tight));
  CHECK(b.memory.kv_blocks < a.memory.kv_blocks);
  CHECK(b.preemptions > a.preemptions);
  CHECK(b.preemptions > 0);
  CHECK(b.kv_occupancy_peak > 0.95);
  CHECK(b.queue.p50 > a.queue.p50);
  CHECK(b.ttft.p90 > a.ttft.p90);
  CHECK(b.output_tokens_per_s < a.output_tokens_per_s);
  // Every request still completes with its full output.
  for (const RequestRecord& q : b.records) {
    CHECK(q.finish_s >= q.first_token_s);
    CHECK(q.first_token_s >= q.arrival_s);
  }
}

TEST_CASE("serve: chunked prefill keeps decodes flowing (lower TPOT p99) under mixed load") {
  const std::string on =
      "{\"tp\": 8, \"chunked_prefill\": true, \"max_tokens_per_iteration\": 2048}";
  const std::string off =
      "{\"tp\": 8, \"chunked_prefill\": false, \"max_tokens_per_iteration\": 8192}";
  ServeResult a = run("llama3-70b", kH100, config_text(3, 80, 3000, 200, on));
  ServeResult b = run("llama3-70b", kH100, config_text(3, 80, 3000, 200, off));
  CHECK(a.tpot.p99 < b.tpot.p99);
}

TEST_CASE("serve: deterministic for a seed, different across seeds") {
  const std::string cfg =
      "{\"traffic\": {\"arrival\": \"poisson\", \"rate_per_s\": 3, \"requests\": 50, "
      "\"prompt_tokens\": "
      "{\"dist\": \"lognormal\", \"median\": 400, \"sigma\": 0.8, \"max\": 4000}, "
      "\"output_tokens\": "
      "{\"dist\": \"uniform\", \"min\": 16, \"max\": 300}}, \"serving\": {\"tp\": 4, \"replicas\": "
      "2}}";
  ServeResult a = run("llama3-70b", kH100, cfg, 7);
  ServeResult b = run("llama3-70b", kH100, cfg, 7);
  ServeResult c = run("llama3-70b", kH100, cfg, 8);
  ServeFacility fa = serve_facility(a, cluster(kH100), {});
  ServeFacility fb = serve_facility(b, cluster(kH100), {});
  CHECK(to_json(a, fa, true).dump() == to_json(b, fb, true).dump());
  CHECK(to_csv(a) == to_csv(b));
  CHECK(to_csv(a) != to_csv(c));
  // Both replicas get work from the least-loaded router.
  int on0 = 0, on1 = 0;
  for (const RequestRecord& q : a.records) (q.replica == 0 ? on0 : on1)++;
  CHECK(on0 > 10);
  CHECK(on1 > 10);
}

TEST_CASE("serve: prefill/decode disaggregation sends the KV cache over the fabric") {
  const std::string disagg =
      "{\"tp\": 4, \"disaggregation\": {\"prefill_replicas\": 1, \"decode_replicas\": 1}}";
  ServeResult r = run("llama3-70b", kH100, config_text(2, 40, 1024, 128, disagg));
  CHECK(r.gpus == 8);
  CHECK(r.kv_transfer_bytes == doctest::Approx(40 * 1024 * r.kv_bytes_per_token_model));
  CHECK(r.kv_transfer_s_total > 0);
  for (const RequestRecord& q : r.records) {
    CHECK(q.prefill_replica == 0);
    CHECK(q.replica == 1);
  }
  // Llama 3 70B KV: 80 layers x 2 x 8 KV heads x 128 x 2 B = 327,680 B per token.
  CHECK(r.kv_bytes_per_token_model == doctest::Approx(327680.0));
}

TEST_CASE("serve: the facility view prices tokens and counts energy") {
  ServeResult r = run("llama3-70b", kH100, config_text(4, 60, 512, 128, kTp8));
  ServeFacility f = serve_facility(r, cluster(kH100), {});
  CHECK(f.power.avg_it_W > 0);
  CHECK(f.energy_per_output_token_J > 0);
  CHECK(f.energy_J == doctest::Approx(f.energy_per_output_token_J * r.output_tokens));
  CHECK(f.usd_per_million_output_tokens_owned > 0);
  // More load on the same hardware: cheaper tokens.
  ServeResult hi = run("llama3-70b", kH100, config_text(16, 60, 512, 128, kTp8));
  ServeFacility fh = serve_facility(hi, cluster(kH100), {});
  CHECK(fh.usd_per_million_output_tokens_owned < f.usd_per_million_output_tokens_owned);
  CHECK(fh.energy_per_output_token_J < f.energy_per_output_token_J);
}

TEST_CASE("serve: percentiles are nearest-rank") {
  Percentiles p = percentiles({5, 1, 4, 2, 3, 6, 7, 8, 9, 10});
  CHECK(p.p50 == 5);
  CHECK(p.p90 == 9);
  CHECK(p.p99 == 10);
  CHECK(p.mean == doctest::Approx(5.5));
  CHECK(percentiles({}).count == 0);
}

TEST_CASE(
    "serve: pipeline stages keep up to pp batches in flight, and each token passes every stage") {
  // Llama 3 70B on one H100 board: tp 4 x pp 2 against tp 4 alone (one 4-GPU replica).
  const std::string pp1 = "{\"tp\": 4, \"pp\": 1}", pp2 = "{\"tp\": 4, \"pp\": 2}";
  // One request at a time: the decode latency is the whole pass (both stages in turn, plus the
  // activation send), so PP does not lower TPOT; it stays within a few % of tp 4 alone.
  ServeResult one1 = run("llama3-70b", kH100, config_text(0.05, 4, 256, 64, pp1));
  ServeResult one2 = run("llama3-70b", kH100, config_text(0.05, 4, 256, 64, pp2));
  CHECK(one2.tpot.p50 >= one1.tpot.p50 * 0.97);
  CHECK(one2.tpot.p50 <= one1.tpot.p50 * 1.15);
  // A burst: two batches in flight over twice the GPUs (and twice the KV blocks) decode about
  // twice the tokens per second; with one batch in flight it would be no faster than tp 4.
  const std::string burst =
      "{\"traffic\": {\"arrival\": \"burst\", \"requests\": 256, \"prompt_tokens\": "
      "{\"dist\": \"fixed\", \"value\": 256}, \"output_tokens\": {\"dist\": \"fixed\", "
      "\"value\": 128}}, \"serving\": ";
  ServeResult b1 = run("llama3-70b", kH100, burst + "{\"tp\": 4, \"max_batch\": 64}}");
  ServeResult b2 = run("llama3-70b", kH100, burst + "{\"tp\": 4, \"pp\": 2, \"max_batch\": 128}}");
  CHECK(b2.output_tokens_per_s > 1.5 * b1.output_tokens_per_s);
  CHECK(b2.memory.kv_blocks > b1.memory.kv_blocks);
  bool noted = false;
  for (const std::string& n : b2.notes) noted |= n.find("2 batches in flight") != std::string::npos;
  CHECK(noted);
  // Same result for the same seed (the pipeline's events are ordered deterministically).
  ServeResult again =
      run("llama3-70b", kH100, burst + "{\"tp\": 4, \"pp\": 2, \"max_batch\": 128}}");
  CHECK(again.output_tokens_per_s == b2.output_tokens_per_s);
  CHECK(again.tpot.p99 == b2.tpot.p99);
}
