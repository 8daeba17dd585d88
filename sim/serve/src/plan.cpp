// Serving planner search (plan.hpp).
#include "tutti/serve/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tutti/core/error.hpp"
#include "tutti/core/format.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::serve {

double ServeCandidate::cost() const {
  return rent ? usd_per_mtok_rented : usd_per_mtok_owned;
}

namespace {

std::string describe(const Serving& s) {
  std::string d = s.disaggregated()
                      ? fmt::format("{}P+{}D x tp{}", s.prefill_replicas, s.decode_replicas, s.tp)
                      : fmt::format("{} x tp{}", s.replicas, s.tp);
  if (s.pp > 1) d += fmt::format(" pp{}", s.pp);
  if (s.ep > 1) d += fmt::format(" ep{}", s.ep);
  return d + fmt::format(", batch {}", s.max_batch);
}

}  // namespace

ServePlanResult plan_serving(const Workload& w, const ServeConfig& base,
                             const std::vector<HardwareOption>& hardware,
                             const CalibrationProfile& profile, std::uint64_t seed,
                             const ServePlanOptions& o) {
  if (hardware.empty())
    throw InputError("--cluster", "", "no hardware options", "at least one cluster file");
  if (w.model.family != ModelFamily::Transformer)
    throw InputError(w.file, "model.family", to_string(w.model.family),
                     "transformer (decoder-only LM)");
  ServePlanResult r;
  r.options = o;
  r.slo = base.slo;
  const TransformerSpec& m = w.model.tf;
  for (const HardwareOption& h : hardware) {
    const Cluster& c = *h.cluster;
    const SimCluster sc = sim_cluster(c);
    const int gpus = c.gpus();
    for (int tp = 1; tp <= std::min(c.gpus_per_node, gpus); tp *= 2) {
      if (m.heads % tp != 0) continue;
      std::vector<int> eps = {1};
      if (m.is_moe() && tp > 1 && m.experts % tp == 0) eps.push_back(tp);
      // Pipelines span nodes: pp > 1 only when TP fills a node (vLLM's multi-node layout).
      std::vector<int> pps = {1};
      if (tp == c.gpus_per_node)
        for (int pp = 2; pp * tp <= gpus && pp <= m.layers && pp <= o.max_pp; pp *= 2)
          pps.push_back(pp);
      for (int pp : pps)
        for (int ep : eps)
          for (int n = 1; n * tp * pp <= gpus; ++n) {
            std::vector<std::pair<int, int>> splits = {{0, 0}};
            if (o.disaggregation && n >= 2) {
              splits.push_back({1, n - 1});
              if (n >= 4 && n / 2 != 1) splits.push_back({n / 2, n - n / 2});
            }
            for (auto [pre, dec] : splits)
              for (int mb : o.max_batches) {
                ServeConfig cfg = base;
                Serving& s = cfg.serving;
                s.tp = tp;
                s.pp = pp;
                s.ep = ep;
                s.max_batch = mb;
                s.replicas = pre > 0 ? 0 : n;
                s.prefill_replicas = pre;
                s.decode_replicas = dec;
                ServeCandidate cand;
                cand.rent = o.rent;
                cand.hardware = h.label;
                cand.gpu = c.gpu.name;
                cand.serving = s;
                cand.gpus = s.gpus();
                try {
                  ServeResult res = simulate_serving(w, cfg, sc, profile, seed);
                  ServeFacility f = serve_facility(res, c, FacilityOptions{});
                  const double share = static_cast<double>(cand.gpus) / gpus;
                  cand.feasible = true;
                  cand.attainment = res.slo_attainment;
                  cand.ttft_p99_s = res.ttft.p99;
                  cand.tpot_p99_s = res.tpot.p99;
                  cand.e2e_p99_s = res.e2e.p99;
                  cand.output_tokens_per_s = res.output_tokens_per_s;
                  cand.usd_per_mtok_owned = f.usd_per_million_output_tokens_owned * share;
                  cand.usd_per_mtok_rented = f.usd_per_million_output_tokens_rented * share;
                  cand.energy_per_token_J = f.energy_per_output_token_J * share;
                  cand.meets = res.slo_attainment >= o.attainment;
                  if (!cand.meets)
                    cand.why = fmt::format("SLO attainment {:.1f}% < {:.1f}%",
                                           100 * res.slo_attainment, 100 * o.attainment);
                } catch (const InputError& e) {
                  cand.why = e.what();
                }
                r.candidates.push_back(std::move(cand));
              }
          }
    }
  }
  for (int i = 0; i < static_cast<int>(r.candidates.size()); ++i) {
    const ServeCandidate& c = r.candidates[i];
    if (c.meets) {
      if (r.best < 0) {
        r.best = i;
      } else {
        const ServeCandidate& b = r.candidates[r.best];
        if (c.cost() < b.cost() || (c.cost() == b.cost() && c.gpus < b.gpus)) r.best = i;
      }
      bool dominated = false;
      for (const ServeCandidate& d : r.candidates) {
        if (!d.meets) continue;
        const bool le = d.cost() <= c.cost() && d.e2e_p99_s <= c.e2e_p99_s &&
                        d.energy_per_token_J <= c.energy_per_token_J;
        const bool lt = d.cost() < c.cost() || d.e2e_p99_s < c.e2e_p99_s ||
                        d.energy_per_token_J < c.energy_per_token_J;
        if (le && lt) {
          dominated = true;
          break;
        }
      }
      for (int k : r.frontier) {  // an identical point earlier in the order stands for it
        const ServeCandidate& d = r.candidates[k];
        dominated |= d.cost() == c.cost() && d.e2e_p99_s == c.e2e_p99_s &&
                     d.energy_per_token_J == c.energy_per_token_J;
      }
      if (!dominated) r.frontier.push_back(i);
    } else if (c.feasible &&
               (r.nearest_miss < 0 || c.attainment > r.candidates[r.nearest_miss].attainment)) {
      r.nearest_miss = i;
    }
  }
  std::sort(r.frontier.begin(), r.frontier.end(), [&](int a, int b) {
    const double ca = r.candidates[a].cost(), cb = r.candidates[b].cost();
    return ca != cb ? ca < cb : a < b;
  });
  return r;
}

