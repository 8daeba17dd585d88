// The plan result document read back strictly (plan_result.hpp).
#include "tutti/plan/plan_result.hpp"

#include <limits>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"

namespace tutti {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kSchema = "plan_result.schema.json";

const nlohmann::json& schema() {
  static const nlohmann::json s = parse_embedded_schema(embedded_plan_result_schema(), kSchema);
  return s;
}

std::optional<std::int64_t> integer_opt(Obj& o, std::string_view key) {
  auto v = o.opt(key);
  return v ? std::optional<std::int64_t>(v->integer()) : std::nullopt;
}

std::vector<PlanBomLineView> bom_lines(const Value& items) {
  std::vector<PlanBomLineView> out;
  Arr a = items.arr();
  for (std::size_t i = 0; i < a.size(); ++i) {
    Obj e = a.at(i).obj();
    PlanBomLineView l;
    l.id = e.string_or("id", "");
    l.name = e.string_or("name", "");
    l.role = e.string_or("role", "");
    l.count = e.number_or("count", kNaN);
    l.price_usd = e.number_or("price_usd", kNaN);
    l.power_W = e.number_or("power_W", kNaN);
    out.push_back(std::move(l));
  }
  return out;
}

PlanConfigurationView configuration(const Value& v) {
  Obj c = v.obj();
  PlanConfigurationView x;
  x.index = integer_opt(c, "index");
  Obj h = c.req("hardware").obj();
  x.node = h.string_or("node", "");
  x.gpu = h.string_or("gpu", "");
  x.fabric = h.string_or("fabric", "");
  x.network = h.string_or("network", "");
  x.storage = h.string_or("storage", "");
  x.acquisition = h.string_or("acquisition", c.string_or("acquisition", ""));
  x.nodes = integer_opt(h, "nodes");
  x.gpus = h.req("gpus").integer(1);
  x.oversubscription = h.number_or("oversubscription", kNaN);
  Obj l = c.req("layout").obj();
  x.layout.compact = l.string_or("compact", "");
  x.layout.string = l.string_or("string", "");
  x.layout.recompute = l.string_or("recompute", "");
  x.layout.tp = integer_opt(l, "tp");
  x.layout.pp = integer_opt(l, "pp");
  x.layout.dp = integer_opt(l, "dp");
  x.layout.cp = integer_opt(l, "cp");
  x.layout.ep = integer_opt(l, "ep");
  x.layout.vp = integer_opt(l, "vp");
  x.layout.zero = integer_opt(l, "zero");
  x.layout.micro_batch = integer_opt(l, "micro_batch");
  x.engine = c.string_or("engine", "");
  x.bottleneck = c.string_or("bottleneck", "");
  x.iteration_time_s = c.req("iteration_time_s").number(0);
  x.time_to_train_s = c.req("time_to_train_s").number(0);
  x.mfu = c.number_or("mfu", kNaN);
  x.memory_per_gpu_bytes = c.number_or("memory_per_gpu_bytes", kNaN);
  x.capex_usd = c.number_or("capex_usd", kNaN);
  x.run_opex_usd = c.number_or("run_opex_usd", kNaN);
  x.total_cost_usd = c.number_or("total_cost_usd", kNaN);
  x.energy_J = c.number_or("energy_J", kNaN);
  x.energy_J_per_token = c.number_or("energy_J_per_token", kNaN);
  x.avg_it_power_W = c.number_or("avg_it_power_W", kNaN);
  x.peak_facility_power_W = c.number_or("peak_facility_power_W", kNaN);
  x.breakdown.compute_s = x.breakdown.bubble_s = x.breakdown.other_s = kNaN;
  if (auto b = c.opt("breakdown")) {
    Obj bo = b->obj();
    x.breakdown.compute_s = bo.number_or("compute_s", kNaN);
    x.breakdown.bubble_s = bo.number_or("bubble_s", kNaN);
    x.breakdown.other_s = bo.number_or("other_s", kNaN);
    if (auto e = bo.opt("exposed_comm_s")) {
      Obj eo = e->obj();
      for (const std::string& k : eo.keys())
        if (auto d = eo.opt(k)) x.breakdown.exposed_comm_s[k] = d->number(0);
    }
  }
  // bill_of_materials.items (what Planner::to_json writes; it repeats them as bom), else bom.
  std::optional<Value> items;
  if (auto b = c.opt("bill_of_materials")) items = b->obj().opt("items");
  if (!items) items = c.opt("bom");
  if (items) x.bill_of_materials = bom_lines(*items);
  x.price_origins = nullptr;
  if (auto f = c.opt("facility"))
    if (auto cost = f->obj().opt("cost"))
      if (auto o = cost->obj().opt("origins")) x.price_origins = o->json();
  if (auto vs = c.opt("violations")) {
    std::vector<std::string> names;
    Arr a = vs->arr();
    for (std::size_t i = 0; i < a.size(); ++i) names.push_back(a.at(i).string());
    x.violations = std::move(names);
  }
  return x;
}

std::vector<PlanConfigurationView> configurations(Obj& o, std::string_view key) {
  std::vector<PlanConfigurationView> out;
  if (auto v = o.opt(key)) {
    Arr a = v->arr();
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(configuration(a.at(i)));
  }
  return out;
}

}  // namespace

