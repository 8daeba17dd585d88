// tests/validation/published-extra.json: structure, citations and ids of the extra public cases.
// Independent of cli/validate.cpp on purpose: this checks the data file itself (every case cites a
// URL, every v2 key is present with its type, derived_fields name keys that exist), not what
// validate does with it.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "../support/run.hpp"
#include "tutti/core/schema.hpp"

using nlohmann::json;

namespace {

json load(const std::string& relative) {
  std::ifstream in(tutti::testing::src(relative));
  REQUIRE_MESSAGE(in.good(), "cannot open " << relative);
  return json::parse(in);
}

enum class Kind { String, Int, Number, Bool, Object, Array };

bool is_kind(const json& v, Kind k) {
  switch (k) {
    case Kind::String:
      return v.is_string();
    case Kind::Int:
      return v.is_number_integer();
    case Kind::Number:
      return v.is_number();
    case Kind::Bool:
      return v.is_boolean();
    case Kind::Object:
      return v.is_object();
    case Kind::Array:
      return v.is_array();
  }
  return false;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::String:
      return "a string";
    case Kind::Int:
      return "an integer";
    case Kind::Number:
      return "a number";
    case Kind::Bool:
      return "a boolean";
    case Kind::Object:
      return "an object";
    case Kind::Array:
      return "an array";
  }
  return "?";
}

struct Key {
  const char* name;
  Kind kind;
  bool nullable;
};

// The v2 case format of tests/validation/README.md (published-public.json), plus the extensions
// that README documents for published-extra.json (model.moe.forced_balance, collective MoE keys,
// gemm, hardware.power_limit_w, fabric xgmi). When the format's schema
// (schemas/validation_cases.schema.json) is in the tree, the file is also checked against it: that
// is what `tutti validate` reads.
const std::vector<Key> kTop = {
    {"id", Kind::String, false},       {"source_key", Kind::String, false},
    {"source", Kind::String, false},   {"model", Kind::Object, false},
    {"training", Kind::Object, false}, {"parallel", Kind::Object, false},
    {"hardware", Kind::Object, false}, {"software", Kind::Object, false},
    {"measured", Kind::Object, false}, {"derived_fields", Kind::Array, false},
    {"notes", Kind::String, false}};
const std::vector<Key> kModel = {
    {"name", Kind::String, false}, {"params", Kind::Number, true},  {"layers", Kind::Int, true},
    {"hidden", Kind::Int, true},   {"ffn_hidden", Kind::Int, true}, {"heads", Kind::Int, true},
    {"kv_heads", Kind::Int, true}, {"seq_len", Kind::Int, true},    {"vocab", Kind::Int, true},
    {"moe", Kind::Object, true},   {"mlp", Kind::String, true}};
const std::vector<Key> kMoe = {
    {"experts", Kind::Int, true},           {"topk", Kind::Int, true},
    {"expert_ffn_hidden", Kind::Int, true}, {"shared_experts", Kind::Int, true},
    {"dense_layers", Kind::Int, true},      {"moe_layer_freq", Kind::Int, true},
    {"dropless", Kind::Bool, true}};
const std::vector<Key> kTraining = {
    {"global_batch", Kind::Int, true}, {"micro_batch", Kind::Int, true},
    {"precision", Kind::String, true}, {"recompute", Kind::String, true},
    {"dtype", Kind::String, true},     {"recompute_mode", Kind::String, true}};
const std::vector<Key> kParallel = {{"tp", Kind::Int, true},
                                    {"pp", Kind::Int, true},
                                    {"dp", Kind::Int, true},
                                    {"cp", Kind::Int, true},
                                    {"ep", Kind::Int, true},
                                    {"vp", Kind::Int, true},
                                    {"sharding", Kind::String, true},
                                    {"shard_group", Kind::Int, true},
                                    {"reshard_after_forward", Kind::Bool, true},
                                    {"sp", Kind::Bool, true},
                                    {"tp_comm_overlap", Kind::Bool, true}};
