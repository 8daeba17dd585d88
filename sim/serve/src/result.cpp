// Serving results: the facility view (sim's power and cost models over the run) and the JSON,
// text and CSV writers.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tutti/core/format.hpp"
#include "tutti/core/units.hpp"
#include "tutti/serve/serve_result.hpp"
#include "tutti/serve/simulator.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::serve {

ServeFacility serve_facility(const ServeResult& r, const Cluster& cluster,
                             const FacilityOptions& o) {
  check_options(o);
  ServeFacility f;
  f.options = o;
  FacilityInputs in;
  fill_cluster_inputs(in, cluster);
  in.job_gpus = r.gpus;
  const double reps = std::max(1, r.serving.total_replicas());
  const double span = std::max(r.makespan_s, 1e-30);
  // One mean GPU of the replicas over the run: busy time per replica, idle between iterations.
  in.times.iteration_s = span;
  in.times.gemm_busy_s = std::min(span, r.gemm_busy_s / reps);
  in.times.memory_busy_s = std::min(span - in.times.gemm_busy_s, r.memory_busy_s / reps);
  in.times.comm_busy_s = std::min(span, r.comm_busy_s / reps);
  in.iterations = 1;
  in.tokens_per_iteration = r.output_tokens;
  f.power = compute_power(in, in.times, 1.0);
  f.energy_J = f.power.energy_per_iteration_facility_J;
  f.cost = compute_cost(in, o, f.power, span, f.energy_J);
  f.energy_per_output_token_J = r.output_tokens > 0 ? f.energy_J / r.output_tokens : 0;
  f.usd_per_million_output_tokens_owned = f.cost.usd_per_million_tokens;
  f.usd_per_million_output_tokens_rented =
      r.output_tokens > 0 && f.cost.cloud_cost_per_run_usd > 0
          ? f.cost.cloud_cost_per_run_usd / (r.output_tokens / 1e6)
          : 0;
  return f;
}

namespace {

nlohmann::json pct(const Percentiles& p) {
  return {{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90},
          {"p99", p.p99},   {"max", p.max}, {"count", p.count}};
}

std::string ms(double s) {
  static constexpr Rung kMs[] = {{kBelowAll, 1e3, 1, fixed(1), "ms"}};
  return format_si(s, {kMs});
}

}  // namespace

