// Serving run report (serve_report.hpp).
#include "tutti/reports/serve_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "tutti/reports/format.hpp"
#include "tutti/serve/serve_result.hpp"

namespace tutti::reports {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

Report build_serve_report(const nlohmann::json& doc) {
  // Typed before anything is read: schemas/serve_result.schema.json (issue 23).
  const serve::ServeResultView run = serve::ServeResultView::from_json(doc, "");
  Report r;
  r.kind = "serve";
  r.title = "Serving " + run.model + " on " + run.cluster;
  r.subtitle = fmt::format("{} requests on {} GPUs ({}), tp {} x {} replica(s)", run.requests,
                           run.gpus, run.gpu, run.tp, run.replicas);
  r.data_json = doc.dump();
  r.primary_table = "latency";

  VerdictItem v;
  v.criterion = "Goodput";
  v.winner = format_value(run.slo_attainment, Unit::Fraction) + " of requests meet the SLOs";
  v.detail = fmt::format("{} output tokens/s per GPU; TTFT p99 {}, TPOT p99 {}",
                         format_sig(run.output_tokens_per_s_per_gpu),
                         format_value(run.ttft_s.p99, Unit::Seconds),
                         format_value(run.tpot_s.p99, Unit::Seconds));
  v.margin_pct = kNaN;
  r.verdict.push_back(v);
  if (run.preemptions > 0)
    r.notices.push_back({Callout::Level::Warning, "KV cache full",
                         fmt::format("{} preemptions (recompute): the KV cache ran out of blocks; "
                                     "requests queued and were re-prefilled.",
                                     run.preemptions)});

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
  const std::pair<const serve::LatencyView*, const char*> latencies[] = {
      {&run.ttft_s, "TTFT"},
      {&run.tpot_s, "TPOT"},
      {&run.e2e_s, "End-to-end"},
      {&run.queue_s, "Queueing"}};
  for (const auto& [l, name] : latencies) {
    t.rows.push_back({Cell::str(name), Cell::num(l->mean), Cell::num(l->p50), Cell::num(l->p90),
                      Cell::num(l->p99)});
    if (l != &run.e2e_s) bars.series.push_back({name, {l->p50, l->p90, l->p99}});
  }
  lat.blocks.push_back(t);
  lat.blocks.push_back(bars);
  if (!run.request_records.empty()) {
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
    for (const serve::RequestRecordView& q : run.request_records) {
      max_prompt = std::max(max_prompt, static_cast<double>(q.prompt_tokens));
      max_pre = std::max(max_pre, static_cast<double>(q.preemptions));
    }
    for (const serve::RequestRecordView& q : run.request_records) {
      Point p;
      p.x = q.arrival_s;
      p.y = q.ttft_s;
      p.size = static_cast<double>(q.prompt_tokens) / max_prompt;
      p.color = static_cast<double>(q.preemptions) / max_pre;
      p.details = {fmt::format("prompt {} tokens, output {}", q.prompt_tokens, q.output_tokens),
                   "TPOT " + format_value(q.tpot_s, Unit::Seconds),
                   fmt::format("preemptions {}", q.preemptions)};
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
  row("output tokens/s", run.output_tokens_per_s);
  row("output tokens/s per GPU", run.output_tokens_per_s_per_gpu);
  row("output tokens/s per replica", run.output_tokens_per_s_per_replica);
  row("requests/s", run.requests_per_s);
  row("goodput (requests/s within SLOs)", run.goodput_requests_per_s);
  row("KV occupancy, mean (fraction)", run.kv_occupancy_mean);
  row("KV occupancy, peak (fraction)", run.kv_occupancy_peak);
  row("preemptions", static_cast<double>(run.preemptions));
  row("mean sequences per iteration", run.mean_batch_sequences);
  row("IT power, average (W)", run.avg_it_W);
  row("energy per output token (J, facility)", run.energy_per_output_token_J);
  row("$ per million output tokens, owned", run.usd_per_million_output_tokens_owned);
  row("$ per million output tokens, rented", run.usd_per_million_output_tokens_rented);
  thr.blocks.push_back(k);
  if (!run.notes.empty()) {
    std::string text;
    for (const std::string& n : run.notes) text += n + "\n";
    thr.blocks.push_back(Details{"Assumptions and defaults", text});
  }
  r.sections.push_back(std::move(thr));
  return r;
}

}  // namespace tutti::reports
