#include "tutti/core/schema.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tutti/core/error.hpp"

using namespace tutti;
using nlohmann::json;

TEST_CASE("schema: types, required, additionalProperties, ranges, enum, pattern, items, $ref") {
  json s = json::parse(R"({
    "type": "object", "additionalProperties": false, "required": ["a", "b"],
    "$defs": {"pos": {"type": "integer", "minimum": 1}},
    "properties": {
      "a": {"$ref": "#/$defs/pos"},
      "b": {"type": "string", "enum": ["x", "y"]},
      "c": {"type": "string", "pattern": "^[0-9.]+GiB$"},
      "d": {"type": "array", "items": {"type": "number", "maximum": 2}, "minItems": 1},
      "e": {"oneOf": [{"type": "integer"}, {"type": "string"}]}
    }})");
  CHECK(validate_schema(s, json::parse(R"({"a": 2, "b": "x", "c": "80GiB", "d": [1, 2], "e": 3})"))
            .empty());
  auto errs =
      validate_schema(s, json::parse(R"({"a": 0, "c": "80GB", "d": [3], "e": 1.5, "zz": 1})"));
  REQUIRE(errs.size() == 6);
  std::string all = format_schema_errors(errs);
  CHECK(all.find("a: got 0") != std::string::npos);
  CHECK(all.find("b: missing required key") != std::string::npos);
  CHECK(all.find("zz: unknown key") != std::string::npos);
  CHECK(all.find("d.0:") != std::string::npos);
  CHECK(all.find("c: got \"80GB\"") != std::string::npos);
  CHECK(all.find("e: got 1.5") != std::string::npos);
  CHECK(validate_schema(s, json::parse(R"({"a": "2", "b": "x"})")).size() == 1);
}

TEST_CASE("schema: unsupported keywords are a bug, not silently accepted") {
  CHECK_THROWS_AS(validate_schema(json::parse(R"({"propertyNames": {}})"), json::object()),
                  InternalError);
  CHECK_THROWS_AS(validate_schema(json::parse(R"({"$ref": "#/$defs/none"})"), json::object()),
                  InternalError);
}
