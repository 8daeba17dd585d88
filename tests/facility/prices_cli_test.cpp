// Your own prices, rent vs buy on one basis, energy both ways, --tokens/--global-batch: end to end
// through `tutti simulate` and `tutti plan`.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "../support/run.hpp"

using namespace tutti::testing;

namespace {

const std::vector<std::string> kSim = {"--json",     "simulate",
                                       "-w",         "models/llama3-8b.json",
                                       "-c",         "topologies/h100-64gpu-fattree.json",
                                       "-p",         "tp=2",
                                       "--engine",   "analytic",
                                       "--set",      "storage.system=superpod-good-1su",
                                       "--facility", "trials=0"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// kSim with its --facility value replaced.
std::vector<std::string> fac(const std::string& value) {
  std::vector<std::string> a = kSim;
  a.back() = value;
  return a;
}

std::string write(const std::string& name, const std::string& text) {
  std::string path = temp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE(
    "prices cli: simulate --prices replaces the catalog's prices and every figure says its "
    "origin") {
  auto base = run_tutti(kSim);
  REQUIRE_MESSAGE(base.rc == 0, base.err);
  auto b = base.json()["facility"]["cost"];
  CHECK(b["origins"]["servers"] == "estimate");
  CHECK(b["origins"]["electricity"] == "catalog");

  auto quoted = run_tutti(with(kSim, {"--prices", "topologies/prices/example-quote.json"}));
  REQUIRE_MESSAGE(quoted.rc == 0, quoted.err);
  auto j = quoted.json();
  auto q = j["facility"]["cost"];
  CHECK(q["origins"]["servers"] == "user");
  CHECK(q["origins"]["electricity"] == "user");
  CHECK(q["origins"]["cloud"] == "user");
  CHECK(q["origins"]["facility"] == "user");
  CHECK(q["origins"]["rack_space"] == "user");
  CHECK(q["capex_breakdown_usd"]["servers"].get<double>() == doctest::Approx(8 * 265000.0));
  CHECK(q["capex_usd"].get<double>() < b["capex_usd"].get<double>());
  CHECK(q["cloud_usd_per_gpu_hour"].get<double>() == doctest::Approx(2.5));
  CHECK(q["rack_space_usd_per_year"].get<double>() > 0);
  CHECK(j["prices"]["file"] == "topologies/prices/example-quote.json");

  // The table says it too.
  auto text = run_tutti(with(std::vector<std::string>(kSim.begin() + 1, kSim.end()),
                             {"--prices", "topologies/prices/example-quote.json"}));
  REQUIRE_MESSAGE(text.rc == 0, text.err);
  CHECK(text.out.find("servers $2.12M [user]") != std::string::npos);
  CHECK(text.out.find("[catalog]") == std::string::npos);  // nothing left from the catalog but...
  CHECK(text.out.find("network $") != std::string::npos);
}

TEST_CASE("prices cli: a bad prices file exits 2 naming the file and the key path") {
  std::string bad = write("bad-prices.json", R"({"gpus": {"h100-sxm-80gb": {"price": "24000"}}})");
  auto r = run_tutti(with(kSim, {"--prices", bad}));
  CHECK(r.rc == 2);
  CHECK(r.err.find("bad-prices.json") != std::string::npos);
  CHECK(r.err.find("gpus.h100-sxm-80gb.price") != std::string::npos);
  auto missing = run_tutti(with(kSim, {"--prices", "no/such/prices.json"}));
  CHECK(missing.rc == 2);
  CHECK(missing.err.find("no/such/prices.json") != std::string::npos);
}

TEST_CASE("prices cli: a GPU without a rental price says 'no price', never $0") {
  auto r =
      run_tutti({"simulate", "-w", "models/llama3-8b.json", "-c", "topologies/l40s-8x-pcie.json",
                 "-p", "tp=4", "--engine", "analytic", "--facility", "trials=0"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  CHECK(r.out.find("rented: no price") != std::string::npos);
  CHECK(r.out.find("rented no price") != std::string::npos);
  auto j = run_tutti({"--json", "simulate", "-w", "models/llama3-8b.json", "-c",
                      "topologies/l40s-8x-pcie.json", "-p", "tp=4", "--engine", "analytic",
                      "--facility", "trials=0"});
  REQUIRE_MESSAGE(j.rc == 0, j.err);
  auto c = j.json()["facility"]["cost"];
  CHECK(c["origins"]["cloud"] == "no price");
  CHECK(c["rental_run_usd"].is_null());
}

TEST_CASE("prices cli: owned cost of the run follows the utilisation, energy both ways and CO2") {
  auto full = run_tutti(kSim);
  auto half = run_tutti(fac("trials=0,utilization=0.5"));
  REQUIRE(full.rc == 0);
  REQUIRE(half.rc == 0);
  auto f = full.json()["facility"], h = half.json()["facility"];
  const double energy_usd = f["cost"]["energy_cost_per_run_usd"].get<double>();
  // Fixed costs double at half utilisation; electricity for the run does not.
  CHECK(h["cost"]["owned_run_usd"].get<double>() - energy_usd ==
        doctest::Approx(2 * (f["cost"]["owned_run_usd"].get<double>() - energy_usd)).epsilon(1e-9));

  auto e = f["energy"];
  CHECK(e["physical_facility_J"].get<double>() ==
        doctest::Approx(f["energy_per_run_J"].get<double>()));
  // The model-card convention (every GPU at TDP all along) reads higher than the timeline here.
  CHECK(e["model_card_J"].get<double>() > 0);
  const double pue = e["physical_facility_J"].get<double>() / e["physical_it_J"].get<double>();
  CHECK(e["model_card_J"].get<double>() ==
        doctest::Approx(e["gpu_hours"].get<double>() * 3600 * 700 * pue));
  CHECK(e["physical_J_per_token"].get<double>() > 0);
  CHECK(e["grid"] == "world");
  CHECK(e["physical_co2_kg"].get<double>() ==
        doctest::Approx(e["physical_facility_J"].get<double>() / 3.6e6 * 0.48));
  auto us = run_tutti(fac("trials=0,grid=us"));
  REQUIRE(us.rc == 0);
  CHECK(us.json()["facility"]["energy"]["kg_co2_per_kWh"].get<double>() == doctest::Approx(0.39));
  auto own = run_tutti(fac("trials=0,carbon=0.1"));
  REQUIRE(own.rc == 0);
  CHECK(own.json()["facility"]["energy"]["grid"] == "user");
  auto bad = run_tutti(fac("grid=mars"));
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("world") != std::string::npos);
}

TEST_CASE("prices cli: --tokens and --global-batch override the workload and show as overrides") {
  auto base = run_tutti(kSim);
  auto over = run_tutti(with(kSim, {"--tokens", "1B", "--global-batch", "256"}));
  REQUIRE_MESSAGE(over.rc == 0, over.err);
  auto b = base.json(), j = over.json();
  CHECK(j["overrides"]["tokens_to_train"]["value"].get<double>() == 1e9);
  CHECK(j["overrides"]["global_batch"]["value"] == 256);
  CHECK(j["overrides"]["global_batch"]["workload"] == 512);
  // 1B tokens at 256 x 8192 tokens per step.
  CHECK(j["iterations"].get<double>() == std::ceil(1e9 / (256.0 * 8192)));
  CHECK(j["iteration_time_s"].get<double>() < b["iteration_time_s"].get<double>());
  auto text =
      run_tutti(with(std::vector<std::string>(kSim.begin() + 1, kSim.end()), {"--tokens", "1B"}));
  CHECK(text.out.find("override   tokens to train 1e+09") != std::string::npos);
  auto bad = run_tutti(with(kSim, {"--tokens", "lots"}));
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("--tokens") != std::string::npos);
}

namespace {

// One configuration only: 8 DGX H100 on a rail-optimized InfiniBand fabric, one layout.
std::string one_config_request(const std::string& extra) {
  return R"({"workload": ")" + src("models/llama3-8b.json") + R"(", "tokens": "20B",
    "search": {"gpus": ["h100-sxm-80gb"], "gpu_counts": [64], "networks": ["infiniband"],
               "storage": ["superpod-good-1su"], "acquisition": ["buy", "rent"],
               "layouts": {"tp": [2], "pp": [1], "cp": [1], "vp": [1], "micro_batch": [1], "zero": [1], "shard_group": [0],
                           "recompute": ["none"]}},
    "finalists": 0)" +
         extra + "}";
}

// The same cluster as the plan builds (make_cluster: "8xdgx-h100").
const char* kPlanCluster = R"({"name": "8xdgx-h100", "node": "dgx-h100", "nodes": 8,
  "fabric": {"kind": "rail_optimized", "oversubscription": 1, "nodes_per_su": 32},
  "transport": {"kind": "infiniband"}, "storage": {"system": "superpod-good-1su", "count": 1}})";

}  // namespace

