// Continuous-batching event loop (simulator.hpp describes the policy).
#include "tutti/serve/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"

namespace tutti::serve {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Req {
  std::int64_t prompt = 0, output = 0;
  std::int64_t computed = 0;   ///< Tokens whose KV is in the cache.
  std::int64_t generated = 0;  ///< Output tokens emitted.
  std::int64_t blocks = 0;     ///< KV blocks held on the current replica.
  bool in_flight = false;      ///< In a batch that has not finished (pp > 1: one of several).
  std::int64_t to_process() const { return prompt + generated - computed; }
};

struct Entry {
  int req = 0;
  std::int64_t tokens = 0;
};

enum class Role { Both, Prefill, Decode };

/// A batch passing the replica's pipeline (pp = 1: the one iteration running).
struct Flight {
  std::vector<Entry> batch;
  double end_s = kInf;
};

struct Replica {
  Role role = Role::Both;
  std::int64_t total_blocks = 0, free_blocks = 0;
  std::vector<int> running;  ///< Admission order.
  std::deque<int> waiting;
  std::vector<Entry> batch;     ///< The iteration being built.
  std::vector<Flight> flights;  ///< In flight, in start order (at most pp).
  double next_start_s = 0;      ///< The first stage is free from then on.
  double kv_block_seconds = 0;  ///< Integral of used blocks over time.
  double last_s = 0;
  std::int64_t peak_used = 0;
  std::size_t outstanding() const { return running.size() + waiting.size(); }
};

struct Transfer {
  double done_s = 0;
  int req = 0, from = 0;
};

}  // namespace

Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  p.count = static_cast<std::int64_t>(v.size());
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  auto rank = [&](double q) {
    auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::clamp<std::size_t>(i, 1, v.size()) - 1];
  };
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p99 = rank(0.99);
  p.max = v.back();
  return p;
}

