// The serving run document read back strictly (serve_result.hpp).
#include "tutti/serve/serve_result.hpp"

#include <nlohmann/json.hpp>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"

namespace tutti::serve {
namespace {

constexpr const char* kSchema = "serve_result.schema.json";

const nlohmann::json& schema() {
  static const nlohmann::json s = parse_embedded_schema(embedded_serve_result_schema(), kSchema);
  return s;
}

LatencyView latency(Obj& root, std::string_view key) {
  Obj o = root.req(key).obj();
  return {o.req("mean").number(), o.req("p50").number(), o.req("p90").number(),
          o.req("p99").number()};
}

}  // namespace

ServeResultView ServeResultView::from_json(const nlohmann::json& doc, const std::string& source,
                                           const std::string& at) {
  // Not a serving run at all: say what was expected before the schema lists every missing key.
  const bool object = doc.is_object();
  const nlohmann::json kind = object && doc.contains("kind") ? doc.at("kind") : nlohmann::json();
  if (!object || kind != "serving_run")
    throw InputError(source, at.empty() ? "kind" : at + ".kind", describe_json(object ? kind : doc),
                     "a serving run as `tutti serve simulate --json` prints it");
  require_schema(schema(), doc, kSchema, source, at);
  Obj root = Value(nullptr, &doc, source, at).obj();
  ServeResultView r;
  r.schema_version = static_cast<int>(root.req("schema_version").integer(1, 1));
  r.model = root.req("model").string();
  r.cluster = root.req("cluster").string();
  r.gpu = root.req("gpu").string();
  r.requests = root.req("requests").integer(0);
  r.gpus = root.req("gpus").integer(1);
  Obj serving = root.req("serving").obj();
  r.tp = serving.req("tp").integer(1);
  r.replicas = serving.req("replicas").integer(1);
  r.ttft_s = latency(root, "ttft_s");
  r.tpot_s = latency(root, "tpot_s");
  r.e2e_s = latency(root, "e2e_s");
  r.queue_s = latency(root, "queue_s");
  Obj t = root.req("throughput").obj();
  r.output_tokens_per_s = t.req("output_tokens_per_s").number();
  r.output_tokens_per_s_per_gpu = t.req("output_tokens_per_s_per_gpu").number();
  r.output_tokens_per_s_per_replica = t.req("output_tokens_per_s_per_replica").number();
  r.requests_per_s = t.req("requests_per_s").number();
  Obj g = root.req("goodput").obj();
  r.slo_attainment = g.req("slo_attainment").number();
  r.goodput_requests_per_s = g.req("requests_per_s").number();
  Obj kv = root.req("kv_cache").obj();
  r.kv_occupancy_mean = kv.req("occupancy_mean").number();
  r.kv_occupancy_peak = kv.req("occupancy_peak").number();
  r.preemptions = kv.req("preemptions").integer(0);
  r.mean_batch_sequences = root.req("mean_batch_sequences").number();
  Obj f = root.req("facility").obj();
  r.avg_it_W = f.req("avg_it_W").number();
  r.energy_per_output_token_J = f.req("energy_per_output_token_J").number();
  r.usd_per_million_output_tokens_owned = f.req("usd_per_million_output_tokens_owned").number();
  r.usd_per_million_output_tokens_rented = f.req("usd_per_million_output_tokens_rented").number();
  Arr notes = root.req("notes").arr();
  for (std::size_t i = 0; i < notes.size(); ++i) r.notes.push_back(notes.at(i).string());
  if (auto recs = root.opt("request_records")) {
    Arr a = recs->arr();
    for (std::size_t i = 0; i < a.size(); ++i) {
      Obj q = a.at(i).obj();
      RequestRecordView v;
      v.arrival_s = q.req("arrival_s").number();
      v.ttft_s = q.req("ttft_s").number();
      v.tpot_s = q.req("tpot_s").number();
      v.prompt_tokens = q.req("prompt_tokens").integer(0);
      v.output_tokens = q.req("output_tokens").integer(0);
      v.preemptions = q.req("preemptions").integer(0);
      r.request_records.push_back(v);
    }
  }
  return r;
}

}  // namespace tutti::serve
