#pragma once
// Result documents read back by the reports (`tutti report plan`, `tutti report render`) are
// checked against their output schema (schemas/<kind>_result.schema.json, embedded at build time)
// before anything is rendered, so a malformed result is an input error naming the key path, never a
// half-rendered report with n/a cells. The schemas type every key the reports read; writers may
// add keys.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tutti::reports {

/// schemas/*_result.schema.json as (file name, text), embedded at build time
/// (cmake/embed_files.cmake).
const std::vector<std::pair<std::string, std::string>>& embedded_result_schemas();

/// Checks `doc` against schemas/`schema_name`. Throws InputError naming `source` (the file), the
/// first violations' key paths, what was found and what the schema expects. `at` is where `doc`
/// sits in its file ("architectures.1.simulation"; empty: the whole file), prefixed to every key
/// path. O(document size).
void check_result(const nlohmann::json& doc, const std::string& schema_name,
                  const std::string& source, const std::string& at = "");

}  // namespace tutti::reports
