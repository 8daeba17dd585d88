// The simulation result document (sim/facility simulation_document.hpp): real `tutti simulate
// --json` output read back through the strict reader and written again is the same document, and
// a malformed key is an InputError naming its path.
#include "tutti/facility/simulation_document.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../support/result_doc.hpp"

using nlohmann::json;
using tutti::testing::check_corruptions;
using tutti::testing::check_round_trip;
using tutti::testing::input_error_path;
using tutti::testing::KeyMatch;
using tutti::testing::run_json;

namespace {

json simulate(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"--json", "simulate"};
  all.insert(all.end(), args.begin(), args.end());
  return run_json(all);
}

const auto read_document = [](const json& j, const std::string& source, const std::string& at) {
  return tutti::simulation_document_from_json(j, source, at);
};

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
    const tutti::SimulationDocument d = check_round_trip(read_document, j, "run.json");
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
  check_corruptions(read_document, j,
                    {{"/facility/cost/capex_usd", "a lot", "facility.cost.capex_usd"}}, "run.json",
                    "architectures.1.simulation");
  check_corruptions(
      read_document, j,
      {{"/iteration_time_s", std::nullopt, "iteration_time_s", KeyMatch::contains},
       {"/bottleneck_links/0/utilization", -1, "bottleneck_links.0.utilization"},
       {"/calibration_defaults",
        json{{"h100", {{{"key", "k"}, {"what", "w"}, {"value", "x"}, {"basis", "b"}}}}},
        "calibration_defaults.h100.0.value"},
       {"/schema_version", 2, "schema_version"}},
      "run.json");
  // The whole document: not an object.
  CHECK(input_error_path(read_document, json::array(), "run.json") == "(top level)");
  // A document the reader accepts keeps null figures as not known.
  json unknown = j;
  unknown["facility"]["cost"]["capex_usd"] = nullptr;
  const tutti::SimulationDocument d = tutti::simulation_document_from_json(unknown, "run.json");
  CHECK_FALSE(d.facility.capex_usd.has_value());
  CHECK(tutti::to_json(d) == unknown);
}
