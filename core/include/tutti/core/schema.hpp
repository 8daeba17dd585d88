#pragma once
// A small JSON Schema validator (draft 2020-12 subset) used to keep every input kind's schema
// (schemas/<kind>.schema.json) in agreement with its strict parser (tests do that), and available
// to tools that want to check a file before loading it.
//
// Supported keywords: type (string or array of: object, array, string, number, integer, boolean,
// null), properties, required, additionalProperties (false or a schema), enum, const, items
// (a schema), minItems, maxItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// minLength, pattern (ECMAScript regex, searched as JSON Schema specifies), oneOf, anyOf, allOf,
// $ref to "#/$defs/NAME" or "#/definitions/NAME" within the same schema. Annotations ($schema,
// $id, title, description, default, examples, $comment, $defs, definitions) are ignored.
// Any other keyword is an InternalError (a schema using an unsupported keyword is a bug: it would
// silently accept input).
//
// Complexity: O(size of the document x depth of the schema); oneOf/anyOf try each branch.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tutti {

/// One violation: the key path in the document ("model.layers", "" for the top level) and why.
struct SchemaError {
  std::string path;
  std::string message;
};

/// Validates `doc` against `schema`; returns every violation found (empty when valid).
/// Throws InternalError for an unsupported keyword or a dangling $ref in the schema.
std::vector<SchemaError> validate_schema(const nlohmann::json& schema, const nlohmann::json& doc);

/// Reads a schema file (InputError if it cannot be read or parsed).
nlohmann::json load_schema(const std::string& path);

/// "path: message" lines, one per error.
std::string format_schema_errors(const std::vector<SchemaError>& errors);

/// Checks `doc` against `schema` (schemas/`schema_name`) and throws InputError naming `source`
/// (the file), the first violation's key path, what was found and what the schema expects, with
/// up to 4 more violations; `at` (where `doc` sits in its file, e.g. "architectures.1.simulation";
/// empty: the whole file) prefixes every key path. The one reader-side schema check: result
/// readers (the typed result readers of each library) and measurement readers (sim/calibrate) use
/// it.
void require_schema(const nlohmann::json& schema, const nlohmann::json& doc,
                    const std::string& schema_name, const std::string& source,
                    const std::string& at = "");

/// Parses the schema `name` (e.g. "plan_result.schema.json") from `files`, the (file name, text)
/// pairs a library embeds at build time (cmake tutti_embed_files). The one way a library reads its
/// embedded schemas: a reader keeps the result in a function-local static, so each schema is parsed
/// once. Throws InternalError when `name` is not among `files` exactly once (a build bug).
nlohmann::json parse_embedded_schema(const std::vector<std::pair<std::string, std::string>>& files,
                                     const std::string& name);

}  // namespace tutti