TEST_CASE(
    "prices cli: rent vs buy on one basis: plan and simulate give the same owned and rental "
    "figures") {
  auto req = write("one.json", one_config_request(""));
  auto plan = run_tutti({"plan", req, "--json"});
  REQUIRE_MESSAGE(plan.rc == 0, plan.err);
  auto p = plan.json();
  CHECK(p["request"]["cost_basis"] == "run");
  // Find the bought and the rented configuration (the same layout on the same hardware).
  nlohmann::json buy, rent;
  for (const auto& e : p["pareto"]) (e["hardware"]["acquisition"] == "buy" ? buy : rent) = e;
  if (buy.is_null() || rent.is_null())
    for (const auto& e : {p["recommended"]})
      (e["hardware"]["acquisition"] == "buy" ? buy : rent) = e;
  REQUIRE(!buy.is_null());
  const std::string layout =
      buy["layout"]["text"].is_string() ? buy["layout"]["text"].get<std::string>() : "";
  auto cluster = write("plan-cluster.json", kPlanCluster);
  auto sim = run_tutti({"--json", "simulate", "-w", "models/llama3-8b.json", "-c", cluster, "-p",
                        "tp=2,pp=1,cp=1,vp=1,mb=1,zero=1", "--engine", "analytic", "--tokens",
                        "20B", "--facility", "trials=0"});
  REQUIRE_MESSAGE(sim.rc == 0, sim.err);
  auto s = sim.json();
  auto cost = s["facility"]["cost"];
  const double t_plan = buy["time_to_train_s"].get<double>();
  const double t_sim = s["facility"]["effective_time_to_train_s"].get<double>();
  CAPTURE(t_plan);
  CAPTURE(t_sim);
  // Same purchase, same owned rate and the same rental rate; run figures scale with the time.
  CHECK(buy["purchase_usd"].get<double>() ==
        doctest::Approx(cost["purchase_usd"].get<double>()).epsilon(1e-9));
  CHECK(buy["owned_run_usd"].get<double>() / t_plan ==
        doctest::Approx(cost["owned_run_usd"].get<double>() / t_sim).epsilon(0.02));
  CHECK(buy["rental_usd"].get<double>() / t_plan ==
        doctest::Approx(cost["rental_run_usd"].get<double>() / t_sim).epsilon(1e-6));
  CHECK(buy["breakeven_utilization"].get<double>() ==
        doctest::Approx(cost["breakeven_utilization"].get<double>()).epsilon(0.02));
  CHECK(t_plan == doctest::Approx(t_sim).epsilon(0.05));
  // The ranked cost is the owned cost of the run, not the whole purchase.
  CHECK(buy["total_cost_usd"].get<double>() == doctest::Approx(buy["owned_run_usd"].get<double>()));
  CHECK(buy["total_cost_usd"].get<double>() < buy["purchase_usd"].get<double>());

  // On the purchase basis the bought configuration carries its whole purchase. (With renting also
  // searched, the purchase basis puts only the rented one on the frontier, so search buying alone.)
  std::string buy_only = one_config_request("");
  buy_only.replace(buy_only.find(R"("buy", "rent")"), std::string(R"("buy", "rent")").size(),
                   R"("buy")");
  auto whole =
      run_tutti({"plan", write("buy-only.json", buy_only), "--json", "--cost-basis", "purchase"});
  REQUIRE_MESSAGE(whole.rc == 0, whole.err);
  const auto wj = whole.json();  // held: ranging over a member of a temporary dangles
  REQUIRE(wj["recommended"]["hardware"]["acquisition"] == "buy");
  CHECK(wj["recommended"]["total_cost_usd"].get<double>() >
        wj["recommended"]["purchase_usd"].get<double>());
  for (const auto& e : wj["pareto"])
    CHECK(e["total_cost_usd"].get<double>() > e["purchase_usd"].get<double>());
  auto text = run_tutti({"plan", req});
  CHECK(text.out.find("cost_basis=run (default)") != std::string::npos);
}

