// Result documents checked against their embedded output schema (result_schema.hpp).
#include "tutti/reports/result_schema.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "tutti/core/error.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/core/schema.hpp"

namespace tutti::reports {

void check_result(const nlohmann::json& doc, const std::string& schema_name,
                  const std::string& source, const std::string& at) {
  const auto& all = embedded_result_schemas();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const auto& f) { return f.first == schema_name; });
  if (it == all.end()) throw InternalError("result schema " + schema_name + " is not embedded");
  // Each schema parsed once per thread (a comparison alternates simulation and topology).
  static thread_local std::map<std::string, nlohmann::json> parsed;
  auto p = parsed.find(schema_name);
  if (p == parsed.end())
    p = parsed.emplace(schema_name, parse_json_text(it->second, "schemas/" + schema_name)).first;
  require_schema(p->second, doc, schema_name, source, at);
}

}  // namespace tutti::reports
