// Serving run report (serve_report.hpp).
#include "tutti/reports/serve_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/reports/format.hpp"
#include "tutti/reports/result_schema.hpp"

namespace tutti::reports {
namespace {

using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double num(const json& j, const char* ptr) {
  const json::json_pointer p(ptr);
  return j.contains(p) && j.at(p).is_number() ? j.at(p).get<double>() : kNaN;
}
std::string str(const json& j, const char* ptr) {
  const json::json_pointer p(ptr);
  return j.contains(p) && j.at(p).is_string() ? j.at(p).get<std::string>() : std::string("n/a");
}

}  // namespace

Report build_serve_report(const json& run) {
  if (!run.is_object() || run.value("kind", "") != "serving_run")
    throw InputError(
        "", "kind", run.is_object() ? describe_json(run.value("kind", json())) : describe_json(run),
        "a serving run as `tutti serve simulate --json` prints it");
  check_result(run, "serve_result.schema.json", "");  // typed before anything is read (issue 23)
  Report r;
  r.kind = "serve";
  r.title = "Serving " + str(run, "/model") + " on " + str(run, "/cluster");
  r.subtitle = fmt::format("{} requests on {} GPUs ({}), tp {} x {} replica(s)",
                           num(run, "/requests"), num(run, "/gpus"), str(run, "/gpu"),
                           num(run, "/serving/tp"), num(run, "/serving/replicas"));
  r.data_json = run.dump();
  r.primary_table = "latency";

  VerdictItem v;
  v.criterion = "Goodput";
  v.winner = format_value(num(run, "/goodput/slo_attainment"), Unit::Fraction) +
             " of requests meet the SLOs";
  v.detail = fmt::format("{} output tokens/s per GPU; TTFT p99 {}, TPOT p99 {}",
                         format_sig(num(run, "/throughput/output_tokens_per_s_per_gpu")),
                         format_value(num(run, "/ttft_s/p99"), Unit::Seconds),
                         format_value(num(run, "/tpot_s/p99"), Unit::Seconds));
  v.margin_pct = kNaN;
  r.verdict.push_back(v);
  if (num(run, "/kv_cache/preemptions") > 0)
    r.notices.push_back({Callout::Level::Warning, "KV cache full",
                         fmt::format("{} preemptions (recompute): the KV cache ran out of blocks; "
                                     "requests queued and were re-prefilled.",
                                     num(run, "/kv_cache/preemptions"))});

  Section lat{"latency", "Latency", {}};
  Table t;
  t.id = "latency";
  t.title = "Latency percentiles";
  t.caption =
      "Nearest-rank percentiles over the requests; TPOT over requests with more than one output "
      "token.";
  t.columns = {{"metric", "Metric", Unit::Text, ""},
               {"mean_s", "Mean", Unit::Seconds, ""},
               {"p50_s", "p50", Unit::Seconds, ""},
               {"p90_s", "p90", Unit::Seconds, ""},
               {"p99_s", "p99", Unit::Seconds, ""}};
  Chart bars;
  bars.id = "latency-chart";
  bars.title = "Latency percentiles";
  bars.kind = ChartKind::Bar;
  bars.y_label = "seconds";
  bars.y_unit = Unit::Seconds;
  bars.categories = {"p50", "p90", "p99"};
  for (auto [key, name] : {std::pair{"ttft_s", "TTFT"},
                           {"tpot_s", "TPOT"},
                           {"e2e_s", "End-to-end"},
                           {"queue_s", "Queueing"}}) {
    const std::string base = std::string("/") + key + "/";
    auto at = [&](const char* q) { return num(run, (base + q).c_str()); };
    t.rows.push_back({Cell::str(name), Cell::num(at("mean")), Cell::num(at("p50")),
                      Cell::num(at("p90")), Cell::num(at("p99"))});
    if (std::string(key) != "e2e_s")
      bars.series.push_back({name, {at("p50"), at("p90"), at("p99")}});
  }
  lat.blocks.push_back(t);
  lat.blocks.push_back(bars);
  if (run.contains("request_records") && run.at("request_records").is_array() &&
      !run.at("request_records").empty()) {
    Chart ch;
    ch.id = "ttft-over-time";
    ch.title = "Time to first token of every request";
    ch.caption = "x: arrival time; y: TTFT; size: prompt tokens; colour: preemptions.";
    ch.kind = ChartKind::Bubble;
    ch.x_label = "arrival (s)";
    ch.y_label = "TTFT";
    ch.x_unit = Unit::Seconds;
    ch.y_unit = Unit::Seconds;
    ch.size_label = "prompt tokens";
    ch.color_label = "preemptions";
    PointSeries ps;
    ps.name = "requests";
    double max_prompt = 1, max_pre = 1;
    for (const json& q : run.at("request_records")) {
      max_prompt = std::max(max_prompt, q.value("prompt_tokens", 0.0));
      max_pre = std::max(max_pre, q.value("preemptions", 0.0));
    }
    for (const json& q : run.at("request_records")) {
      Point p;
      p.x = q.value("arrival_s", 0.0);
      p.y = q.value("ttft_s", 0.0);
      p.size = q.value("prompt_tokens", 0.0) / max_prompt;
      p.color = q.value("preemptions", 0.0) / max_pre;
      p.details = {fmt::format("prompt {} tokens, output {}", q.value("prompt_tokens", 0),
                               q.value("output_tokens", 0)),
                   "TPOT " + format_value(q.value("tpot_s", 0.0), Unit::Seconds),
                   fmt::format("preemptions {}", q.value("preemptions", 0))};
      ps.points.push_back(std::move(p));
    }
    ch.point_series.push_back(std::move(ps));
    lat.blocks.push_back(std::move(ch));
  }
  r.sections.push_back(std::move(lat));

  Section thr{"throughput", "Throughput, KV cache and facility", {}};
  Table k;
  k.id = "summary";
  k.title = "Summary";
  k.columns = {{"quantity", "Quantity", Unit::Text, ""}, {"value", "Value", Unit::Number, ""}};
  auto row = [&](const char* name, double value) {
    k.rows.push_back({Cell::str(name), Cell::num(value)});
  };
  row("output tokens/s", num(run, "/throughput/output_tokens_per_s"));
  row("output tokens/s per GPU", num(run, "/throughput/output_tokens_per_s_per_gpu"));
  row("output tokens/s per replica", num(run, "/throughput/output_tokens_per_s_per_replica"));
  row("requests/s", num(run, "/throughput/requests_per_s"));
  row("goodput (requests/s within SLOs)", num(run, "/goodput/requests_per_s"));
  row("KV occupancy, mean (fraction)", num(run, "/kv_cache/occupancy_mean"));
  row("KV occupancy, peak (fraction)", num(run, "/kv_cache/occupancy_peak"));
  row("preemptions", num(run, "/kv_cache/preemptions"));
  row("mean sequences per iteration", num(run, "/mean_batch_sequences"));
  row("IT power, average (W)", num(run, "/facility/avg_it_W"));
  row("energy per output token (J, facility)", num(run, "/facility/energy_per_output_token_J"));
  row("$ per million output tokens, owned",
      num(run, "/facility/usd_per_million_output_tokens_owned"));
  row("$ per million output tokens, rented",
      num(run, "/facility/usd_per_million_output_tokens_rented"));
  thr.blocks.push_back(k);
  if (run.contains("notes") && run.at("notes").is_array() && !run.at("notes").empty()) {
    std::string text;
    for (const json& n : run.at("notes"))
      text += (n.is_string() ? n.get<std::string>() : n.dump()) + "\n";
    thr.blocks.push_back(Details{"Assumptions and defaults", text});
  }
  r.sections.push_back(std::move(thr));
  return r;
}

}  // namespace tutti::reports