const std::vector<Key> kHardware = {{"gpu", Kind::String, false},
                                    {"num_gpus", Kind::Int, true},
                                    {"gpus_per_node", Kind::Int, true},
                                    {"intra_node", Kind::String, true},
                                    {"inter_node_per_gpu_gbps", Kind::Number, true},
                                    {"gpu_id", Kind::String, false},
                                    {"fabric", Kind::String, true},
                                    {"nvlink_domain", Kind::Int, true}};
const std::vector<Key> kSoftware = {{"framework", Kind::String, true},
                                    {"date", Kind::String, true},
                                    {"attention", Kind::String, true}};
const std::vector<Key> kMeasured = {
    {"metric", Kind::String, false}, {"value", Kind::Number, false}, {"unit", Kind::String, false}};

const std::set<std::string> kDtype = {"bf16", "fp16", "fp8", "fp4", "tf32", "fp32"};
const std::set<std::string> kRecompute = {"none", "selective", "full"};
const std::set<std::string> kSharding = {"none", "optimizer", "optimizer_grads", "full"};
// "xgmi" is published-extra.json's extension: the whole job inside one AMD Infinity Fabric node.
const std::set<std::string> kFabric = {"infiniband", "roce", "efa", "ethernet", "nvlink", "xgmi"};
const std::set<std::string> kMlp = {"gated", "plain"};
const std::set<std::string> kAttention = {"unfused", "flash1", "flash2",
                                          "flash3",  "cudnn",  "te-fused"};
const std::set<std::string> kFramework = {
    "megatron-lm", "nemo",    "megatron-bridge", "megatron-deepspeed", "metaseq",    "llm-foundry",
    "torchtitan",  "maxtext", "pytorch",         "tensorflow",         "nccl-tests", "cublas",
    "babelstream", "custom"};

void check_keys(const json& obj, const std::vector<Key>& keys, const std::string& where,
                std::vector<std::string>& problems) {
  for (const Key& k : keys) {
    if (!obj.contains(k.name)) {
      problems.push_back(where + "." + k.name + ": missing (expected " + kind_name(k.kind) +
                         (k.nullable ? " or null)" : ")"));
      continue;
    }
    const json& v = obj.at(k.name);
    if (v.is_null() ? !k.nullable : !is_kind(v, k.kind))
      problems.push_back(where + "." + k.name + ": found " + v.dump() + ", expected " +
                         kind_name(k.kind) + (k.nullable ? " or null" : ""));
  }
}

void check_enum(const json& obj, const char* key, const std::set<std::string>& allowed,
                const std::string& where, std::vector<std::string>& problems) {
  if (!obj.contains(key) || !obj.at(key).is_string()) return;
  const std::string v = obj.at(key).get<std::string>();
  if (!allowed.count(v))
    problems.push_back(where + "." + key + ": found \"" + v + "\", not one of the README's values");
}

// The key path a derived_fields entry names: its leading dotted identifier ("parallel.dp (= ...)").
// Returns empty when the entry does not start with one.
std::string derived_path(const std::string& entry) {
  static const std::regex re(R"(^([a-z_]+(\.([a-z_]+|\*))*))");
  std::smatch m;
  return std::regex_search(entry, m, re) ? m[1].str() : std::string();
}

// True when the dotted path resolves inside the case (a trailing ".*" needs only its parent
// object).
bool path_exists(const json& c, const std::string& path, bool& is_null) {
  const json* cur = &c;
  size_t start = 0;
  is_null = false;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part == "*") return cur->is_object();
    if (!cur->is_object() || !cur->contains(part)) return false;
    cur = &cur->at(part);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  is_null = cur->is_null();
  return true;
}