namespace {
nlohmann::json cand_json(const ServeCandidate& c) {
  const Serving& s = c.serving;
  nlohmann::json j = {{"hardware", c.hardware},
                      {"gpu", c.gpu},
                      {"gpus", c.gpus},
                      {"tp", s.tp},
                      {"pp", s.pp},
                      {"ep", s.ep},
                      {"max_batch", s.max_batch},
                      {"replicas", s.disaggregated() ? 0 : s.replicas},
                      {"prefill_replicas", s.prefill_replicas},
                      {"decode_replicas", s.decode_replicas},
                      {"feasible", c.feasible},
                      {"meets", c.meets}};
  if (c.feasible)
    j.update({{"slo_attainment", c.attainment},
              {"ttft_p99_s", c.ttft_p99_s},
              {"tpot_p99_s", c.tpot_p99_s},
              {"e2e_p99_s", c.e2e_p99_s},
              {"output_tokens_per_s", c.output_tokens_per_s},
              {"usd_per_million_output_tokens_owned", c.usd_per_mtok_owned},
              {"usd_per_million_output_tokens_rented", c.usd_per_mtok_rented},
              {"energy_per_output_token_J", c.energy_per_token_J}});
  if (!c.why.empty()) j["why"] = c.why;
  return j;
}
}  // namespace