nlohmann::json to_json(const ServeResult& r, const ServeFacility& f, bool with_requests) {
  const Serving& s = r.serving;
  nlohmann::json serving = {{"tp", s.tp},
                            {"pp", s.pp},
                            {"ep", s.ep},
                            {"replicas", s.total_replicas()},
                            {"dtype", to_string(s.dtype)},
                            {"kv_dtype", to_string(s.kv_dtype)},
                            {"max_batch", s.max_batch},
                            {"max_tokens_per_iteration", s.max_tokens_per_iteration},
                            {"kv_block_tokens", s.kv_block_tokens},
                            {"gpu_memory_utilization", s.gpu_memory_utilization},
                            {"chunked_prefill", s.chunked_prefill},
                            {"router", s.router}};
  if (s.disaggregated())
    serving["disaggregation"] = {{"prefill_replicas", s.prefill_replicas},
                                 {"decode_replicas", s.decode_replicas}};
  nlohmann::json j = {
      {"schema_version", kServeResultSchemaVersion},
      {"kind", "serving_run"},
      {"model", r.model},
      {"cluster", r.cluster},
      {"gpu", r.gpu},
      {"config", r.config},
      {"seed", r.seed},
      {"gpus", r.gpus},
      {"cluster_gpus", r.cluster_gpus},
      {"serving", serving},
      {"slo", {{"ttft_s", r.slo.ttft_s}, {"tpot_s", r.slo.tpot_s}}},
      {"memory",
       {{"weights_bytes_per_gpu", r.memory.weights_bytes},
        {"activation_bytes_per_gpu", r.memory.activation_bytes},
        {"kv_bytes_per_gpu", r.memory.kv_bytes},
        {"kv_bytes_per_token_per_gpu", r.memory.kv_bytes_per_token},
        {"kv_bytes_per_token_model", r.kv_bytes_per_token_model},
        {"kv_blocks_per_replica", r.memory.kv_blocks}}},
      {"requests", r.requests},
      {"makespan_s", r.makespan_s},
      {"ttft_s", pct(r.ttft)},
      {"tpot_s", pct(r.tpot)},
      {"e2e_s", pct(r.e2e)},
      {"queue_s", pct(r.queue)},
      {"throughput",
       {{"output_tokens_per_s", r.output_tokens_per_s},
        {"output_tokens_per_s_per_gpu", r.output_tokens_per_s_per_gpu},
        {"output_tokens_per_s_per_replica", r.output_tokens_per_s_per_replica},
        {"total_tokens_per_s", r.total_tokens_per_s},
        {"requests_per_s", r.requests_per_s}}},
      {"goodput", {{"slo_attainment", r.slo_attainment}, {"requests_per_s", r.goodput_rps}}},
      {"kv_cache",
       {{"occupancy_mean", r.kv_occupancy_mean},
        {"occupancy_peak", r.kv_occupancy_peak},
        {"preemptions", r.preemptions}}},
      {"iterations", r.iterations},
      {"mean_batch_sequences", r.mean_batch_sequences},
      {"mean_batch_tokens", r.mean_batch_tokens},
      {"kv_transfer", {{"seconds_total", r.kv_transfer_s_total}, {"bytes", r.kv_transfer_bytes}}},
      {"busy_s",
       {{"total", r.busy_s},
        {"gemm", r.gemm_busy_s},
        {"memory", r.memory_busy_s},
        {"comm", r.comm_busy_s}}},
      {"facility",
       {{"avg_it_W", f.power.avg_it_W},
        {"facility_W", f.power.facility_W},
        {"energy_J", f.energy_J},
        {"energy_per_output_token_J", f.energy_per_output_token_J},
        {"usd_per_million_output_tokens_owned", f.usd_per_million_output_tokens_owned},
        {"usd_per_million_output_tokens_rented", f.usd_per_million_output_tokens_rented},
        {"capex_usd", f.cost.capex_usd},
        {"usd_per_gpu_hour_owned", f.cost.usd_per_gpu_hour},
        {"cloud_usd_per_gpu_hour", f.cost.cloud_usd_per_gpu_hour},
        {"assumptions",
         {{"hardware_life_years", f.options.hardware_life_years},
          {"utilization", f.options.utilization},
          {"maintenance_frac_per_year", f.options.maintenance_frac_per_year}}}}},
      {"notes", r.notes}};
  if (with_requests) {
    nlohmann::json a = nlohmann::json::array();
    for (const RequestRecord& q : r.records)
      a.push_back({{"arrival_s", q.arrival_s},
                   {"prompt_tokens", q.prompt_tokens},
                   {"output_tokens", q.output_tokens},
                   {"ttft_s", q.ttft_s()},
                   {"tpot_s", q.tpot_s()},
                   {"e2e_s", q.e2e_s()},
                   {"queue_s", q.first_scheduled_s - q.arrival_s},
                   {"preemptions", q.preemptions},
                   {"replica", q.replica},
                   {"prefill_replica", q.prefill_replica}});
    j["request_records"] = a;
  }
  return j;
}

