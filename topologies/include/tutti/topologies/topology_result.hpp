#pragma once
// The topology result read back: the document `tutti topo --json` prints (to_json(Cluster),
// cluster.hpp) and every `topology` of a `tutti report compare` document, typed for its readers
// (schemas/topology_result.schema.json).
//
//   TopologyResult t = topology_result_from_json(j, "topo.json");  // checked, then typed
//   t.network_capex_usd, t.bom[i].price_usd, ...
//   to_json(t) == j                                                 // the keys not typed ride
//   along
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tutti {

/// One line of the bill of materials: one part in one role ("leaf", "node side", "compute").
struct TopologyBomLine {
  std::string category, role, id;  ///< "switch", "leaf", "quantum-2-qm9700"
  long long count = 0;
  std::optional<double> unit_price_usd, unit_power_W;
  double price_usd = 0, power_W = 0;   ///< count x unit
  bool network = true;                 ///< false: the nodes themselves (compute capex)
  std::optional<bool> price_estimate;  ///< the catalog marks the price an estimate
};

/// The keys of a topology result its readers use; `document` keeps the whole document.
struct TopologyResult {
  int schema_version = 1;
  std::string name;
  long long gpus = 0, nodes = 0;
  double network_capex_usd = 0, network_power_W = 0;
  std::vector<TopologyBomLine> bom;
  nlohmann::json document;  ///< The whole document (object), keys not typed above included.
};

/// The strict reader: checks `j` against schemas/topology_result.schema.json (embedded) and fills
/// the struct. Throws InputError naming `source` (the file; "" for none) and the key path prefixed
/// with `at` ("architectures.1.topology"), what was found and what was expected.
TopologyResult topology_result_from_json(const nlohmann::json& j, const std::string& source,
                                         const std::string& at = "");

/// `document` with the typed fields written over it (BOM lines keep their untyped keys, such as
/// price_origin). to_json(topology_result_from_json(j, ...)) == j.
nlohmann::json to_json(const TopologyResult& t);

/// schemas/topology_result.schema.json, parsed (embedded at build time).
const nlohmann::json& topology_result_schema();
/// The embedded schema file as (file name, text) (cmake/embed_files.cmake).
const std::vector<std::pair<std::string, std::string>>& embedded_topology_result_schema();

}  // namespace tutti