nlohmann::json to_json(const ServePlanResult& r) {
  nlohmann::json j = {
      {"kind", "serving_plan"},
      {"slo",
       {{"ttft_s", r.slo.ttft_s}, {"tpot_s", r.slo.tpot_s}, {"attainment", r.options.attainment}}},
      {"ranked_by", r.options.rent ? "usd_per_million_output_tokens_rented"
                                   : "usd_per_million_output_tokens_owned"},
      {"cost_basis", "facility cost and energy of the cluster file prorated by GPUs used"},
      {"evaluated", r.candidates.size()}};
  std::size_t feasible = 0, meets = 0;
  for (const ServeCandidate& c : r.candidates) feasible += c.feasible, meets += c.meets;
  j["feasible"] = feasible;
  j["meeting_slos"] = meets;
  j["recommended"] = r.best >= 0 ? cand_json(r.candidates[r.best]) : nlohmann::json(nullptr);
  nlohmann::json f = nlohmann::json::array();
  for (int i : r.frontier) f.push_back(cand_json(r.candidates[i]));
  j["frontier"] = f;
  j["nearest_miss"] =
      r.nearest_miss >= 0 ? cand_json(r.candidates[r.nearest_miss]) : nlohmann::json(nullptr);
  nlohmann::json all = nlohmann::json::array();
  for (const ServeCandidate& c : r.candidates) all.push_back(cand_json(c));
  j["candidates"] = all;
  return j;
}

std::string to_text(const ServePlanResult& r) {
  std::size_t feasible = 0, meets = 0;
  for (const ServeCandidate& c : r.candidates) feasible += c.feasible, meets += c.meets;
  std::string o = fmt::format(
      "evaluated {} configurations: {} fit in memory, {} meet the SLOs ({}{}{} for {:.0f}% of "
      "requests)\n",
      r.candidates.size(), feasible, meets,
      r.slo.ttft_s > 0 ? fmt::format("TTFT <= {:.0f} ms", r.slo.ttft_s * 1e3) : "",
      r.slo.ttft_s > 0 && r.slo.tpot_s > 0 ? ", " : "",
      r.slo.tpot_s > 0 ? fmt::format("TPOT <= {:.0f} ms", r.slo.tpot_s * 1e3) : "",
      100 * r.options.attainment);
  o += fmt::format(
      "cost: {} per million output tokens; cost and energy are the cluster file's, prorated by "
      "GPUs used\n\n",
      r.options.rent ? "rented" : "owned");
  // Values through core/format.hpp (one unit each: ms, J, %); the widths align the columns.
  auto ms = [](double s, int decimals) {
    const Rung rung[] = {{kBelowAll, 1e3, 1, fixed(decimals), "ms"}};
    return format_si(s, {.rungs = rung, .magnitude = false});
  };
  auto line = [&](const ServeCandidate& c) {
    static constexpr Rung kJ[] = {{kBelowAll, 1, 1, fixed(2), "J"}};
    return fmt::format(
        "{:<34} {:>3} {:<26} ${:>8} ${:>8} {:>11} {:>10} {:>8} {:>6}%", c.gpu.substr(0, 34), c.gpus,
        describe(c.serving), format_number(c.usd_per_mtok_owned, fixed(3)),
        format_number(c.usd_per_mtok_rented, fixed(3)), ms(c.e2e_p99_s, 0), ms(c.tpot_p99_s, 1),
        format_si(c.energy_per_token_J, {.rungs = kJ, .magnitude = false}),
        format_number(100 * c.attainment, fixed(1)));
  };
  const std::string head =
      fmt::format("{:<34} {:>3} {:<26} {:>9} {:>9} {:>11} {:>10} {:>8} {:>7}\n", "GPU", "n",
                  "serving", "$/M own", "$/M rent", "e2e p99", "TPOT p99", "J/tok", "SLO ok");
  if (r.best >= 0) {
    const ServeCandidate& b = r.candidates[r.best];
    o += fmt::format("recommended: {} GPUs of {} ({}), {}\n\n", b.gpus, b.gpu, b.hardware,
                     describe(b.serving));
    o += head + line(b) + "\n\nPareto frontier (cost, p99 end-to-end latency, energy per token)\n" +
         head;
    for (int i : r.frontier) o += line(r.candidates[i]) + "\n";
  } else {
    o += "no configuration meets the SLOs\n";
    if (r.nearest_miss >= 0) {
      const ServeCandidate& n = r.candidates[r.nearest_miss];
      o += "nearest miss (" + n.why + ")\n" + head + line(n) + "\n";
    }
  }
  return o;
}

}  // namespace tutti::serve
