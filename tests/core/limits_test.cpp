// Issue 25, "limits declared once": every number of every input kind has a stated range in its
// schema (schemas/*.schema.json), and the schema and the strict parser agree on it. For every
// numeric key of the shipped examples of each kind, a ladder of probe values (negative, zero,
// denormal, fractional, 2^31, 2^40, 2^53, 1e18, 1e300) is put in its place; then:
//   * a value the schema refuses is refused by the parser too, naming the key (no value outside
//     the schema reaches an allocation or a loop);
//   * a value the parser refuses as out of range ("in [a, b]", ">= a", ...) at that key is
//     refused by the schema too (the schema does not promise what the parser does not take).
// Cross-key checks (a degree that must divide another) may refuse more than the schema: they do
// not state a range. Quantities with units are strings in the schemas; their ceiling is
// dim_max (core/limits.hpp), and each quantity definition of each schema states it.
#include "tutti/core/limits.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "../support/run.hpp"
#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"
#include "tutti/core/units.hpp"
#include "tutti/exec/measurements.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/plan/planner.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/topologies/catalog.hpp"
#include "tutti/topologies/cluster.hpp"
#include "tutti/validation/validation.hpp"

using namespace tutti;
using nlohmann::json;
using tutti::testing::src;
using tutti::testing::temp_dir;

namespace {

json read(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::vector<std::string> json_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(src(dir)))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// A parser under test: throws InputError on a refused document.
using Parser = std::function<void(const json&)>;

struct Kind {
  std::string name;
  std::string schema;
  std::vector<json> examples;
  Parser parse;
};

/// Numeric leaves of `j` (JSON pointers), descending only into the first element of each array
/// (the others are of the same schema) and skipping documentation keys.
void numeric_leaves(const json& j, const json::json_pointer& at,
                    std::vector<json::json_pointer>& out) {
  if (j.is_number()) {
    out.push_back(at);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "source" && it.key() != "notes")
        numeric_leaves(it.value(), at / it.key(), out);
  } else if (j.is_array() && !j.empty()) {
    numeric_leaves(j[0], at / 0, out);
  }
}

/// "training.global_batch" for /training/global_batch (the parsers' key paths).
std::string dotted(const json::json_pointer& p) {
  std::string s = p.to_string(), out;
  for (std::size_t i = 1; i < s.size(); ++i) out += s[i] == '/' ? '.' : s[i];
  return out;
}

/// The key as the parser names it: validation cases are named "case N (id ...): training.x", so
/// the leading array index of a case file is not part of it.
std::string parser_key(const std::string& kind, const std::string& key) {
  if (kind != "validation cases") return key;
  return key.substr(key.find('.') + 1);
}

/// The parser refused `key` for its range ("expected an integer in [1, 512]", "expected >= 1").
bool states_range(const std::string& msg, const std::string& key) {
  auto at = msg.find(key + ": got ");
  if (at == std::string::npos) return false;
  auto exp = msg.find(", expected ", at);
  if (exp == std::string::npos) return false;
  std::string e = msg.substr(exp + 11);
  for (const char* lead : {"an integer in [", "a number in [", ">= ", "<= ", "> "})
    if (e.rfind(lead, 0) == 0) return true;
  return false;
}

/// Keys whose parser bound is another key of the same document (top_k <= experts, kv_heads <=
/// heads, dense_layers < layers, moe_layer_freq <= layers, patch_size <= image_size): the schema
/// states the absolute bound and the parser the tighter, document-specific one.
bool bound_by_another_key(const std::string& key) {
  for (const char* k : {"model.top_k", "model.dense_layers", "model.moe_layer_freq",
                        "model.patch_size", "model.moe_imbalance", "model.kv_heads"})
    if (key == k) return true;
  return false;
}

const json kProbes = json::parse(
    "[-1e300, -1, 0, 1e-310, 0.5, 1, 2, 1000, 2147483648, 1099511627776, 9007199254740992, "
    "1000000000000000000, 1e300]");

