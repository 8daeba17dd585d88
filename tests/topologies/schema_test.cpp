// schemas/cluster.schema.json and schemas/catalog.schema.json agree with the strict parsers:
// every shipped file validates and parses; mutations (an unknown key in each object, each key
// removed, a wrong-typed or wrong-unit value at each leaf) are rejected by the parser whenever
// the schema rejects them, and structural mutations are rejected by both.
#include "tutti/core/schema.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;
using nlohmann::json;
using tutti::testing::src;

namespace {

std::vector<std::string> json_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(src(dir)))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

json read(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

void pointers(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& objects,
              std::vector<json::json_pointer>& leaves) {
  if (j.is_object()) {
    objects.push_back(at);
    for (auto it = j.begin(); it != j.end(); ++it)
      pointers(it.value(), at / it.key(), objects, leaves);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) pointers(j[i], at / i, objects, leaves);
  } else {
    leaves.push_back(at);
  }
}

bool cluster_ok(const json& j, std::string* why = nullptr) {
  try {
    parse_cluster(Doc::from_json(j, "mutant.json"));
    return true;
  } catch (const InputError& e) {
    if (why) *why = e.what();
    return false;
  }
}

bool catalog_ok(const std::string& name, const json& j, std::string* why = nullptr) {
  // The mutant replaces its file among the embedded ones (cross references stay resolvable).
  std::vector<std::pair<std::string, std::string>> files = embedded_catalog_files();
  for (auto& f : files)
    if (f.first == name) f.second = j.dump();
  try {
    Catalog::parse(files);
    return true;
  } catch (const InputError& e) {
    if (why) *why = e.what();
    return false;
  }
}

// Wrong values for a leaf: another JSON type, and for quantity strings a unit the parser refuses.
std::vector<json> wrong_values(const json& v) {
  std::vector<json> out;
  if (v.is_string()) {
    out.push_back(12345);
    const std::string s = v.get<std::string>();
    if (!s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '$'))
      out.push_back(s + "furlong");
  } else if (v.is_number()) {
    out.push_back("fast");
    if (v.is_number_integer()) out.push_back(1.5);
  } else if (v.is_boolean()) {
    out.push_back("yes");
  }
  return out;
}

}  // namespace

TEST_CASE("schema: every shipped cluster validates and parses") {
  json schema = load_schema(src("schemas/cluster.schema.json"));
  for (const auto& f : json_files("topologies")) {
    CAPTURE(f);
    json j = read(f);
    auto errs = validate_schema(schema, j);
    CHECK_MESSAGE(errs.empty(), format_schema_errors(errs));
    std::string why;
    CHECK_MESSAGE(cluster_ok(j, &why), why);
  }
}

TEST_CASE("schema: cluster mutations: the parser rejects what the schema rejects") {
  json schema = load_schema(src("schemas/cluster.schema.json"));
  int mutants = 0;
  for (const auto& f : json_files("topologies")) {
    CAPTURE(f);
    const json base = read(f);
    std::vector<json::json_pointer> objects, leaves;
    pointers(base, json::json_pointer(), objects, leaves);
    for (const auto& p : objects) {  // unknown key: both reject
      json m = base;
      m[p]["zz_unknown"] = 1;
      CAPTURE(p.to_string());
      CHECK_FALSE(validate_schema(schema, m).empty());
      CHECK_FALSE(cluster_ok(m));
      ++mutants;
      for (auto it = base[p].begin(); it != base[p].end(); ++it) {  // each key removed
        json r = base;
        r[p].erase(it.key());
        CAPTURE(it.key());
        bool schema_ok = validate_schema(schema, r).empty();
        std::string why;
        bool parser_ok = cluster_ok(r, &why);
        if (!schema_ok)
          CHECK_FALSE_MESSAGE(parser_ok, "parser accepted a document the schema rejects");
        // Optional keys: the parser takes a default; it may still refuse on a semantic ground
        // (the default transport does not fit the file's Ethernet switch).
        if (schema_ok && !parser_ok) CHECK_MESSAGE(why.find("transport") != std::string::npos, why);
        ++mutants;
      }
    }
    for (const auto& p : leaves) {  // wrong type or unit: both reject
      if (p.to_string() == "/name" || p.to_string() == "/description" ||
          p.to_string() == "/$schema")
        continue;
      for (const auto& w : wrong_values(base[p])) {
        json m = base;
        m[p] = w;
        CAPTURE(p.to_string());
        CAPTURE(w.dump());
        bool schema_ok = validate_schema(schema, m).empty();
        if (w.is_number_float()) {
          CHECK(schema_ok ==
                cluster_ok(m));  // 1.5 where an integer was: fine for number fields only
        } else {
          CHECK_FALSE(schema_ok);
          CHECK_FALSE(cluster_ok(m));
        }
        ++mutants;
      }
    }
  }
  MESSAGE(mutants << " cluster mutants checked");
  CHECK(mutants > 300);
}

