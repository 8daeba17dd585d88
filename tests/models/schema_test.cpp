// schemas/workload.schema.json and the parser agree: every shipped example validates and parses;
// mutations (an unknown key at each object level, each required key removed, a wrong-typed value
// at each key) are rejected by both.
#include "tutti/core/schema.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/run.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"

using namespace tutti;
using nlohmann::json;
using tutti::testing::src;

namespace {

std::vector<std::string> example_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(src("models")))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

json read(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

bool parser_accepts(const json& j, std::string* why = nullptr) {
  try {
    parse_workload(j.dump(), "mutant.json");
    return true;
  } catch (const InputError& e) {
    if (why) *why = e.what();
    return false;
  }
}

/// Object paths of the document (JSON pointers) with the schema's required keys there.
void object_pointers(const json& j, const json::json_pointer& at,
                     std::vector<json::json_pointer>& out) {
  if (!j.is_object()) return;
  out.push_back(at);
  for (auto it = j.begin(); it != j.end(); ++it) object_pointers(it.value(), at / it.key(), out);
}

}  // namespace

TEST_CASE("schema: every shipped workload validates and parses") {
  json schema = load_schema(src("schemas/workload.schema.json"));
  auto files = example_files();
  CHECK(files.size() >= 10);
  for (const auto& f : files) {
    CAPTURE(f);
    json j = read(f);
    auto errs = validate_schema(schema, j);
    CHECK_MESSAGE(errs.empty(), format_schema_errors(errs));
    CHECK_NOTHROW(load_workload(f));
    CHECK(!j["source"].get<std::string>().empty());
  }
}

TEST_CASE("schema: mutations are rejected by both the schema and the parser") {
  json schema = load_schema(src("schemas/workload.schema.json"));
  // Required keys per object, as the schema states them for each family / training kind.
  auto required_here = [&](const json& doc, const json::json_pointer& at) {
    std::vector<std::string> req;
    std::string p = at.to_string();
    if (p.empty()) return std::vector<std::string>{"name", "source", "model", "training"};
    if (p == "/model") {
      std::string fam = doc["model"]["family"];
      for (const auto& k : schema["$defs"][fam]["required"]) req.push_back(k);
    }
    if (p == "/training") {
      std::string fam = doc["model"]["family"];
      bool token = fam == "transformer" || fam == "encoder";
      for (const auto& k :
           schema["$defs"][token ? "token_training" : "sample_training"]["required"])
        req.push_back(k);
    }
    return req;
  };
  int mutants = 0;
  for (const auto& f : example_files()) {
    CAPTURE(f);
    json doc = read(f);
    std::vector<json::json_pointer> objs;
    object_pointers(doc, json::json_pointer(), objs);
    for (const auto& at : objs) {
      CAPTURE(at.to_string());
      // 1. Unknown key at this level.
      {
        json m = doc;
        m[at]["no_such_key"] = 1;
        std::string why;
        CHECK_FALSE(validate_schema(schema, m).empty());
        CHECK_FALSE(parser_accepts(m, &why));
        CHECK(why.find("no_such_key") != std::string::npos);
        ++mutants;
      }
      // 2. Each required key removed.
      for (const auto& key : required_here(doc, at)) {
        CAPTURE(key);
        json m = doc;
        m[at].erase(key);
        CHECK_FALSE(validate_schema(schema, m).empty());
        std::string why;
        CHECK_FALSE(parser_accepts(m, &why));
        CHECK(why.find(key) != std::string::npos);
        ++mutants;
      }
      // 3. A wrong-typed value at each key (objects become strings, everything else an object).
      for (auto it = doc[at].begin(); it != doc[at].end(); ++it) {
        CAPTURE(it.key());
        json m = doc;
        m[at][it.key()] = it.value().is_object() ? json("oops") : json::object({{"oops", 1}});
        CHECK_FALSE(validate_schema(schema, m).empty());
        CHECK_FALSE(parser_accepts(m));
        ++mutants;
        if (it.value().is_array() && !it.value().empty()) {  // and a wrong-typed element
          json e = doc;
          e[at][it.key()][0] = "oops";
          CHECK_FALSE(validate_schema(schema, e).empty());
          CHECK_FALSE(parser_accepts(e));
          ++mutants;
        }
      }
    }
  }
  MESSAGE("mutants checked: ", mutants);
  CHECK(mutants > 200);
}

TEST_CASE("schema: seq_len follows the family (token models need it, others must not give it)") {
  json schema = load_schema(src("schemas/workload.schema.json"));
  json rn = read(src("models/resnet50.json"));
  rn["training"]["seq_len"] = 1;
  CHECK_FALSE(validate_schema(schema, rn).empty());
  CHECK_FALSE(parser_accepts(rn));
  json g = read(src("models/tiny-gpt.json"));
  g["training"].erase("seq_len");
  CHECK_FALSE(validate_schema(schema, g).empty());
  CHECK_FALSE(parser_accepts(g));
}