// Every problem found in one case, each naming the key path, what was found and what was expected.
std::vector<std::string> case_problems(const json& c, size_t index) {
  std::vector<std::string> problems;
  std::string where = "case[" + std::to_string(index) + "]";
  if (!c.is_object()) return {where + ": found " + c.dump() + ", expected an object"};
  if (c.contains("id") && c.at("id").is_string())
    where += " (" + c.at("id").get<std::string>() + ")";
  check_keys(c, kTop, where, problems);
  if (!problems.empty()) return problems;

  const std::string source = c.at("source").get<std::string>();
  if (source.find("https://") == std::string::npos && source.find("http://") == std::string::npos)
    problems.push_back(where + ".source: no URL in \"" + source.substr(0, 80) + "\"");
  if (c.at("source_key").get<std::string>().empty())
    problems.push_back(where + ".source_key: empty");
  if (c.at("id").get<std::string>().empty()) problems.push_back(where + ".id: empty");

  const json& model = c.at("model");
  check_keys(model, kModel, where + ".model", problems);
  check_enum(model, "mlp", kMlp, where + ".model", problems);
  if (model.contains("moe") && model.at("moe").is_object()) {
    check_keys(model.at("moe"), kMoe, where + ".model.moe", problems);
    const json& moe = model.at("moe");
    if (moe.contains("forced_balance") && !moe.at("forced_balance").is_null() &&
        !moe.at("forced_balance").is_boolean())
      problems.push_back(where + ".model.moe.forced_balance: found " +
                         moe.at("forced_balance").dump() + ", expected a boolean or null");
  }
  check_keys(c.at("training"), kTraining, where + ".training", problems);
  check_enum(c.at("training"), "dtype", kDtype, where + ".training", problems);
  check_enum(c.at("training"), "recompute_mode", kRecompute, where + ".training", problems);
  check_keys(c.at("parallel"), kParallel, where + ".parallel", problems);
  check_enum(c.at("parallel"), "sharding", kSharding, where + ".parallel", problems);
  const json& hw = c.at("hardware");
  check_keys(hw, kHardware, where + ".hardware", problems);
  check_enum(hw, "fabric", kFabric, where + ".hardware", problems);
  check_keys(c.at("software"), kSoftware, where + ".software", problems);
  check_enum(c.at("software"), "framework", kFramework, where + ".software", problems);
  check_enum(c.at("software"), "attention", kAttention, where + ".software", problems);
  const json& date = c.at("software").value("date", json());
  if (date.is_string() &&
      !std::regex_match(date.get<std::string>(), std::regex(R"(\d{4}-(0[1-9]|1[0-2]))")))
    problems.push_back(where + ".software.date: found " + date.dump() + ", expected YYYY-MM");
  check_keys(c.at("measured"), kMeasured, where + ".measured", problems);
  const json& value = c.at("measured").value("value", json());
  if (value.is_number() && !(value.get<double>() > 0))
    problems.push_back(where + ".measured.value: found " + value.dump() +
                       ", expected a positive number");

  if (c.contains("also_measured")) {
    const json& am = c.at("also_measured");
    if (!am.is_array())
      problems.push_back(where + ".also_measured: expected an array");
    else
      for (size_t i = 0; i < am.size(); ++i)
        check_keys(am[i], kMeasured, where + ".also_measured[" + std::to_string(i) + "]", problems);
  }
  if (c.contains("collective")) {
    const json& col = c.at("collective");
    check_keys(col,
               {{"op", Kind::String, false},
                {"message_bytes", Kind::Int, false},
                {"algo", Kind::String, true}},
               where + ".collective", problems);
  }
  if (hw.contains("power_limit_w") && !hw.at("power_limit_w").is_null() &&
      !hw.at("power_limit_w").is_number())
    problems.push_back(where + ".hardware.power_limit_w: found " + hw.at("power_limit_w").dump() +
                       ", expected a number or null");
  if (c.contains("gemm"))
    check_keys(c.at("gemm"),
               {{"m", Kind::Int, false},
                {"n", Kind::Int, false},
                {"k", Kind::Int, false},
                {"groups", Kind::Int, false},
                {"layout", Kind::String, false}},
               where + ".gemm", problems);

  const json& derived = c.at("derived_fields");
  for (size_t i = 0; i < derived.size(); ++i) {
    const std::string slot = where + ".derived_fields[" + std::to_string(i) + "]";
    if (!derived[i].is_string()) {
      problems.push_back(slot + ": found " + derived[i].dump() + ", expected a string");
      continue;
    }
    const std::string entry = derived[i].get<std::string>();
    const std::string path = derived_path(entry);
    bool is_null = false;
    if (path.empty())
      problems.push_back(slot + ": \"" + entry.substr(0, 60) + "\" does not start with a key path");
    else if (!path_exists(c, path, is_null))
      problems.push_back(slot + ": names " + path + ", which the case does not have");
    else if (is_null)
      problems.push_back(slot + ": names " + path +
                         ", which is null (a derived field carries a value)");
  }
  return problems;
}