TEST_CASE("schema: every catalog file of a spec kind validates, mutations agree with the parser") {
  json schema = load_schema(src("schemas/catalog.schema.json"));
  const std::set<std::string> kinds(Catalog::kinds().begin(), Catalog::kinds().end());
  int files = 0, mutants = 0;
  for (const auto& [name, text] : embedded_catalog_files()) {
    json base = json::parse(text);
    if (!base.contains("kind") || !kinds.count(base["kind"].get<std::string>()))
      continue;  // other schemas
    ++files;
    const std::string file_name = name;  // clang 14 cannot capture a structured binding
    CAPTURE(file_name);
    auto errs = validate_schema(schema, base);
    CHECK_MESSAGE(errs.empty(), format_schema_errors(errs));
    // Mutate the first entry of each file.
    const json::json_pointer e0("/entries/0");
    json m = base;
    m[e0]["zz_unknown"] = 1;
    CHECK_FALSE(validate_schema(schema, m).empty());
    CHECK_FALSE(catalog_ok(name, m));
    for (auto it = base[e0].begin(); it != base[e0].end(); ++it) {
      json r = base;
      r[e0].erase(it.key());
      CAPTURE(it.key());
      bool schema_ok = validate_schema(schema, r).empty();
      std::string why;
      bool parser_ok = catalog_ok(name, r, &why);
      CHECK_MESSAGE(schema_ok == parser_ok, why);
      ++mutants;
      for (const auto& w : wrong_values(it.value())) {
        if (it.key() == "name" || it.key() == "source" || it.key() == "notes" ||
            it.key() == "scaleup_link" || it.key() == "cloud_price_note")
          continue;  // free text
        json x = base;
        x[e0][it.key()] = w;
        CAPTURE(w.dump());
        bool schema_ok = validate_schema(schema, x).empty();
        if (w.is_number_float()) {
          CHECK(schema_ok == catalog_ok(name, x));
        } else {
          CHECK_FALSE(schema_ok);
          CHECK_FALSE(catalog_ok(name, x));
        }
        ++mutants;
      }
    }
  }
  CHECK(files == 8);
  MESSAGE(mutants << " catalog mutants checked");
}

// The output contract of `tutti topo --json` (and of each `topology` in a `tutti report compare`
// document): to_json(Cluster) of every shipped cluster matches schemas/topology_result.schema.json,
// and writes every key the schema types (`storage` only when the cluster names a storage system).
TEST_CASE("schema: to_json(Cluster) of every shipped cluster matches the topology result schema") {
  const json schema = load_schema(src("schemas/topology_result.schema.json"));
  for (const auto& f : json_files("topologies")) {
    CAPTURE(f);
    const Cluster c = load_cluster(f);
    const json j = to_json(c);
    auto errs = validate_schema(schema, j);
    CHECK_MESSAGE(errs.empty(), format_schema_errors(errs));
    CHECK(j.at("schema_version") == 1);
    for (const auto& item : schema.at("properties").items()) {
      const std::string key = item.key();  // clang 14 cannot capture a structured binding
      if (key != "storage") CHECK_MESSAGE(j.contains(key), key);
    }
    CHECK(j.contains("storage") == !c.storage.id.empty());
    // A wrong type where a report reads is a violation naming the key.
    json bad = j;
    bad["network_capex_usd"] = "cheap";
    errs = validate_schema(schema, bad);
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "network_capex_usd");
  }
}
