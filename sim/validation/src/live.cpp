// `tutti validate --live` / `--measurements`: a measured replay against the engine's prediction
// (live.hpp). Moved from cli/validate_live.cpp (issue 23); the document is unchanged.
#include "tutti/validation/live.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <tuple>

#include "tutti/core/error.hpp"
#include "tutti/models/kind_key.hpp"
#include "tutti/models/layout.hpp"
#include "tutti/models/program.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

std::map<std::string, double> predicted_by_kind(const Program& p, int stage, const Cluster& c,
                                                const CalibrationProfile& prof,
                                                const SimCluster& sc) {
  std::map<std::string, double> out;
  const RankClass* cls = nullptr;
  for (const auto& k : p.classes)
    if (k.stage == stage) cls = &k;
  if (!cls) return out;
  CollectiveContext ctx = make_collective_context(*c.topology, prof, sc.nvls, sc.sharp);
  const int rep = rank_of(p.layout, 0, 0, 0, stage);
  std::map<std::tuple<int, int, double>, double> cache;
  for (const Op& op : cls->ops) {
    double t = 0;
    switch (op.kind) {
      case OpKind::Gemm:
      case OpKind::Attention:
      case OpKind::MemBound:
        t = op_time_s(op, c.gpu, prof);
        break;
      case OpKind::Collective: {
        auto key = std::make_tuple(static_cast<int>(op.coll), static_cast<int>(op.group), op.bytes);
        auto it = cache.find(key);
        if (it != cache.end()) {
          t = it->second;
        } else {
          auto group = group_ranks(p.layout, rep, op.group);
          t = simulate_collectives({plan_collective(op.coll, op.bytes, group, ctx)}, *c.topology,
                                   prof);
          cache[key] = t;
        }
        break;
      }
      case OpKind::Send:
      case OpKind::Recv: {
        RankCoords rc = coords_of(p.layout, rep);
        int peer = rank_of(p.layout, rc.tp, rc.cp, rc.dp, rc.pp + op.peer_delta);
        t = simulate_collectives({plan_p2p(rep, peer, op.bytes, ctx)}, *c.topology, prof);
        break;
      }
    }
    out[kind_key(op)] += t;
  }
  return out;
}

namespace {
double err_pct(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured * 100 : 0;
}
}  // namespace

nlohmann::json compare_replay(const ReplayMeasurement& rec, const std::string& measurements_name,
                              const LiveComparisonOptions& o) {
  if (rec.wrong_elements > 0)
    throw InputError(
        measurements_name, "replay.result.check.wrong_elements", std::to_string(rec.wrong_elements),
        "0 (the replay computed wrong collective results; its timings are not comparable)");
  Workload w = load_workload(rec.workload, rec.overrides);
  const std::string cluster_path = o.cluster_override.empty() ? rec.cluster : o.cluster_override;
  Cluster c = load_cluster(cluster_path);
  Layout l = parse_layout_flag(rec.layout);
  Program p = expand_program(w, l);
  CalibrationProfile prof =
      o.calibration.empty() ? default_calibration() : load_calibration(o.calibration);
  SimCluster sc = sim_cluster(c);  // the engine's view, as `tutti simulate` uses it
  SimResult r = simulate_program(p, sc, prof, {});

  // Per kind: the stage the measurement reports (the one with the largest measured total);
  // predicted for every stage, the matching one chosen by the largest predicted total when the
  // measurement does not say.
  std::map<std::string, double> measured(rec.by_kind_s.begin(), rec.by_kind_s.end());
  std::map<std::string, double> predicted;
  double best = -1;
  for (const auto& k : p.classes) {
    auto m = predicted_by_kind(p, k.stage, c, prof, sc);
    double tot = 0;
    for (auto& [key, v] : m) tot += v;
    if (tot > best) {
      best = tot;
      predicted = m;
    }
  }
  nlohmann::json kinds = nlohmann::json::array();
  std::map<std::string, int> all;
  for (auto& [k, v] : measured) all[k] = 1;
  for (auto& [k, v] : predicted) all[k] = 1;
  for (auto& [k, one] : all) {
    double pr = predicted.count(k) ? predicted[k] : 0, me = measured.count(k) ? measured[k] : 0;
    kinds.push_back(
        {{"kind", k}, {"predicted_s", pr}, {"measured_s", me}, {"error_pct", err_pct(pr, me)}});
  }
  double e = err_pct(r.iteration_time_s, rec.iteration_time_s);
  nlohmann::json j = {{"schema_version", 1},  // schemas/replay_validation_result.schema.json
                      {"measurements", measurements_name},
                      {"workload", rec.workload},
                      {"overrides", rec.overrides},
                      {"cluster", cluster_path},
                      {"layout", rec.layout},
                      {"device", rec.device},
                      {"calibration", o.calibration.empty() ? "default" : o.calibration},
                      {"engine", r.engine},
                      {"iteration",
                       {{"predicted_s", r.iteration_time_s},
                        {"measured_median_s", rec.iteration_time_s},
                        {"measured_min_s", rec.iteration_min_s},
                        {"measured_max_s", rec.iteration_max_s},
                        {"measured_iterations", rec.iterations},
                        {"error_pct", e}}},
                      {"by_kind", kinds}};
  if (o.tolerance_pct > 0) {
    j["tolerance_pct"] = o.tolerance_pct;
    j["within_tolerance"] = std::fabs(e) <= o.tolerance_pct;
  }
  return j;
}

std::string live_comparison_table(const nlohmann::json& j) {
  std::string t = fmt::format("validate: {} on {} ({}), calibration {}\n",
                              j["workload"].get<std::string>(), j["cluster"].get<std::string>(),
                              j["layout"].get<std::string>(), j["calibration"].get<std::string>());
  t +=
      fmt::format("  {:<22} {:>14} {:>14} {:>9}\n", "", "predicted (ms)", "measured (ms)", "error");
  const auto& it = j["iteration"];
  t += fmt::format("  {:<22} {:>14.3f} {:>14.3f} {:>8.1f}%\n", "iteration (median)",
                   it["predicted_s"].get<double>() * 1e3,
                   it["measured_median_s"].get<double>() * 1e3, it["error_pct"].get<double>());
  for (const auto& k : j["by_kind"])
    t += fmt::format("  {:<22} {:>14.3f} {:>14.3f} {:>8.1f}%\n", k["kind"].get<std::string>(),
                     k["predicted_s"].get<double>() * 1e3, k["measured_s"].get<double>() * 1e3,
                     k["error_pct"].get<double>());
  if (j.contains("within_tolerance"))
    t += fmt::format("  iteration error {} the {:.1f}% tolerance\n",
                     j["within_tolerance"].get<bool>() ? "within" : "OUTSIDE",
                     j["tolerance_pct"].get<double>());
  t += "  (per-kind times are sums of per-op times on one rank; measured communication includes "
       "waiting for peers)\n";
  return t;
}

}  // namespace tutti
