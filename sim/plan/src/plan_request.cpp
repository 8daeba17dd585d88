// Plan request parsing (strict, through core/config.hpp) and its JSON echo.
// Keys and defaults must stay in agreement with schemas/plan_request.schema.json
// (tests/plan/plan_request_test.cpp checks both ways).
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/plan/planner.hpp"
#include "tutti/topologies/catalog.hpp"

namespace tutti {

namespace {

// A non-empty array of distinct items read by `item`.
template <class T, class F>
std::vector<T> read_list(Obj& o, std::string_view key, F item) {
  std::vector<T> out;
  auto v = o.opt(key);
  if (!v) return out;
  Arr a = v->arr();
  if (a.size() == 0) v->fail("a non-empty array");
  for (std::size_t i = 0; i < a.size(); ++i) {
    T x = item(a.at(i));
    for (const auto& y : out)
      if (y == x) a.at(i).fail("a value not already in the list");
    out.push_back(x);
  }
  return out;
}

std::vector<int> int_list(Obj& o, std::string_view key, int lo, int hi) {
  return read_list<int>(o, key,
                        [&](const Value& v) { return static_cast<int>(v.integer(lo, hi)); });
}

std::vector<std::string> string_list(Obj& o, std::string_view key) {
  return read_list<std::string>(o, key, [](const Value& v) {
    std::string s = v.string();
    if (s.empty()) v.fail("a non-empty string");
    return s;
  });
}

// A list of ids, each of which must be in `known` (the message lists them, so the fix is visible
// here rather than as an empty search later).
std::vector<std::string> id_list(Obj& o, std::string_view key,
                                 const std::vector<std::string>& known, const char* what) {
  return read_list<std::string>(o, key, [&](const Value& v) {
    std::string s = v.string();
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      v.fail(std::string(what) + ": " + list);
    }
    return s;
  });
}

std::vector<std::string> node_and_gpu_ids() {
  std::vector<std::string> ids;
  for (const auto& n : Catalog::builtin().nodes()) {
    ids.push_back(n.id);
    if (std::find(ids.begin(), ids.end(), n.gpu) == ids.end()) ids.push_back(n.gpu);
  }
  return ids;
}

std::string resolve_workload(const std::string& path, const std::string& base_dir) {
  namespace fs = std::filesystem;
  fs::path p(path);
  if (p.is_absolute()) return path;
  for (const fs::path& dir : {fs::path(base_dir), fs::current_path(), fs::path(TUTTI_SOURCE_DIR)}) {
    fs::path c = dir / p;
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c.lexically_normal().string();
  }
  return path;  // load_workload reports the missing file.
}

}  // namespace

PlanRequest parse_plan_request(const nlohmann::json& j, const std::string& name,
                               const std::string& base_dir) {
  Doc doc = Doc::from_json(j, name);
  Obj root = doc.root();
  PlanRequest r;
  r.file = name;
  r.workload = root.req("workload").string();
  r.workload_path = resolve_workload(r.workload, base_dir);
  if (auto t = root.opt("tokens")) r.tokens = t->quantity(Dim::Count, 1);

  if (auto cv = root.opt("constraints")) {
    Obj c = cv->obj();
    if (auto v = c.opt("deadline")) r.deadline_s = v->quantity(Dim::Time, 1);
    if (auto v = c.opt("capex_budget")) r.capex_budget_usd = v->quantity(Dim::Money, 1);
    if (auto v = c.opt("total_cost_budget")) r.total_cost_budget_usd = v->quantity(Dim::Money, 1);
    if (auto v = c.opt("power_cap")) r.power_cap_W = v->quantity(Dim::Power, 1);
    if (auto rv = c.opt("room")) {
      Obj room = rv->obj();
      r.room.racks = static_cast<int>(room.req("racks").integer(1, 1000000));
      if (auto v = room.opt("rack_power")) r.room.rack_power_W = v->quantity(Dim::Power, 1);
      if (auto v = room.opt("rack_cooling")) r.room.rack_cooling_W = v->quantity(Dim::Power, 1);
      room.done();
    }
    r.gpus_min = static_cast<int>(c.integer_or("gpus_min", 1, 1, 1 << 22));
    r.gpus_max = static_cast<int>(c.integer_or("gpus_max", 65536, 1, 1 << 22));
    if (r.gpus_max < r.gpus_min)
      c.req("gpus_max")
          .fail("an integer >= constraints.gpus_min (" + std::to_string(r.gpus_min) + ")");
    c.done();
  }

  Obj s = root.req("search").obj();
  r.gpus = id_list(s, "gpus", node_and_gpu_ids(), "a node or GPU catalog id");
  if (r.gpus.empty()) s.req("gpus").fail("a non-empty array of GPU or node catalog ids");
  r.gpu_counts = int_list(s, "gpu_counts", 1, 1 << 22);
  r.fabrics =
      id_list(s, "fabrics", {"fat_tree", "rail_optimized", "dual_plane", "dragonfly", "torus"},
              "a fabric kind");
  r.oversubscription =
      read_list<double>(s, "oversubscription", [](const Value& v) { return v.number(1, 64); });
  r.networks = read_list<Network>(s, "networks", [](const Value& v) {
    return v.choice({"infiniband", "roce"}) == "infiniband" ? Network::InfiniBand : Network::RoCE;
  });
  r.storage = id_list(s, "storage", Catalog::builtin().ids("storage"), "a storage catalog id");
  r.acquisition = read_list<Acquisition>(s, "acquisition", [](const Value& v) {
    return v.choice({"buy", "rent"}) == "buy" ? Acquisition::Buy : Acquisition::Rent;
  });
  if (auto fv = s.opt("facility")) {
    r.facility = fv->string();
    auto known = Catalog::builtin().ids("facility");
    if (std::find(known.begin(), known.end(), r.facility) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      fv->fail("a facility catalog id: " + list);
    }
  }
  if (auto lv = s.opt("layouts")) {
    Obj l = lv->obj();
    r.layouts.tp = int_list(l, "tp", 1, 1024);
    r.layouts.pp = int_list(l, "pp", 1, 1024);
    r.layouts.cp = int_list(l, "cp", 1, 1024);
    r.layouts.ep = int_list(l, "ep", 1, 4096);
    r.layouts.vp = int_list(l, "vp", 1, 64);
    r.layouts.micro_batch = int_list(l, "micro_batch", 1, 4096);
    r.layouts.zero = int_list(l, "zero", 0, 3);
    r.layouts.shard_group = int_list(l, "shard_group", 0, 1 << 24);
    r.layouts.reshard = int_list(l, "reshard", 0, 1);
    r.layouts.recompute = read_list<Recompute>(
        l, "recompute", [](const Value& v) { return v.enumerator<Recompute>(); });
    l.done();
  }
  s.done();

  auto obj = root.choice_or("objective", "cost", {"cost", "time", "energy"});
  r.objective = obj == "cost"   ? Objective::Cost
                : obj == "time" ? Objective::Time
                                : Objective::Energy;
  r.cost_basis = root.choice_or("cost_basis", "run", {"run", "purchase"}) == "run"
                     ? CostBasis::Run
                     : CostBasis::Purchase;
  if (auto v = root.opt("hardware_life"))
    r.hardware_life_years = v->quantity(Dim::Time, 86400.0, 100 * kYear) / kYear;
  r.utilization = root.number_or("utilization", 1.0, 0.01, 1.0);
  if (auto v = root.opt("prices")) r.prices = parse_prices(v->obj());
  r.finalists = static_cast<int>(root.integer_or("finalists", 4, 0, 64));
  r.prune = root.boolean_or("prune", true);
  root.allow("description");
  root.done();

  // Defaults for the options not given.
  if (r.fabrics.empty()) r.fabrics = {"rail_optimized"};
  if (r.oversubscription.empty()) r.oversubscription = {1.0};
  if (r.networks.empty()) r.networks = {Network::InfiniBand};
  if (r.acquisition.empty()) r.acquisition = {Acquisition::Buy};
  if (r.storage.empty()) r.storage = {""};
  return r;
}

