#include "tutti/core/schema.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/json_text.hpp"

namespace tutti {

using Json = nlohmann::json;

namespace {

const char* kind_of(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::null:
      return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    default:
      return "value";
  }
}

bool type_matches(const Json& j, const std::string& t) {
  if (t == "object") return j.is_object();
  if (t == "array") return j.is_array();
  if (t == "string") return j.is_string();
  if (t == "boolean") return j.is_boolean();
  if (t == "null") return j.is_null();
  if (t == "number") return j.is_number();
  if (t == "integer") {
    if (j.is_number_integer()) return true;
    if (j.is_number_float()) {
      double d = j.get<double>();
      return std::floor(d) == d && std::isfinite(d);
    }
    return false;
  }
  throw InternalError("schema: unknown type \"" + t + "\"");
}

std::string join(const std::string& base, const std::string& key) {
  return base.empty() ? key : base + "." + key;
}

class Validator {
 public:
  explicit Validator(const Json& root) : root_(root) {}

  void check(const Json& s, const Json& d, const std::string& path, std::vector<SchemaError>& out) {
    if (s.is_boolean()) {
      if (!s.get<bool>()) out.push_back({path, "no value is allowed here"});
      return;
    }
    if (!s.is_object()) throw InternalError("schema: a schema must be an object or a boolean");
    for (auto it = s.begin(); it != s.end(); ++it) {
      const std::string& k = it.key();
      const Json& v = it.value();
      if (k == "$schema" || k == "$id" || k == "title" || k == "description" || k == "default" ||
          k == "examples" || k == "$comment" || k == "$defs" || k == "definitions") {
        continue;
      } else if (k == "$ref") {
        check(resolve(v.get<std::string>()), d, path, out);
      } else if (k == "type") {
        bool ok = false;
        std::string names;
        if (v.is_string()) {
          ok = type_matches(d, v.get<std::string>());
          names = v.get<std::string>();
        } else {
          for (const auto& t : v) {
            ok = ok || type_matches(d, t.get<std::string>());
            names += (names.empty() ? "" : " or ") + t.get<std::string>();
          }
        }
        if (!ok) {
          out.push_back({path, std::string("got ") + kind_of(d) + ", expected " + names});
          return;  // further keywords would only repeat the type error
        }
      } else if (k == "properties") {
        if (!d.is_object()) continue;
        for (auto p = v.begin(); p != v.end(); ++p) {
          auto f = d.find(p.key());
          if (f != d.end()) check(p.value(), *f, join(path, p.key()), out);
        }
      } else if (k == "required") {
        if (!d.is_object()) continue;
        for (const auto& r : v)
          if (!d.contains(r.get<std::string>()))
            out.push_back({join(path, r.get<std::string>()), "missing required key"});
      } else if (k == "additionalProperties") {
        if (!d.is_object()) continue;
        const Json* props = s.contains("properties") ? &s["properties"] : nullptr;
        for (auto p = d.begin(); p != d.end(); ++p) {
          if (props && props->contains(p.key())) continue;
          if (v.is_boolean() && !v.get<bool>())
            out.push_back({join(path, p.key()), "unknown key \"" + p.key() + "\""});
          else
            check(v, p.value(), join(path, p.key()), out);
        }
      } else if (k == "enum") {
        bool ok = false;
        for (const auto& e : v) ok = ok || e == d;
        if (!ok) out.push_back({path, "got " + describe_json(d) + ", expected one of " + v.dump()});
      } else if (k == "const") {
        if (v != d) out.push_back({path, "got " + describe_json(d) + ", expected " + v.dump()});
      } else if (k == "items") {
        if (!d.is_array()) continue;
        for (std::size_t i = 0; i < d.size(); ++i)
          check(v, d[i], join(path, std::to_string(i)), out);
      } else if (k == "minItems") {
        if (d.is_array() && d.size() < v.get<std::size_t>())
          out.push_back({path, "expected at least " + v.dump() + " items"});
      } else if (k == "maxItems") {
        if (d.is_array() && d.size() > v.get<std::size_t>())
          out.push_back({path, "expected at most " + v.dump() + " items"});
      } else if (k == "minLength") {
        if (d.is_string() && d.get<std::string>().size() < v.get<std::size_t>())
          out.push_back({path, "expected at least " + v.dump() + " characters"});
      } else if (k == "minimum" || k == "maximum" || k == "exclusiveMinimum" ||
                 k == "exclusiveMaximum") {
        if (!d.is_number()) continue;
        double x = d.get<double>(), b = v.get<double>();
        bool ok = k == "minimum"            ? x >= b
                  : k == "maximum"          ? x <= b
                  : k == "exclusiveMinimum" ? x > b
                                            : x < b;
        if (!ok) out.push_back({path, "got " + d.dump() + ", expected " + k + " " + v.dump()});
      } else if (k == "pattern") {
        if (!d.is_string()) continue;
        std::regex re(v.get<std::string>(), std::regex::ECMAScript);
        if (!std::regex_search(d.get<std::string>(), re))
          out.push_back(
              {path, "got " + describe_json(d) + ", expected a string matching " + v.dump()});
      } else if (k == "oneOf" || k == "anyOf") {
        int matches = 0;
        for (const auto& branch : v) {
          std::vector<SchemaError> tmp;
          check(branch, d, path, tmp);
          if (tmp.empty()) ++matches;
        }
        if (k == "oneOf" && matches != 1)
          out.push_back({path, "got " + describe_json(d) + ", expected exactly one of " +
                                   std::to_string(v.size()) + " alternatives to match (" +
                                   std::to_string(matches) + " did)"});
        if (k == "anyOf" && matches == 0)
          out.push_back({path, "got " + describe_json(d) + ", expected one of " +
                                   std::to_string(v.size()) + " alternatives to match"});
      } else if (k == "allOf") {
        for (const auto& branch : v) check(branch, d, path, out);
      } else {
        throw InternalError("schema: unsupported keyword \"" + k + "\"");
      }
    }
  }

 private:
  const Json& resolve(const std::string& ref) {
    for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
      std::string p(prefix);
      if (ref.rfind(p, 0) == 0) {
        const char* section = p == "#/$defs/" ? "$defs" : "definitions";
        auto name = ref.substr(p.size());
        if (root_.contains(section) && root_[section].contains(name)) return root_[section][name];
      }
    }
    throw InternalError("schema: unresolved $ref \"" + ref + "\"");
  }
  const Json& root_;
};

}  // namespace

std::vector<SchemaError> validate_schema(const Json& schema, const Json& doc) {
  std::vector<SchemaError> out;
  Validator(schema).check(schema, doc, "", out);
  return out;
}

Json load_schema(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open schema file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_json_text(ss.str(), path);
}

std::string format_schema_errors(const std::vector<SchemaError>& errors) {
  std::string s;
  for (const auto& e : errors)
    s += (e.path.empty() ? "(top level)" : e.path) + ": " + e.message + "\n";
  return s;
}

void require_schema(const Json& schema, const Json& doc, const std::string& schema_name,
                    const std::string& source, const std::string& at) {
  const auto errors = validate_schema(schema, doc);
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

Json parse_embedded_schema(const std::vector<std::pair<std::string, std::string>>& files,
                           const std::string& name) {
  const std::string* text = nullptr;
  for (const auto& [file, contents] : files) {
    if (file != name) continue;
    if (text) throw InternalError("schemas/" + name + " is embedded more than once");
    text = &contents;
  }
  if (!text) throw InternalError("schemas/" + name + " is not embedded");
  return parse_json_text(*text, "schemas/" + name);
}

}  // namespace tutti