/// Probes `k`; returns how many probes the schema refused (the caller checks that some were).
int check_kind(const Kind& k) {
  CAPTURE(k.name);
  const json schema = load_schema(src(k.schema));
  int probes = 0, refused = 0;
  for (const json& base : k.examples) {
    REQUIRE_MESSAGE(validate_schema(schema, base).empty(),
                    format_schema_errors(validate_schema(schema, base)));
    REQUIRE_NOTHROW(k.parse(base));
    std::vector<json::json_pointer> leaves;
    numeric_leaves(base, json::json_pointer(), leaves);
    for (const auto& p : leaves) {
      const std::string key = parser_key(k.name, dotted(p));
      for (const json& v : kProbes) {
        json m = base;
        m[p] = v;
        const bool schema_ok = validate_schema(schema, m).empty();
        std::string why;
        try {
          k.parse(m);
        } catch (const InputError& e) {
          why = e.what();
        }
        const std::string what = key + " = " + v.dump() + ": schema " +
                                 (schema_ok ? "accepts" : "refuses") + ", parser " +
                                 (why.empty() ? "accepts" : why);
        INFO(what);
        ++probes;
        if (!schema_ok) {
          ++refused;
          CHECK_MESSAGE(!why.empty(), what);
          CHECK_MESSAGE(why.find(key) != std::string::npos, what);
        }
        if (states_range(why, key) && !bound_by_another_key(key)) CHECK_MESSAGE(!schema_ok, what);
      }
    }
  }
  MESSAGE(k.name, ": ", probes, " probes, ", refused, " refused by the schema");
  return refused;
}

/// Every "type": "integer" or "number" in the schema has a lower and an upper bound.
void unbounded_numbers(const json& s, const std::string& at, std::vector<std::string>& out) {
  if (s.is_object()) {
    if (s.contains("type")) {
      json t = s["type"].is_array() ? s["type"] : json::array({s["type"]});
      bool numeric = std::find(t.begin(), t.end(), "integer") != t.end() ||
                     std::find(t.begin(), t.end(), "number") != t.end();
      bool lo = s.contains("minimum") || s.contains("exclusiveMinimum");
      bool hi = s.contains("maximum") || s.contains("exclusiveMaximum");
      if (s.contains("anyOf") || s.contains("oneOf")) lo = hi = true;  // bounded per branch
      if (numeric && !(lo && hi)) out.push_back(at);
    }
    for (auto it = s.begin(); it != s.end(); ++it)
      unbounded_numbers(it.value(), at + "/" + it.key(), out);
  } else if (s.is_array()) {
    for (std::size_t i = 0; i < s.size(); ++i)
      unbounded_numbers(s[i], at + "/" + std::to_string(i), out);
  }
}

}  // namespace

TEST_CASE("limits: every number in every input schema has a lower and an upper bound") {
  for (const auto& f : json_files("schemas")) {
    if (f.find("_result.schema.json") != std::string::npos) continue;  // an output, not an input
    CAPTURE(f);
    std::vector<std::string> open;
    unbounded_numbers(read(f), "", open);
    std::string all;
    for (const auto& o : open) all += o + "\n";
    CHECK_MESSAGE(open.empty(), all);
  }
}

TEST_CASE("limits: each schema's quantity definitions state dim_max, the parsers' one ceiling") {
  // The $defs of unit strings and their dimension (units.hpp); each says "at most <dim_max>".
  const std::pair<const char*, Dim> defs[] = {{"time", Dim::Time},
                                              {"duration", Dim::Time},
                                              {"power", Dim::Power},
                                              {"bandwidth", Dim::Bandwidth},
                                              {"bytes", Dim::Bytes},
                                              {"energy", Dim::Energy},
                                              {"flop_rate", Dim::FlopRate},
                                              {"money", Dim::Money},
                                              {"energy_price", Dim::EnergyPrice},
                                              {"money_rate", Dim::MoneyRate},
                                              {"flops", Dim::FlopRate}};
  int stated = 0;
  for (const auto& f : json_files("schemas")) {
    json s = read(f);
    if (!s.contains("$defs")) continue;
    for (const auto& def : defs) {
      const std::string name =
          def.first;  // (a plain variable: lambdas in CAPTURE cannot take a binding)
      const Dim d = def.second;
      if (!s["$defs"].contains(name) || s["$defs"][name].value("type", "") != "string") continue;
      CAPTURE(f);
      CAPTURE(name);
      const std::string want = "at most " + format_quantity(dim_max(d), d);
      CHECK_MESSAGE(s["$defs"][name].value("description", "").find(want) != std::string::npos,
                    "expected the description to say \"", want, "\"");
      ++stated;
    }
  }
  CHECK(stated >= 5);
}