std::string to_text(const ServeResult& r, const ServeFacility& f) {
  const Serving& s = r.serving;
  std::string o;
  o += fmt::format("model      {} on {} ({} of {} GPUs, {})\n", r.model, r.cluster, r.gpus,
                   r.cluster_gpus, r.gpu);
  if (s.disaggregated())
    o += fmt::format("serving    {} prefill + {} decode replicas x tp {} pp {} ep {}, {}\n",
                     s.prefill_replicas, s.decode_replicas, s.tp, s.pp, s.ep, to_string(s.dtype));
  else
    o += fmt::format("serving    {} replica(s) x tp {} pp {} ep {}, {}\n", s.replicas, s.tp, s.pp,
                     s.ep, to_string(s.dtype));
  o += fmt::format(
      "batching   max_batch {}, max_tokens/iter {}, chunked prefill {}, KV block {} tokens\n",
      s.max_batch, s.max_tokens_per_iteration, s.chunked_prefill ? "on" : "off", s.kv_block_tokens);
  o += fmt::format(
      "memory/GPU weights {}, activations {}, KV {} ({} blocks per replica, {} tokens)\n",
      format_quantity(r.memory.weights_bytes, Dim::Bytes),
      format_quantity(r.memory.activation_bytes, Dim::Bytes),
      format_quantity(r.memory.kv_bytes, Dim::Bytes), r.memory.kv_blocks,
      r.memory.kv_blocks * s.kv_block_tokens);
  o += fmt::format("requests   {} over {:.2f} s (seed {})\n\n", r.requests, r.makespan_s, r.seed);
  o += "                 mean       p50       p90       p99\n";
  auto row = [&](const char* name, const Percentiles& p) {
    o += fmt::format("{:<12} {:>9} {:>9} {:>9} {:>9}\n", name, ms(p.mean), ms(p.p50), ms(p.p90),
                     ms(p.p99));
  };
  row("TTFT", r.ttft);
  row("TPOT", r.tpot);
  row("end-to-end", r.e2e);
  row("queueing", r.queue);
  o += "\n";
  o += fmt::format(
      "throughput       {:.1f} output tokens/s ({:.1f} per GPU, {:.1f} per replica), {:.2f} "
      "requests/s\n",
      r.output_tokens_per_s, r.output_tokens_per_s_per_gpu, r.output_tokens_per_s_per_replica,
      r.requests_per_s);
  std::string slo = "none";
  if (r.slo.ttft_s > 0 || r.slo.tpot_s > 0)
    slo = fmt::format("TTFT <= {}, TPOT <= {}", r.slo.ttft_s > 0 ? ms(r.slo.ttft_s) : "-",
                      r.slo.tpot_s > 0 ? ms(r.slo.tpot_s) : "-");
  o += fmt::format("goodput          {:.2f} requests/s meet the SLOs ({:.1f}%; {})\n",
                   r.goodput_rps, 100 * r.slo_attainment, slo);
  o += fmt::format("KV cache         occupancy mean {:.1f}%, peak {:.1f}%, {} preemptions\n",
                   100 * r.kv_occupancy_mean, 100 * r.kv_occupancy_peak, r.preemptions);
  o += fmt::format("batches          {} iterations, mean {:.1f} sequences, {:.1f} tokens\n",
                   r.iterations, r.mean_batch_sequences, r.mean_batch_tokens);
  if (s.disaggregated())
    o += fmt::format("KV transfer      {} total, {:.1f} ms per request\n",
                     format_quantity(r.kv_transfer_bytes, Dim::Bytes),
                     r.requests > 0 ? 1e3 * r.kv_transfer_s_total / r.requests : 0.0);
  o += fmt::format("power            {} IT average, {} facility\n",
                   format_quantity(f.power.avg_it_W, Dim::Power),
                   format_quantity(f.power.facility_W, Dim::Power));
  o += fmt::format("energy           {:.3f} J per output token (facility)\n",
                   f.energy_per_output_token_J);
  std::string rented = f.usd_per_million_output_tokens_rented > 0
                           ? fmt::format("${:.3f} rented", f.usd_per_million_output_tokens_rented)
                           : "rented: no catalog price";
  o += fmt::format(
      "cost             ${:.3f} owned, {} per million output tokens (whole cluster; owned at "
      "utilization {})\n",
      f.usd_per_million_output_tokens_owned, rented, f.options.utilization);
  if (!r.notes.empty()) {
    o += "\nassumptions\n";
    for (const std::string& n : r.notes) o += "  " + n + "\n";
  }
  return o;
}

std::string to_csv(const ServeResult& r) {
  std::string o =
      "id,arrival_s,prompt_tokens,output_tokens,ttft_s,tpot_s,e2e_s,queue_s,preemptions,replica,"
      "prefill_replica\n";
  for (std::size_t i = 0; i < r.records.size(); ++i) {
    const RequestRecord& q = r.records[i];
    o +=
        fmt::format("{},{:.6f},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{}\n", i, q.arrival_s,
                    q.prompt_tokens, q.output_tokens, q.ttft_s(), q.tpot_s(), q.e2e_s(),
                    q.first_scheduled_s - q.arrival_s, q.preemptions, q.replica, q.prefill_replica);
  }
  return o;
}

}  // namespace tutti::serve
