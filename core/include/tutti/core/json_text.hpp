#pragma once
// The one strict JSON text parser behind every input file (workload, cluster, catalog, calibration,
// plan request, measurements, validation cases, result documents read by reports) and behind
// `--set` values. On top of RFC 8259 it enforces:
//   * nesting depth <= kMaxJsonDepth (objects and arrays), so no input can exhaust the stack of
//     anything that walks the document later (error messages, schema checks, writers);
//   * each key at most once per object: a duplicate names the key path and both locations;
//   * every number within the range of a double: `1e999` is an input error naming the key.
// Parsing is iterative (nlohmann's SAX interface feeding a builder with an explicit stack).
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "tutti/core/error.hpp"
#include "tutti/core/limits.hpp"  // kMaxJsonDepth

namespace tutti {

/// The ways JSON text can be refused; every one is an input error (exit 2).
enum class JsonTextFault { Syntax, Depth, DuplicateKey, NumberRange };

/// InputError for JSON text, with the kind of fault (so `--set` can fall back to a bare string
/// on Syntax only). The message reads `NAME: line L, column C: ...` or, when a key path is
/// known, `NAME: KEY.PATH: got ..., expected ...` with the line and column in `found`.
class JsonTextError : public InputError {
 public:
  JsonTextError(JsonTextFault fault, std::string file, std::string key_path, std::string found,
                std::string expected);
  JsonTextError(JsonTextFault fault, std::string message);
  JsonTextFault fault() const { return fault_; }

 private:
  JsonTextFault fault_;
};

/// Parses `text` under the rules above. `name` (a file name, "--set", "<string>") starts every
/// message. Comments are not JSON and are refused. Throws JsonTextError.
nlohmann::json parse_json_text(std::string_view text, const std::string& name);

/// The one writer of every JSON document tutti outputs (stdout, -o files, report data): throws
/// InternalError naming the key path when any number is NaN or infinite (a result that is not a
/// number is a bug upstream, never something to print as `null`), else j.dump(indent).
std::string write_json_text(const nlohmann::json& j, int indent = 2);

/// Key path of the first NaN or infinite number in `j` ("breakdown.compute_s"), or "" when every
/// number is finite. Iterative (no recursion).
std::string first_non_finite(const nlohmann::json& j);

/// 1-based line and column of byte `offset` in `text` ("line 3, column 7").
std::string text_location(std::string_view text, std::size_t offset);

}  // namespace tutti
