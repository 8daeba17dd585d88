// Result documents checked against their embedded output schema (result_schema.hpp).
#include "tutti/reports/result_schema.hpp"

#include <algorithm>
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
  const std::string& text = it->second;
  static thread_local std::string cached_name;
  static thread_local nlohmann::json cached;
  if (cached_name != schema_name) {
    cached = parse_json_text(text, "schemas/" + schema_name);
    cached_name = schema_name;
  }
  const auto errors = validate_schema(cached, doc);
  if (errors.empty()) return;
  // The first violation names the key and what was found against what the schema expects; up to 4
  // more follow in the message.
  const auto key = [&](const std::string& path) {
    if (at.empty()) return path.empty() ? std::string("(top level)") : path;
    return path.empty() ? at : at + "." + path;
  };
  const SchemaError& e = errors.front();
  std::string found = e.message, expected = "a document matching schemas/" + schema_name;
  const auto cut = found.find(", expected ");
  if (found.rfind("got ", 0) == 0 && cut != std::string::npos) {
    expected = found.substr(cut + 11) + " (schemas/" + schema_name + ")";
    found = found.substr(4, cut - 4);
  }
  const std::size_t shown = std::min<std::size_t>(errors.size(), 5);
  std::string more;
  for (std::size_t i = 1; i < shown; ++i)
    more += "; " + key(errors[i].path) + ": " + errors[i].message;
  if (errors.size() > shown) more += "; and " + std::to_string(errors.size() - shown) + " more";
  if (!more.empty()) expected += " [also" + more.substr(1) + "]";
  throw InputError(source, key(e.path), found, expected);
}

}  // namespace tutti::reports
