// The simulation result document (simulation_document.hpp): writer, typed view, strict reader.
#include "tutti/facility/simulation_document.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tutti/core/schema.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/models/layout.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/topologies/cluster.hpp"
#include "tutti/topologies/failures.hpp"
#include "tutti/topologies/prices.hpp"

namespace tutti {
namespace {
using nlohmann::json;

std::optional<double> opt_number(const json& j, const char* ptr) {
  const json::json_pointer p(ptr);
  if (!j.contains(p) || !j.at(p).is_number()) return std::nullopt;  // null: not known
  return j.at(p).get<double>();
}

// Fills the typed fields from a document that has the schema's shape (checked by the reader;
// written so by make_simulation_document).
SimulationDocument view(json j) {
  SimulationDocument d;
  d.schema_version = j.at("schema_version").get<int>();
  d.engine = j.at("engine").get<std::string>();
  d.workload = j.at("workload").get<std::string>();
  d.cluster = j.at("cluster").get<std::string>();
  d.layout = j.at("layout").get<std::string>();
  d.calibration = j.at("calibration").get<std::string>();
  d.gpus = j.at("gpus").get<long long>();
  d.iteration_time_s = j.at("iteration_time_s").get<double>();
  d.tokens_per_s_per_gpu = j.at("tokens_per_s_per_gpu").get<double>();
  d.samples_per_s = j.at("samples_per_s").get<double>();
  d.tflops_per_gpu = j.at("tflops_per_gpu").get<double>();
  d.mfu = j.at("mfu").get<double>();
  d.hfu = j.at("hfu").get<double>();
  d.iterations = j.at("iterations").get<double>();
  d.time_to_train_s = j.at("time_to_train_s").get<double>();
  d.memory_per_gpu_bytes = j.at("memory_per_gpu_bytes").get<double>();
  const json& b = j.at("breakdown");
  d.compute_s = b.at("compute_s").get<double>();
  d.bubble_s = b.at("bubble_s").get<double>();
  d.other_s = b.at("other_s").get<double>();
  for (const auto& [dim, s] : b.at("exposed_comm_s").items())
    d.exposed_comm_s.emplace_back(dim, s.get<double>());
  for (const json& l : j.at("bottleneck_links"))
    d.bottleneck_links.push_back({l.at("link").get<std::string>(), l.at("tier").get<std::string>(),
                                  l.at("utilization").get<double>(), l.at("bytes").get<double>()});
  for (const auto& [gpu, list] : j.at("calibration_defaults").items()) {
    auto& v = d.calibration_defaults[gpu];
    for (const json& x : list)
      v.push_back({x.at("key").get<std::string>(), x.at("what").get<std::string>(),
                   x.at("value").get<double>(), x.at("basis").get<std::string>()});
  }
  const json& f = j.at("facility");
  SimulationFacility& fa = d.facility;
  fa.energy_per_run_J = opt_number(f, "/energy_per_run_J");
  fa.time_to_train_s = opt_number(f, "/time_to_train_s");
  fa.effective_time_to_train_s = opt_number(f, "/effective_time_to_train_s");
  fa.avg_it_W = opt_number(f, "/power/avg_it_W");
  fa.capex_usd = opt_number(f, "/cost/capex_usd");
  fa.cost_per_run_usd = opt_number(f, "/cost/cost_per_run_usd");
  fa.usd_per_million_tokens = opt_number(f, "/cost/usd_per_million_tokens");
  fa.cloud_cost_per_run_usd = opt_number(f, "/cost/cloud_cost_per_run_usd");
  if (f.at("cost").contains("origins")) fa.cost_origins = f.at("cost").at("origins");
  fa.goodput = opt_number(f, "/reliability/goodput");
  fa.physical_J_per_token = opt_number(f, "/energy/physical_J_per_token");
  d.document = std::move(j);
  return d;
}

// Writes an optional figure back: the number, or null where the document had the key.
void put(json& j, const char* ptr, const std::optional<double>& v) {
  const json::json_pointer p(ptr);
  if (v)
    j[p] = *v;
  else if (j.contains(p))
    j[p] = nullptr;
}

}  // namespace

LivedIteration lived_iteration(const SimResult& r, const FacilityResult& fr) {
  LivedIteration v;
  v.T_sim = r.iteration_time_s;
  const double n = r.iterations;
  v.fac = n > 0 && fr.effective_time_to_train_s > 0 && v.T_sim > 0;
  v.T_thr = v.fac ? std::max(v.T_sim, fr.cooling.times.iteration_s) : v.T_sim;
  v.T_stall = v.fac ? std::max(v.T_thr, fr.time_to_train_s / n) : v.T_sim;
  v.T = v.fac ? std::max(v.T_stall, fr.effective_time_to_train_s / n) : v.T_sim;
  v.k = v.T > 0 ? v.T_sim / v.T : 1;  // rate scale: simulated -> lived
  return v;
}

std::optional<double> SimulationDocument::exposed(const std::string& dim) const {
  for (const auto& [name, s] : exposed_comm_s)
    if (name == dim) return s;
  return std::nullopt;
}

SimulationDocument make_simulation_document(const Workload& w, const Cluster& c, const Layout& l,
                                            const SimOptions& options, const SimResult& r,
                                            const FacilityResult& fr) {
  json j;
  to_json(j, r);
  {
    const LivedIteration v = lived_iteration(r, fr);
    j["lived"] = {{"iteration_time_s", v.T},
                  {"simulated_iteration_time_s", v.T_sim},
                  {"throttle_s", v.T_thr - v.T_sim},
                  {"data_stall_s", v.T_stall - v.T_thr},
                  {"failures_s", v.T - v.T_stall},
                  {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu * v.k},
                  {"mfu", r.mfu * v.k},
                  {"time_to_train_s", r.iterations * v.T}};
  }
  // The document's contract: schemas/simulation_result.schema.json (bump on a change of meaning).
  j["schema_version"] = 1;
  j["workload"] = w.name;
  j["cluster"] = c.name;
  // Present only when not the default (ECMP, no failures), so older documents stay as they were.
  if (c.fabric.routing != Routing::Ecmp && c.fabric.kind != FabricKind::None)
    j["routing"] = to_string(c.fabric.routing);
  if (!c.failures.empty())
    j["failures"] = {{"request", c.failures.request},
                     {"cables", c.failures.cables},
                     {"switches", c.failures.switches},
                     {"cable_fraction", c.failures.cable_fraction}};
  j["gpus"] = l.gpus();
  if (l.gpus() < c.gpus()) {
    j["cluster_gpus"] = c.gpus();
    j["placement"] = describe_placement(c, l.gpus());
  }
  j["layout"] = to_string(l);
  j["calibration"] = options.calibration.empty() ? "default" : options.calibration;
  // Which compute/collective values are defaults for this GPU, keyed by GPU id as in `plan --json`.
  j["calibration_defaults"] = {{c.gpu.id, calibration_defaults_json(calibration_defaults(
                                              calibration_for(options.calibration), c.gpu))}};
  if (w.model.tf.is_moe()) {
    const auto& t = w.model.tf;
    j["moe"] = {{"imbalance", t.moe_imbalance},
                {"imbalance_source",
                 t.moe_imbalance_set ? std::string("workload")
                                     : fmt::format("default ({} routing, arXiv:2408.15664 Table 2)",
                                                   to_string(t.moe_balancing))},
                {"balancing", to_string(t.moe_balancing)},
                {"capacity_factor", t.moe_capacity_factor},
                {"dropless", t.moe_capacity_factor <= 0},
                {"dispatch_dtype", to_string(moe_dispatch_dtype(w))},
                {"max_nodes_per_token", t.moe_max_nodes}};
  }
  j["facility"] = facility_to_json(fr);
  if (!c.price_origins.file.empty())
    j["prices"] = {
        {"file", c.price_origins.file},
        {"source", c.price_origins.source.empty() ? "not stated" : c.price_origins.source}};
  return view(std::move(j));
}

json to_json(const SimulationDocument& d) {
  json j = d.document.is_object() ? d.document : json::object();
  j["schema_version"] = d.schema_version;
  j["engine"] = d.engine;
  j["workload"] = d.workload;
  j["cluster"] = d.cluster;
  j["layout"] = d.layout;
  j["calibration"] = d.calibration;
  j["gpus"] = d.gpus;
  j["iteration_time_s"] = d.iteration_time_s;
  j["tokens_per_s_per_gpu"] = d.tokens_per_s_per_gpu;
  j["samples_per_s"] = d.samples_per_s;
  j["tflops_per_gpu"] = d.tflops_per_gpu;
  j["mfu"] = d.mfu;
  j["hfu"] = d.hfu;
  j["iterations"] = d.iterations;
  j["time_to_train_s"] = d.time_to_train_s;
  j["memory_per_gpu_bytes"] = d.memory_per_gpu_bytes;
  json& b = j["breakdown"];
  b["compute_s"] = d.compute_s;
  b["bubble_s"] = d.bubble_s;
  b["other_s"] = d.other_s;
  json exposed = json::object();
  for (const auto& [dim, s] : d.exposed_comm_s) exposed[dim] = s;
  b["exposed_comm_s"] = exposed;
  json links = json::array();
  for (const auto& l : d.bottleneck_links)
    links.push_back(
        {{"link", l.link}, {"tier", l.tier}, {"utilization", l.utilization}, {"bytes", l.bytes}});
  j["bottleneck_links"] = links;
  json defaults = json::object();
  for (const auto& [gpu, list] : d.calibration_defaults)
    defaults[gpu] = calibration_defaults_json(list);
  j["calibration_defaults"] = defaults;
  json& f = j["facility"];
  const SimulationFacility& fa = d.facility;
  put(f, "/energy_per_run_J", fa.energy_per_run_J);
  put(f, "/time_to_train_s", fa.time_to_train_s);
  put(f, "/effective_time_to_train_s", fa.effective_time_to_train_s);
  put(f, "/power/avg_it_W", fa.avg_it_W);
  put(f, "/cost/capex_usd", fa.capex_usd);
  put(f, "/cost/cost_per_run_usd", fa.cost_per_run_usd);
  put(f, "/cost/usd_per_million_tokens", fa.usd_per_million_tokens);
  put(f, "/cost/cloud_cost_per_run_usd", fa.cloud_cost_per_run_usd);
  if (!fa.cost_origins.is_null()) f["cost"]["origins"] = fa.cost_origins;
  put(f, "/reliability/goodput", fa.goodput);
  put(f, "/energy/physical_J_per_token", fa.physical_J_per_token);
  return j;
}

const json& simulation_result_schema() {
  static const json schema =
      parse_embedded_schema(embedded_simulation_result_schema(), "simulation_result.schema.json");
  return schema;
}

SimulationDocument simulation_document_from_json(const json& j, const std::string& source,
                                                 const std::string& at) {
  require_schema(simulation_result_schema(), j, "simulation_result.schema.json", source, at);
  return view(j);
}

}  // namespace tutti
