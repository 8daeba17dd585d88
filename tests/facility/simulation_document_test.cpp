// The simulation result document (sim/facility simulation_document.hpp): real `tutti simulate
// --json` output read back through the strict reader and written again is the same document, and
// a malformed key is an InputError naming its path.
#include "tutti/facility/simulation_document.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"

using nlohmann::json;
using tutti::testing::run_tutti;

namespace {

json simulate(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"--json", "simulate"};
  all.insert(all.end(), args.begin(), args.end());
  auto r = run_tutti(all);
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  return r.json();
}

// The InputError a malformed document gives, as "key path|found".
std::string error_of(const json& j, const std::string& at = "") {
  try {
    tutti::simulation_document_from_json(j, "run.json", at);
  } catch (const tutti::InputError& e) {
    CHECK(e.file() == "run.json");
    return e.key_path();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("simulation document: real output round-trips through the strict reader") {
  // Dense with the facility's storage, MoE, a job on part of the cluster (cluster_gpus,
  // placement) with the analytic engine, and a fabric with failures and spray routing.
  const std::vector<std::vector<std::string>> runs = {
      {"-w", "models/llama3-8b.json", "-c", "topologies/h100-64gpu-fattree.json", "-p", "tp=2",
       "--set", "storage.system=superpod-good-1su", "--facility", "trials=100"},
      {"-w", "models/mixtral-8x7b.json", "-c", "topologies/h100-64gpu-fattree.json"},
      {"-w", "models/llama3-8b.json", "-c", "topologies/dgx-h100-superpod-1su.json", "-p", "tp=2",
       "--gpus", "64", "--engine", "analytic"},
      {"-w", "models/llama3-8b.json", "-c", "topologies/h100-64gpu-fattree.json", "-p", "tp=2",
       "--fail-rate", "links=0.05", "--set", "fabric.routing=spray"}};
  for (const auto& args : runs) {
    INFO(args[1] << " on " << args[3]);
    const json j = simulate(args);
    const tutti::SimulationDocument d = tutti::simulation_document_from_json(j, "run.json");
    CHECK(tutti::to_json(d).dump() == j.dump());
    // The typed fields hold the document's values.
    CHECK(d.engine == j.at("engine").get<std::string>());
    CHECK(d.gpus == j.at("gpus").get<long long>());
    CHECK(d.time_to_train_s == j.at("time_to_train_s").get<double>());
    CHECK(d.bottleneck_links.size() == j.at("bottleneck_links").size());
    REQUIRE(d.exposed("dp").has_value());
    CHECK(*d.exposed("dp") == j.at("breakdown").at("exposed_comm_s").at("dp").get<double>());
    CHECK_FALSE(d.exposed("no-such-dimension").has_value());
    const json& cost = j.at("facility").at("cost");
    CHECK(d.facility.capex_usd.has_value() == cost.at("capex_usd").is_number());
    if (d.facility.capex_usd) CHECK(*d.facility.capex_usd == cost.at("capex_usd").get<double>());
    CHECK(d.calibration_defaults.size() == j.at("calibration_defaults").size());
    // A typed field written back changes the document where it should and nowhere else.
    tutti::SimulationDocument e = d;
    e.mfu = 0.5;
    json changed = j;
    changed["mfu"] = 0.5;
    CHECK(tutti::to_json(e) == changed);
  }
}

TEST_CASE("simulation document: a malformed key is an input error naming its path") {
  const json j = simulate(
      {"-w", "models/llama3-8b.json", "-c", "topologies/h100-64gpu-fattree.json", "-p", "tp=2"});
  json bad = j;
  bad["facility"]["cost"]["capex_usd"] = "a lot";
  CHECK(error_of(bad, "architectures.1.simulation") ==
        "architectures.1.simulation.facility.cost.capex_usd");
  bad = j;
  bad.erase("iteration_time_s");
  CHECK(error_of(bad).find("iteration_time_s") != std::string::npos);
  bad = j;
  bad["bottleneck_links"][0]["utilization"] = -1;
  CHECK(error_of(bad) == "bottleneck_links.0.utilization");
  bad = j;
  bad["calibration_defaults"] = {
      {"h100", {{{"key", "k"}, {"what", "w"}, {"value", "x"}, {"basis", "b"}}}}};
  CHECK(error_of(bad) == "calibration_defaults.h100.0.value");
  bad = j;
  bad["schema_version"] = 2;
  CHECK(error_of(bad) == "schema_version");
  CHECK(error_of(json::array()) == "(top level)");  // the whole document: not an object
  // A document the reader accepts keeps null figures as not known.
  json unknown = j;
  unknown["facility"]["cost"]["capex_usd"] = nullptr;
  const tutti::SimulationDocument d = tutti::simulation_document_from_json(unknown, "run.json");
  CHECK_FALSE(d.facility.capex_usd.has_value());
  CHECK(tutti::to_json(d) == unknown);
}