std::vector<std::string> file_problems(const json& cases, const std::set<std::string>& other_ids) {
  std::vector<std::string> problems;
  if (!cases.is_array()) return {"published-extra.json: expected a JSON array of cases"};
  std::set<std::string> seen;
  for (size_t i = 0; i < cases.size(); ++i) {
    for (std::string& p : case_problems(cases[i], i)) problems.push_back(std::move(p));
    if (!cases[i].is_object() || !cases[i].contains("id") || !cases[i].at("id").is_string())
      continue;
    const std::string id = cases[i].at("id").get<std::string>();
    if (!seen.insert(id).second)
      problems.push_back("case[" + std::to_string(i) + "].id: duplicate id " + id);
    if (other_ids.count(id))
      problems.push_back("case[" + std::to_string(i) + "].id: " + id +
                         " is already used by published-public.json");
  }
  return problems;
}

std::set<std::string> ids_of(const json& cases) {
  std::set<std::string> ids;
  for (const json& c : cases) ids.insert(c.at("id").get<std::string>());
  return ids;
}

json good_case() {
  return json::parse(R"json({
    "id": "x-1", "source_key": "x", "source": "Someone 2025, Table 1 -- https://example.org/paper",
    "model": {"name": "m", "params": 1e9, "layers": 2, "hidden": 64, "ffn_hidden": 256, "heads": 4,
              "kv_heads": 4, "seq_len": 128, "vocab": 1000, "moe": null, "mlp": "gated"},
    "training": {"global_batch": 8, "micro_batch": 1, "precision": "bf16", "recompute": null,
                 "dtype": "bf16", "recompute_mode": null},
    "parallel": {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": null, "vp": null, "sharding": "none",
                 "shard_group": null, "reshard_after_forward": null, "sp": false, "tp_comm_overlap": false},
    "hardware": {"gpu": "H100", "num_gpus": 8, "gpus_per_node": 8, "intra_node": null,
                 "inter_node_per_gpu_gbps": null, "gpu_id": "h100-sxm-80gb", "fabric": "nvlink", "nvlink_domain": 8},
    "software": {"framework": "pytorch", "date": "2025-01", "attention": null},
    "measured": {"metric": "step_time", "value": 1.5, "unit": "s"},
    "derived_fields": ["parallel.dp (= GPUs/(TP*PP))"],
    "notes": ""})json");
}

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  for (const std::string& p : problems)
    if (p.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("published-extra.json: every case is cited, typed as the v2 format, and named uniquely") {
  const json extra = load("tests/validation/published-extra.json");
  const json pub = load("tests/validation/published-public.json");
  std::set<std::string> pub_ids = ids_of(pub);
  // The v2 copy in ../shared (when present) carries the same ids; check against it too.
  std::ifstream shared(tutti::testing::src("../shared/data/validation/published-public.json"));
  if (shared.good()) {
    std::set<std::string> more = ids_of(json::parse(shared));
    pub_ids.insert(more.begin(), more.end());
  }
  const std::vector<std::string> problems = file_problems(extra, pub_ids);
  for (const std::string& p : problems) MESSAGE(p);
  CHECK(problems.empty());
  CHECK(extra.size() >= 60);
}

TEST_CASE(
    "published-extra.json: collectives and GEMMs carry their structured shape, and the v2 schema "
    "accepts the file") {
  const json extra = load("tests/validation/published-extra.json");
  int collectives = 0, gemms = 0;
  for (const json& c : extra) {
    const std::string metric = c.at("measured").at("metric").get<std::string>();
    if (metric == "ep_bottleneck_bw" || metric == "collective_time_us" || metric == "busbw") {
      ++collectives;
      REQUIRE_MESSAGE(c.contains("collective"), c.at("id"));
      const json& col = c.at("collective");
      if (col.at("op").get<std::string>().rfind("moe_", 0) != 0) continue;
      // message_bytes is tokens x hidden x element bytes, as the README defines it for MoE
      // dispatch/combine.
      const int elem = col.at("elem_dtype") == "fp8" ? 1 : 2;
      CHECK(col.at("message_bytes").get<long long>() ==
            col.at("tokens_per_rank").get<long long>() * col.at("hidden").get<long long>() * elem);
    }
    if (metric == "gemm_tflops") {
      ++gemms;
      REQUIRE_MESSAGE(c.contains("gemm"), c.at("id"));
    }
  }
  CHECK(collectives > 0);
  CHECK(gemms > 0);
  // The strict reader's schema (it comes with the v2 reader): when present, every case must pass
  // it, so `tutti validate --cases tests/validation/published-extra.json` reads the whole file.
  const std::string schema_path = tutti::testing::src("schemas/validation_cases.schema.json");
  if (std::ifstream(schema_path).good()) {
    const std::vector<tutti::SchemaError> errors =
        tutti::validate_schema(tutti::load_schema(schema_path), extra);
    CHECK_MESSAGE(errors.empty(), tutti::format_schema_errors(errors));
  }
}

TEST_CASE("the case checker catches what it is meant to catch") {
  CHECK(case_problems(good_case(), 0).empty());

  json no_url = good_case();
  no_url["source"] = "a paper somewhere, Table 2";
  CHECK(mentions(case_problems(no_url, 0), ".source: no URL"));

  json wrong_type = good_case();
  wrong_type["parallel"]["tp"] = "2";
  CHECK(mentions(case_problems(wrong_type, 0),
                 ".parallel.tp: found \"2\", expected an integer or null"));

  json missing = good_case();
  missing["hardware"].erase("fabric");
  CHECK(mentions(case_problems(missing, 0), ".hardware.fabric: missing"));

  json bad_enum = good_case();
  bad_enum["parallel"]["sharding"] = "zero3";
  CHECK(mentions(case_problems(bad_enum, 0), ".parallel.sharding: found \"zero3\""));

  json bad_derived = good_case();
  bad_derived["derived_fields"] = json::array({"parallel.zero_stage (from prose)"});
  CHECK(mentions(case_problems(bad_derived, 0),
                 "names parallel.zero_stage, which the case does not have"));

  json null_derived = good_case();
  null_derived["derived_fields"] = json::array({"parallel.ep (= dp)"});
  CHECK(mentions(case_problems(null_derived, 0), "names parallel.ep, which is null"));

  json bad_date = good_case();
  bad_date["software"]["date"] = "2025-13";
  CHECK(mentions(case_problems(bad_date, 0), ".software.date: found \"2025-13\""));

  json dup = json::array({good_case(), good_case()});
  CHECK(mentions(file_problems(dup, {}), "duplicate id x-1"));
  CHECK(mentions(file_problems(json::array({good_case()}), {"x-1"}),
                 "already used by published-public.json"));
}