TEST_CASE(
    "limits: schema and parser agree on the range of every number (workload, cluster, "
    "calibration)") {
  Kind w{"workload", "schemas/workload.schema.json", {}, [](const json& j) {
           parse_workload(j.dump(), "w.json");
         }};
  for (const auto& f : json_files("models")) w.examples.push_back(read(f));
  CHECK(check_kind(w) > 0);
  Kind c{"cluster", "schemas/cluster.schema.json", {}, [](const json& j) {
           parse_cluster(Doc::parse(j.dump(), "c.json"));
         }};
  for (const char* f :
       {"topologies/dgx-h100-single.json", "topologies/h100-64gpu-fattree.json",
        "topologies/dragonfly.json", "topologies/torus.json", "topologies/roce-400g.json"})
    c.examples.push_back(read(src(f)));
  CHECK(check_kind(c) > 0);
  Kind cal{"calibration",
           "schemas/calibration.schema.json",
           {read(src("sim/calibration/default.json"))},
           [](const json& j) { parse_calibration(j.dump(), "cal.json"); }};
  CHECK(check_kind(cal) > 0);
}

TEST_CASE(
    "limits: schema and parser agree on the range of every number (plan request, measurements, "
    "reliability)") {
  Kind plan{"plan request",
            "schemas/plan_request.schema.json",
            {read(src("tests/plan/small_request.json"))},
            [](const json& j) { parse_plan_request(j, "p.json", src("tests/plan")); }};
  CHECK(check_kind(plan) > 0);
  Kind meas{"measurements", "schemas/measurements.schema.json", {}, [](const json& j) {
              exec::parse_measurements(j.dump(), "m.json");
            }};
  for (const auto& f : json_files("tests/fuzz/seeds/measurements"))
    meas.examples.push_back(read(f));
  CHECK(check_kind(meas) > 0);
  Kind rel{"reliability",
           "schemas/reliability.schema.json",
           {read(src("topologies/catalog/reliability.json"))},
           [](const json& j) { parse_reliability(Doc::parse(j.dump(), "r.json")); }};
  CHECK(check_kind(rel) > 0);
}

TEST_CASE("limits: schema and parser agree on the range of every number (catalog files)") {
  const std::set<std::string> kinds(Catalog::kinds().begin(), Catalog::kinds().end());
  int files = 0, refused = 0;
  for (const auto& [name, text] : embedded_catalog_files()) {
    json base = json::parse(text);
    if (!base.contains("kind") || !kinds.count(base["kind"].get<std::string>()))
      continue;  // own schemas
    ++files;
    const std::string file = name;
    Kind k{"catalog " + file, "schemas/catalog.schema.json", {base}, [file](const json& j) {
             auto all = embedded_catalog_files();
             for (auto& f : all)
               if (f.first == file) f.second = j.dump();
             (void)Catalog::parse(all);
           }};
    refused += check_kind(k);  // nics.json, for one, holds only quantities
  }
  CHECK(files >= 5);
  CHECK(refused > 0);
}

TEST_CASE("limits: schema and parser agree on the range of every number (validation cases)") {
  const std::string path = temp_dir() + "/limits-cases.json";
  Kind v{"validation cases", "schemas/validation_cases.schema.json", {}, [&](const json& j) {
           std::ofstream(path, std::ios::trunc) << j.dump();
           ValidationOptions vo;
           vo.engine = "analytic";
           (void)validate_cases(path, vo);
         }};
  json all = read(src("tests/validation/published-public.json"));
  v.examples.push_back(json::array({all[0]}));
  CHECK(check_kind(v) > 0);
}