ServeResult simulate_serving(const Workload& w, const ServeConfig& cfg, const SimCluster& cluster,
                             const CalibrationProfile& profile, std::uint64_t seed) {
  const Serving& S = cfg.serving;
  StepModel model(w, S, cluster, profile);
  const std::int64_t blocks = model.memory().kv_blocks;
  const std::int64_t bt = S.kv_block_tokens;
  auto blocks_for = [bt](std::int64_t tokens) { return (tokens + bt - 1) / bt; };

  ServeResult r;
  r.model = w.name;
  r.cluster = cluster.name;
  r.gpu = cluster.gpu.name;
  r.config = cfg.name;
  r.serving = S;
  r.slo = cfg.slo;
  r.seed = seed;
  r.gpus = S.gpus();
  r.cluster_gpus = cluster.topology->num_gpus();
  r.memory = model.memory();
  r.kv_bytes_per_token_model = model.kv_bytes_per_token_model();
  r.notes = cfg.defaults_applied;

  const std::vector<TraceRequest> trace = generate_requests(cfg.traffic, seed);
  std::vector<Req> reqs(trace.size());
  r.records.resize(trace.size());
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const TraceRequest& t = trace[i];
    reqs[i].prompt = t.prompt_tokens;
    reqs[i].output = t.output_tokens;
    RequestRecord& rec = r.records[i];
    rec.arrival_s = t.arrival_s;
    rec.prompt_tokens = t.prompt_tokens;
    rec.output_tokens = t.output_tokens;
    const std::int64_t need = t.prompt_tokens + t.output_tokens;
    if (blocks_for(need) > blocks)
      throw InputError(
          fmt::format("request {} needs {} KV tokens (prompt {} + output {}) but a replica holds "
                      "{} ({} blocks of "
                      "{} tokens); raise tp or pp, lower the lengths, or use fp8 KV",
                      i, need, t.prompt_tokens, t.output_tokens, blocks * bt, blocks, bt));
    if (!S.chunked_prefill && t.prompt_tokens + t.output_tokens > S.max_tokens_per_iteration)
      throw InputError(fmt::format(
          "request {}: prompt + output {} tokens exceeds serving.max_tokens_per_iteration {} with "
          "chunked prefill off (a recomputed prefill must fit one iteration); raise the limit or "
          "turn chunked_prefill on",
          i, t.prompt_tokens + t.output_tokens, S.max_tokens_per_iteration));
  }

  std::vector<Replica> reps(static_cast<std::size_t>(S.total_replicas()));
  for (std::size_t i = 0; i < reps.size(); ++i) {
    reps[i].total_blocks = reps[i].free_blocks = blocks;
    if (S.disaggregated())
      reps[i].role = static_cast<int>(i) < S.prefill_replicas ? Role::Prefill : Role::Decode;
  }
  std::vector<Transfer> transfers;
  std::size_t next_arrival = 0;
  std::size_t rr_next = 0, rr_decode = 0;
  double tokens_in_batches = 0, seqs_in_batches = 0;
  BatchShape shape;

  auto pick = [&](Role role, std::size_t& rr) {
    int best = -1;
    std::vector<int> pool;
    for (std::size_t i = 0; i < reps.size(); ++i)
      if (reps[i].role == role) pool.push_back(static_cast<int>(i));
    if (S.router == "round_robin") return pool[rr++ % pool.size()];
    for (int i : pool)
      if (best < 0 || reps[i].outstanding() < reps[best].outstanding()) best = i;
    return best;
  };

  auto account = [&](Replica& rep, double now) {
    const std::int64_t used = rep.total_blocks - rep.free_blocks;
    rep.kv_block_seconds += static_cast<double>(used) * (now - rep.last_s);
    rep.last_s = now;
  };

  // Preempts the most recently admitted running request of `rep` that is not in flight
  // (recompute); returns it and the tokens it had in the batch being built (given back to the
  // budget).
  auto preempt_last = [&](Replica& rep) {
    auto pos = rep.running.end() - 1;
    while (reqs[*pos].in_flight) --pos;  // the caller's own sequence is not in flight
    const int v = *pos;
    rep.running.erase(pos);
    rep.free_blocks += reqs[v].blocks;
    reqs[v].blocks = 0;
    reqs[v].computed = 0;
    ++r.records[v].preemptions;
    ++r.preemptions;
    rep.waiting.push_front(v);
    std::int64_t back = 0;
    for (auto it = rep.batch.begin(); it != rep.batch.end(); ++it)
      if (it->req == v) {
        back = it->tokens;
        rep.batch.erase(it);
        break;
      }
    return std::pair<int, std::int64_t>{v, back};
  };
  auto grow = [&](Replica& rep, int q, std::int64_t tokens) {  // blocks for `tokens` more
    const std::int64_t need = blocks_for(reqs[q].computed + tokens) - reqs[q].blocks;
    if (need > rep.free_blocks) return false;
    rep.free_blocks -= need;
    reqs[q].blocks += need;
    return true;
  };
  auto is_prefill = [&](int q) { return reqs[q].to_process() > 1 || reqs[q].generated == 0; };
  // Running sequences first, in admission order: decodes and (chunked) prefill continuations
  // (sequences in flight in an earlier batch wait for it). Returns true when it had to preempt.
  auto run_pass = [&](Replica& rep, std::int64_t& budget) {
    bool preempted = false;
    for (std::size_t i = 0; i < rep.running.size() && budget > 0; ++i) {
      const int q = rep.running[i];
      if (reqs[q].in_flight) continue;
      std::int64_t n = std::min(reqs[q].to_process(), budget);
      if (!S.chunked_prefill && n < reqs[q].to_process()) continue;
      bool self = false;
      while (!grow(rep, q, n)) {
        preempted = true;
        const auto [v, back] = preempt_last(rep);
        budget += back;
        self = v == q;
        if (self) break;
      }
      if (self) break;
      rep.batch.push_back({q, n});
      budget -= n;
    }
    return preempted;
  };
  // Waiting requests in order while the batch, the token budget and the KV blocks allow.
  // want: 1 prefills only, 0 decode-ready (transferred) only, -1 any (chunked prefill).
  auto admit_pass = [&](Replica& rep, std::int64_t& budget, double now, int want) {
    while (!rep.waiting.empty() && budget > 0 &&
           static_cast<int>(rep.running.size()) < S.max_batch) {
      const int q = rep.waiting.front();
      const std::int64_t todo = reqs[q].to_process();
      if (want >= 0 && (want == 1) != is_prefill(q)) break;
      if (!S.chunked_prefill && todo > budget) break;
      const std::int64_t n = std::min(todo, budget);
      if (!grow(rep, q, n)) break;  // admission control: wait for free blocks
      rep.waiting.pop_front();
      rep.running.push_back(q);
      if (r.records[q].first_scheduled_s < 0) r.records[q].first_scheduled_s = now;
      rep.batch.push_back({q, n});
      budget -= n;
    }
  };

  // Builds the next iteration of `rep` at `now`; returns false when there is nothing to run.
  auto schedule = [&](Replica& rep, double now) {
    rep.batch.clear();
    std::int64_t budget = S.max_tokens_per_iteration;
    if (S.chunked_prefill) {
      if (!run_pass(rep, budget)) admit_pass(rep, budget, now, -1);
    } else {
      // vLLM V0 without chunked prefill: an iteration of whole prefills when one can be admitted,
      // else the running sequences' decodes.
      if (!rep.waiting.empty() && is_prefill(rep.waiting.front())) admit_pass(rep, budget, now, 1);
      if (rep.batch.empty()) {
        budget = S.max_tokens_per_iteration;
        if (!run_pass(rep, budget)) admit_pass(rep, budget, now, 0);
      }
    }
    if (rep.batch.empty()) return false;
    shape = BatchShape{};
    for (const Entry& e : rep.batch) {
      const Req& q = reqs[e.req];
      const bool emits = e.tokens == q.to_process();
      if (e.tokens == 1 && q.generated > 0) {
        ++shape.decodes;
        shape.decode_context_tokens += static_cast<double>(q.computed + 1);
      } else {
        shape.prefill_tokens += e.tokens;
        shape.prefill_attn_pairs += static_cast<double>(e.tokens) *
                                    (static_cast<double>(q.computed) + (e.tokens + 1) / 2.0);
        shape.prefill_context_tokens += static_cast<double>(q.computed + e.tokens);
      }
      if (emits) ++shape.logits;
    }
    const StepTime st = model.time(shape);
    // Each GPU runs one stage: its busy time is 1/pp of the pass (exactly the pass when pp = 1).
    const double share = 1.0 / S.pp;
    r.busy_s += st.total_s * share;
    r.gemm_busy_s += st.gemm_s * share;
    r.memory_busy_s += st.memory_s * share;
    r.comm_busy_s += st.comm_s * share;
    ++r.iterations;
    tokens_in_batches += static_cast<double>(shape.tokens());
    seqs_in_batches += static_cast<double>(rep.batch.size());
    account(rep, now);
    rep.peak_used = std::max(rep.peak_used, rep.total_blocks - rep.free_blocks);
    for (const Entry& e : rep.batch) reqs[e.req].in_flight = true;
    rep.flights.push_back({std::move(rep.batch), now + st.total_s});
    rep.batch.clear();
    rep.next_start_s = now + st.interval_s;
    return true;
  };
  // The replica can start a batch: fewer than pp in flight and its first stage free.
  auto can_start = [&](const Replica& rep, double now) {
    return static_cast<int>(rep.flights.size()) < S.pp && rep.next_start_s <= now;
  };

  auto finish_iteration = [&](int ri, std::size_t fi, double now) {
    Replica& rep = reps[ri];
    account(rep, now);
    Flight flight = std::move(rep.flights[fi]);
    rep.flights.erase(rep.flights.begin() + static_cast<std::ptrdiff_t>(fi));
    for (const Entry& e : flight.batch) {
      Req& q = reqs[e.req];
      q.in_flight = false;
      const bool emits = e.tokens == q.to_process();
      q.computed += e.tokens;
      if (!emits) continue;
      ++q.generated;
      RequestRecord& rec = r.records[e.req];
      if (q.generated == 1) rec.first_token_s = now;
      if (rep.role != Role::Prefill) rec.replica = ri;
      const bool done = q.generated >= q.output;
      const bool handoff = rep.role == Role::Prefill && !done;
      if (done || handoff) {
        rep.running.erase(std::find(rep.running.begin(), rep.running.end(), e.req));
        if (done) {
          rep.free_blocks += q.blocks;
          q.blocks = 0;
          rec.finish_s = now;
          if (rep.role == Role::Prefill) rec.prefill_replica = ri, rec.replica = ri;
        } else {
          rec.prefill_replica = ri;
          const double dt = model.kv_transfer_s(q.computed);
          r.kv_transfer_s_total += dt;
          r.kv_transfer_bytes += model.kv_bytes_per_token_model() * static_cast<double>(q.computed);
          transfers.push_back({now + dt, e.req, ri});
        }
      }
    }
  };

  double now = 0;
  std::size_t finished = 0;
  const std::size_t n_req = reqs.size();
  auto count_finished = [&] {
    std::size_t f = 0;
    for (const RequestRecord& rec : r.records) f += rec.finish_s >= 0;
    return f;
  };
  while (true) {
    // The next event: an iteration end (lowest replica index first, then start order), a
    // transfer, an arrival, a pipeline's first stage coming free (pp > 1).
    double t_iter = kInf, t_free = kInf;
    int ri = -1;
    std::size_t fi = 0;
    for (std::size_t i = 0; i < reps.size(); ++i) {
      const Replica& rep = reps[i];
      for (std::size_t k = 0; k < rep.flights.size(); ++k)
        if (rep.flights[k].end_s < t_iter)
          t_iter = rep.flights[k].end_s, ri = static_cast<int>(i), fi = k;
      if (!rep.flights.empty() && static_cast<int>(rep.flights.size()) < S.pp &&
          rep.next_start_s > now)
        t_free = std::min(t_free, rep.next_start_s);
    }
    double t_xfer = kInf;
    std::size_t xi = 0;
    for (std::size_t i = 0; i < transfers.size(); ++i)
      if (transfers[i].done_s < t_xfer) t_xfer = transfers[i].done_s, xi = i;
    const double t_arr = next_arrival < n_req ? trace[next_arrival].arrival_s : kInf;
    const double t = std::min({t_iter, t_xfer, t_arr, t_free});
    if (t == kInf) break;
    now = t;
    if (t_iter <= t) {
      finish_iteration(ri, fi, now);
    } else if (t_xfer <= t) {
      const Transfer x = transfers[xi];
      transfers.erase(transfers.begin() + static_cast<std::ptrdiff_t>(xi));
      Replica& from = reps[x.from];
      account(from, now);
      from.free_blocks += reqs[x.req].blocks;
      reqs[x.req].blocks = 0;
      // The decode replica holds the prompt's KV (computed = prompt); its blocks are allocated
      // when it is admitted, with its first decode token.
      const int d = pick(Role::Decode, rr_decode);
      reps[d].waiting.push_back(x.req);
    } else if (t_arr <= t) {
      const int q = static_cast<int>(next_arrival++);
      const int d = pick(S.disaggregated() ? Role::Prefill : Role::Both, rr_next);
      reps[d].waiting.push_back(q);
    }
    for (Replica& rep : reps)
      if (can_start(rep, now)) schedule(rep, now);
  }
  finished = count_finished();
  check_internal(finished == n_req, "serve: requests left unfinished with no event pending");

  // Aggregates.
  double first = kInf, last = 0;
  std::vector<double> ttft, tpot, e2e, queue;
  std::int64_t good = 0;
  for (const RequestRecord& rec : r.records) {
    first = std::min(first, rec.arrival_s);
    last = std::max(last, rec.finish_s);
    ttft.push_back(rec.ttft_s());
    if (rec.output_tokens > 1) tpot.push_back(rec.tpot_s());
    e2e.push_back(rec.e2e_s());
    queue.push_back(rec.first_scheduled_s - rec.arrival_s);
    r.output_tokens += static_cast<double>(rec.output_tokens);
    r.prompt_tokens += static_cast<double>(rec.prompt_tokens);
    const bool ok = (cfg.slo.ttft_s <= 0 || rec.ttft_s() <= cfg.slo.ttft_s) &&
                    (cfg.slo.tpot_s <= 0 || rec.tpot_s() <= cfg.slo.tpot_s);
    good += ok;
  }
  r.requests = static_cast<std::int64_t>(n_req);
  r.makespan_s = last - first;
  r.ttft = percentiles(ttft);
  r.tpot = percentiles(tpot);
  r.e2e = percentiles(e2e);
  r.queue = percentiles(queue);
  const double span = r.makespan_s > 0 ? r.makespan_s : 1e-30;
  r.output_tokens_per_s = r.output_tokens / span;
  r.output_tokens_per_s_per_gpu = r.output_tokens_per_s / r.gpus;
  r.output_tokens_per_s_per_replica = r.output_tokens_per_s / S.total_replicas();
  r.total_tokens_per_s = (r.output_tokens + r.prompt_tokens) / span;
  r.requests_per_s = static_cast<double>(n_req) / span;
  r.slo_attainment = static_cast<double>(good) / static_cast<double>(n_req);
  r.goodput_rps = static_cast<double>(good) / span;
  double occ = 0, peak = 0;
  for (Replica& rep : reps) {
    account(rep, last);
    occ += rep.kv_block_seconds / (static_cast<double>(rep.total_blocks) * span);
    peak =
        std::max(peak, static_cast<double>(rep.peak_used) / static_cast<double>(rep.total_blocks));
  }
  r.kv_occupancy_mean = occ / static_cast<double>(reps.size());
  r.kv_occupancy_peak = peak;
  r.mean_batch_tokens =
      r.iterations > 0 ? tokens_in_batches / static_cast<double>(r.iterations) : 0;
  r.mean_batch_sequences =
      r.iterations > 0 ? seqs_in_batches / static_cast<double>(r.iterations) : 0;
  if (S.pp > 1)
    r.notes.push_back(fmt::format(
        "pipeline parallelism: up to {} batches in flight per replica, one stage apart (stages "
        "taken as equal: 1/pp of the pass each)",
        S.pp));
  if (w.model.tf.is_moe() && !w.model.tf.moe_imbalance_set)
    r.notes.push_back("model.moe_imbalance = 1.0 (default: experts perfectly balanced)");
  if (w.model.tf.kv_heads < S.tp)
    r.notes.push_back(fmt::format("tp {} > {} KV heads: KV heads replicated, one per GPU", S.tp,
                                  w.model.tf.kv_heads));
  return r;
}

}  // namespace tutti::serve