PlanRequest load_plan_request(const std::string& path, const std::vector<std::string>& overrides) {
  Doc doc = Doc::load(path, overrides);
  auto dir = std::filesystem::path(path).parent_path().string();
  return parse_plan_request(doc.json(), doc.name(), dir.empty() ? "." : dir);
}

void to_json(nlohmann::json& j, const PlanRequest& r) {
  j = nlohmann::json::object();
  j["workload"] = r.workload;
  if (r.tokens > 0) j["tokens"] = r.tokens;
  auto& c = j["constraints"];
  c = nlohmann::json::object();
  if (r.deadline_s > 0) c["deadline_s"] = r.deadline_s;
  if (r.capex_budget_usd > 0) c["capex_budget_usd"] = r.capex_budget_usd;
  if (r.total_cost_budget_usd > 0) c["total_cost_budget_usd"] = r.total_cost_budget_usd;
  if (r.power_cap_W > 0) c["power_cap_W"] = r.power_cap_W;
  if (r.room.racks > 0)
    c["room"] = {{"racks", r.room.racks},
                 {"rack_power_W", r.room.rack_power_W},
                 {"rack_cooling_W", r.room.rack_cooling_W}};
  c["gpus_min"] = r.gpus_min;
  c["gpus_max"] = r.gpus_max;
  auto& s = j["search"];
  s["gpus"] = r.gpus;
  if (!r.gpu_counts.empty()) s["gpu_counts"] = r.gpu_counts;
  s["fabrics"] = r.fabrics;
  s["oversubscription"] = r.oversubscription;
  s["networks"] = nlohmann::json::array();
  for (auto n : r.networks) s["networks"].push_back(to_string(n));
  s["storage"] = r.storage;
  s["acquisition"] = nlohmann::json::array();
  for (auto a : r.acquisition) s["acquisition"].push_back(to_string(a));
  if (!r.facility.empty()) s["facility"] = r.facility;
  auto& l = s["layouts"];
  l = nlohmann::json::object();
  auto put = [&](const char* k, const std::vector<int>& v) {
    if (!v.empty()) l[k] = v;
  };
  put("tp", r.layouts.tp);
  put("pp", r.layouts.pp);
  put("cp", r.layouts.cp);
  put("ep", r.layouts.ep);
  put("vp", r.layouts.vp);
  put("micro_batch", r.layouts.micro_batch);
  put("zero", r.layouts.zero);
  put("shard_group", r.layouts.shard_group);
  put("reshard", r.layouts.reshard);
  if (!r.layouts.recompute.empty()) {
    l["recompute"] = nlohmann::json::array();
    for (auto x : r.layouts.recompute) l["recompute"].push_back(to_string(x));
  }
  j["objective"] = to_string(r.objective);
  j["cost_basis"] = to_string(r.cost_basis);
  j["hardware_life_years"] = r.hardware_life_years;
  j["utilization"] = r.utilization;
  if (r.prices) j["prices"] = to_json(*r.prices);
  j["finalists"] = r.finalists;
  j["prune"] = r.prune;
}

}  // namespace tutti