TEST_CASE(
    "prices cli: a prices section changes the plan, a GPU without a rental price is not 'over "
    "budget'") {
  auto base = run_tutti({"plan", write("b.json", one_config_request("")), "--json"});
  auto cheap = run_tutti(
      {"plan",
       write("c.json", one_config_request(R"(, "prices": {"nodes": {"dgx-h100": "$100k"}})")),
       "--json"});
  REQUIRE_MESSAGE(base.rc == 0, base.err);
  REQUIRE_MESSAGE(cheap.rc == 0, cheap.err);
  auto b = base.json(), c = cheap.json();
  CHECK(c["request"]["prices"]["nodes_usd"]["dgx-h100"] == 100000.0);
  auto servers = [](const nlohmann::json& j) {
    return j["recommended"]["facility"]["cost"]["capex_breakdown_usd"]["servers"].get<double>();
  };
  if (b["recommended"]["hardware"]["acquisition"] == "buy" &&
      c["recommended"]["hardware"]["acquisition"] == "buy")
    CHECK(servers(c) == doctest::Approx(8 * 100000.0));
  // Cheap servers: buying wins where renting did, or buying got cheaper.
  CHECK(c["recommended"]["total_cost_usd"].get<double>() <=
        b["recommended"]["total_cost_usd"].get<double>());
  CHECK(c["recommended"]["hardware"]["acquisition"] == "buy");

  // L40S has no rental price: renting it is "no_price", never a budget violation.
  auto l40s = R"({"workload": ")" + src("models/llama3-8b.json") + R"(", "tokens": "1B",
    "search": {"gpus": ["l40s"], "gpu_counts": [8], "acquisition": ["rent"],
               "layouts": {"tp": [1, 2, 4, 8], "pp": [1], "cp": [1], "vp": [1], "micro_batch": [1]}},
    "finalists": 0})";
  auto r = run_tutti({"plan", write("l40s.json", l40s), "--json"});
  CHECK(r.rc == 1);
  auto j = r.json();
  CHECK(j["violations"]["no_price"].get<long long>() > 0);
  CHECK(j["violations"]["total_cost_budget"] == 0);
}
