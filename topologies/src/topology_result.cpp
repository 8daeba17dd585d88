// The topology result read back (topology_result.hpp).
#include "tutti/topologies/topology_result.hpp"

#include "tutti/core/schema.hpp"

namespace tutti {
namespace {
using nlohmann::json;

std::optional<double> opt_number(const json& j, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  return j.at(key).get<double>();
}

}  // namespace

const json& topology_result_schema() {
  static const json schema =
      parse_embedded_schema(embedded_topology_result_schema(), "topology_result.schema.json");
  return schema;
}

TopologyResult topology_result_from_json(const json& j, const std::string& source,
                                         const std::string& at) {
  require_schema(topology_result_schema(), j, "topology_result.schema.json", source, at);
  TopologyResult t;
  t.schema_version = j.at("schema_version").get<int>();
  t.name = j.at("name").get<std::string>();
  t.gpus = j.at("gpus").get<long long>();
  t.nodes = j.at("nodes").get<long long>();
  t.network_capex_usd = j.at("network_capex_usd").get<double>();
  t.network_power_W = j.at("network_power_W").get<double>();
  for (const json& e : j.at("bom")) {
    TopologyBomLine b;
    b.category = e.at("category").get<std::string>();
    b.role = e.at("role").get<std::string>();
    b.id = e.at("id").get<std::string>();
    b.count = e.at("count").get<long long>();
    b.unit_price_usd = opt_number(e, "unit_price_usd");
    b.unit_power_W = opt_number(e, "unit_power_W");
    b.price_usd = e.at("price_usd").get<double>();
    b.power_W = e.at("power_W").get<double>();
    b.network = e.at("network").get<bool>();
    if (e.contains("price_estimate")) b.price_estimate = e.at("price_estimate").get<bool>();
    t.bom.push_back(std::move(b));
  }
  t.document = j;
  return t;
}

json to_json(const TopologyResult& t) {
  json j = t.document.is_object() ? t.document : json::object();
  j["schema_version"] = t.schema_version;
  j["name"] = t.name;
  j["gpus"] = t.gpus;
  j["nodes"] = t.nodes;
  j["network_capex_usd"] = t.network_capex_usd;
  j["network_power_W"] = t.network_power_W;
  const json old = j.contains("bom") && j.at("bom").is_array() ? j.at("bom") : json::array();
  json bom = json::array();
  for (std::size_t i = 0; i < t.bom.size(); ++i) {
    const TopologyBomLine& b = t.bom[i];
    json e = i < old.size() && old[i].is_object() ? old[i] : json::object();
    e["category"] = b.category;
    e["role"] = b.role;
    e["id"] = b.id;
    e["count"] = b.count;
    if (b.unit_price_usd) e["unit_price_usd"] = *b.unit_price_usd;
    if (b.unit_power_W) e["unit_power_W"] = *b.unit_power_W;
    e["price_usd"] = b.price_usd;
    e["power_W"] = b.power_W;
    e["network"] = b.network;
    if (b.price_estimate) e["price_estimate"] = *b.price_estimate;
    bom.push_back(std::move(e));
  }
  j["bom"] = bom;
  return j;
}

}  // namespace tutti