PlanResultView PlanResultView::from_json(const nlohmann::json& doc, const std::string& source,
                                         const std::string& at) {
  // Not a plan at all (a comparison, a serving run): say what was expected before the schema
  // lists every missing key.
  if (!doc.is_object() || (!doc.contains("pareto") && !doc.contains("recommended")))
    throw InputError(
        source, at.empty() ? "pareto" : at + ".pareto",
        doc.is_object() ? "no \"pareto\" nor \"recommended\"" : describe_json(doc),
        "a plan as `tutti plan --json` prints it (keys recommended, pareto, evaluated, feasible)");
  require_schema(schema(), doc, kSchema, source, at);
  Obj root = Value(nullptr, &doc, source, at).obj();
  PlanResultView p;
  p.schema_version = static_cast<int>(root.req("schema_version").integer(1, 1));
  p.found = root.req("found").boolean();
  p.reason = root.string_or("reason", "");
  if (auto w = root.opt("workload")) {
    Obj wo = w->obj();
    p.workload = wo.string_or("name", "");
  }
  if (p.workload.empty())
    if (auto r = root.opt("request"))
      if (auto w = r->obj().opt("workload"); w && w->is_string()) p.workload = w->string();
  if (p.workload.empty())
    if (auto w = root.opt("workload")) p.workload = w->obj().string_or("file", "");
  p.evaluated = root.req("evaluated").number(0);
  p.feasible = root.req("feasible").number(0);
  p.simulated = root.number_or("simulated", kNaN);
  p.pruned = root.number_or("pruned", kNaN);
  p.retimed = integer_opt(root, "retimed");
  if (auto v = root.opt("violations")) {
    Obj vo = v->obj();
    for (const std::string& k : vo.keys())
      if (auto n = vo.opt(k)) p.violations[k] = n->number(0);
  }
  if (auto cs = root.opt("constraints")) {
    Arr a = cs->arr();
    for (std::size_t i = 0; i < a.size(); ++i) {
      Obj c = a.at(i).obj();
      p.constraints.emplace_back(c.req("constraint").string(), c.req("value").string());
    }
  }
  if (auto r = root.opt("recommended"); r && !r->json().empty()) p.recommended = configuration(*r);
  p.pareto = configurations(root, "pareto");
  p.finalists = configurations(root, "finalists");
  p.alternatives = configurations(root, "alternatives");
  if (auto n = root.opt("nearest_miss")) p.nearest_miss = configuration(*n);
  p.calibration_defaults = nullptr;
  if (auto c = root.opt("calibration_defaults")) p.calibration_defaults = c->obj().value().json();
  return p;
}

}  // namespace tutti
