// `tutti validate --cases` on the published measurements kept in tests/validation/: the strict
// case reader, the mapping of structured fields, the consistency check and the scoring.
#include "tutti/validation/validation.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/run.hpp"
#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"
#include "tutti/sim/calibration.hpp"

using namespace tutti::testing;
using nlohmann::json;

namespace {
// The regression bound on the headline (unfitted) MAPE of tests/validation/published-public.json:
// its measured value rounded up to the next whole percent (docs/validation.md states the figure).
constexpr double kUnfittedMapeBoundPct = 12.0;

const char* kCases = "tests/validation/published-public.json";

json shipped() {
  std::ifstream in(src(kCases));
  return json::parse(in);
}

std::string write(const json& j, const std::string& name = "cases.json") {
  std::string path = temp_dir() + "/" + name;
  std::ofstream(path) << j.dump(1);
  return path;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every document these tests read matches its output schema
// (schemas/validation_result.schema.json).
json validate(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"validate", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_tutti(args);
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  json j = r.json();
  static const json schema = tutti::load_schema(src("schemas/validation_result.schema.json"));
  const auto errors = tutti::validate_schema(schema, j);
  CHECK_MESSAGE(errors.empty(), tutti::format_schema_errors(errors));
  CHECK(j.at("schema_version") == 1);
  return j;
}

json one_case(const std::string& id) {
  for (auto& c : shipped())
    if (c["id"] == id) return c;
  FAIL("no case " << id);
  return {};
}

// Runs validate on a file holding `cases`; returns rc and stderr.
RunResult run_cases(const json& cases) {
  return run_tutti({"validate", "--cases", write(cases), "--json"});
}
}  // namespace

TEST_CASE(
    "validation: published cases are predicted, errors reported, unfitted MAPE within bound") {
  if (tutti::testing::skip_under_sanitizers("the whole published case set")) return;
  json j = validate({"--cases", kCases});
  auto& cases = j["cases"];
  // Nothing is dropped silently: every case is predicted, inconsistent or skipped with a reason.
  CHECK(j["total_cases"] == 91);
  CHECK(j["summary"]["total"].get<int>() + j["fitted"]["total"].get<int>() == 91);
  CHECK(cases.size() + j["skipped"].size() + j["inconsistent"].size() == 91);
  CHECK(cases.size() >= 60);
  for (auto& s : j["skipped"]) CHECK_FALSE(s["reason"].get<std::string>().empty());
  double sum = 0;
  int unfitted = 0;
  for (auto& c : cases) {
    double m = c["measured"], p = c["predicted"], e = c["error_pct"];
    CHECK(std::isfinite(p));
    CHECK(p > 0);
    CHECK(e == doctest::Approx((p - m) / m * 100).epsilon(1e-9));
    if (!c["fitted"].get<bool>()) {
      sum += std::fabs(e);
      ++unfitted;
    }
  }
  REQUIRE(unfitted > 0);
  double mape = sum / unfitted;
  CHECK(j["summary"]["mape_pct"].get<double>() == doctest::Approx(mape).epsilon(1e-9));
  CHECK(j["summary"]["n"] == unfitted);
  CHECK_MESSAGE(mape <= kUnfittedMapeBoundPct,
                "unfitted MAPE " << mape << "% above the regression bound");
  // Groups over the unfitted cases; each partition covers all of them.
  for (const char* g : {"by_source", "by_metric", "by_gpu_generation", "by_kind", "by_job_size"}) {
    CAPTURE(g);
    int n = 0, total = 0;
    for (auto& x : j[g]) {
      n += x["n"].get<int>();
      total += x["total"].get<int>();
      CHECK(x["n"].get<int>() <= x["total"].get<int>());
    }
    CHECK(n == unfitted);
    CHECK(total == j["summary"]["total"].get<int>());
  }
  std::set<std::string> sizes;
  for (auto& x : j["by_job_size"]) sizes.insert(x["group"].get<std::string>());
  for (const auto& s : sizes)
    CHECK((s == "1-8" || s == "9-256" || s == "257-2048" || s == ">2048"));
  CHECK(std::string(tutti::job_size_group(8)) == "1-8");
  CHECK(std::string(tutti::job_size_group(9)) == "9-256");
  CHECK(std::string(tutti::job_size_group(2048)) == "257-2048");
  CHECK(std::string(tutti::job_size_group(2049)) == ">2048");
}

TEST_CASE("validation: the shipped case file is the shared one, byte for byte") {
  namespace fs = std::filesystem;
  // ../shared next to the repository root (or next to a folder above it, for a git worktree).
  fs::path shared;
  for (fs::path p = fs::weakly_canonical(fs::path(src("."))).parent_path();
       !p.empty() && p != p.root_path(); p = p.parent_path())
    if (fs::exists(p / "shared/data/validation/published-public.json")) {
      shared = p / "shared/data/validation";
      break;
    }
  if (shared.empty()) {
    // ../shared is not part of a clean clone: nothing to compare with.
    MESSAGE("no ../shared/data/validation next to the repository: comparison skipped");
    return;
  }
  CHECK(read_text(src(kCases)) == read_text((shared / "published-public.json").string()));
}

TEST_CASE("validation: notes, source, derived_fields and model.name are never read") {
  if (tutti::testing::skip_under_sanitizers("the whole published case set, twice")) return;
  json blank = shipped();
  for (auto& c : blank) {
    c["notes"] = "";
    c["source"] = "";
    if (c.contains("derived_fields")) c["derived_fields"] = json::array();
    c["model"]["name"] = "";
  }
  json a = validate({"--cases", kCases});
  json b = validate({"--cases", write(blank)});
  REQUIRE(a["cases"].size() == b["cases"].size());
  for (std::size_t i = 0; i < a["cases"].size(); ++i) {
    CAPTURE(a["cases"][i]["id"]);
    // Identical to the last digit: the doubles compare equal, and so do the assumptions.
    CHECK(a["cases"][i]["predicted"].get<double>() == b["cases"][i]["predicted"].get<double>());
    CHECK(a["cases"][i]["assumptions"] == b["cases"][i]["assumptions"]);
    CHECK(a["cases"][i]["layout"] == b["cases"][i]["layout"]);
  }
  CHECK(a["skipped"] == b["skipped"]);
  CHECK(a["inconsistent"].size() == b["inconsistent"].size());
}

TEST_CASE("validation: every applied default is in the case's assumptions") {
  if (tutti::testing::skip_under_sanitizers("the whole published case set")) return;
  json j = validate({"--cases", kCases, "--only", "narayanan21-t1-1.7b-32gpu"});
  REQUIRE(j["cases"].size() == 1);
  std::string all;
  for (auto& a : j["cases"][0]["assumptions"]) all += a.get<std::string>() + "\n";
  // ffn_hidden and micro_batch are null in that case; attention follows software.date (2021-04).
  CHECK(all.find("ffn_hidden = 4*hidden") != std::string::npos);
  CHECK(all.find("micro_batch 1 (not stated)") != std::string::npos);
  CHECK(all.find("attention unfused") != std::string::npos);
  // sharding "none" is stated: plain DDP (zero=0), no default recorded for it.
  CHECK(all.find("sharding") == std::string::npos);
  CHECK(j["cases"][0]["layout"].get<std::string>().find("zero=0") != std::string::npos);
  // The md output carries the defaults table.
  auto md = run_tutti({"validate", "--cases", kCases, "--format", "md", "--only", "narayanan21"});
  REQUIRE(md.rc == 0);
  CHECK(md.out.find("### Defaults") != std::string::npos);
  CHECK(md.out.find("| parallel.sharding |") != std::string::npos);
  CHECK(md.out.find("By job size") != std::string::npos);
}

TEST_CASE("validation: stated fields map onto the simulator's settings") {
  // The attention kernel comes from software.attention, else from software.date.
  json c = one_case("narayanan21-t1-1.7b-32gpu");
  c["software"]["attention"] = "flash2";
  json j = run_cases(json::array({c})).json();
  REQUIRE(j["cases"].size() == 1);
  std::string all;
  for (auto& a : j["cases"][0]["assumptions"]) all += a.get<std::string>() + "\n";
  CHECK(all.find("attention") == std::string::npos);
  // Sharding stages.
  auto layout_of = [&](const std::string& sharding) {
    json x = c;
    x["parallel"]["sharding"] = sharding;
    json r = run_cases(json::array({x})).json();
    REQUIRE(r["cases"].size() == 1);
    return r["cases"][0]["layout"].get<std::string>();
  };
  CHECK(layout_of("optimizer").find("zero=1") != std::string::npos);
  CHECK(layout_of("optimizer_grads").find("zero=2") != std::string::npos);
  CHECK(layout_of("full").find("zero=3") != std::string::npos);
  // Facts tutti cannot express skip the case with the reason.
  auto skipped = [&](json x) {
    json r = run_cases(json::array({x})).json();
    REQUIRE(r["skipped"].size() == 1);
    return r["skipped"][0]["reason"].get<std::string>();
  };
  // Hybrid sharding and FSDP's reshard_after_forward map onto shard_group and reshard.
  {
    json h = c;
    h["parallel"]["sharding"] = "full";
    h["parallel"]["shard_group"] = 8;
    h["parallel"]["reshard_after_forward"] = false;
    json r = run_cases(json::array({h})).json();
    REQUIRE(r["cases"].size() == 1);
    std::string lay = r["cases"][0]["layout"].get<std::string>();
    CHECK(lay.find("shard_group=8") != std::string::npos);
    CHECK(lay.find("reshard=0") != std::string::npos);
  }
  json g = c;
  g["hardware"]["fabric"] = "efa";
  CHECK(skipped(g).find("fabric 'efa'") != std::string::npos);
  g = c;
  g["hardware"]["fabric"] = "nvlink";
  CHECK(skipped(g).find("exceed the NVLink domain") != std::string::npos);
  g = c;
  g["hardware"]["inter_node_per_gpu_gbps"] = 123;
  CHECK(skipped(g).find("no server in the hardware catalog") != std::string::npos);
  g = c;
  g["hardware"]["gpu_id"] = "tpu-v4";
  CHECK(skipped(g).find("not in the hardware catalog") != std::string::npos);
  g = c;
  g["measured"]["metric"] = "watts";
  CHECK(skipped(g).find("metric 'watts' is not predicted") != std::string::npos);
  // A GEMM microbenchmark states its shape in the gemm block (never in model.name).
  json gemm = one_case("azure-gemm-h100-fp8-8192cube");
  CHECK(skipped(gemm).find("without a gemm section") != std::string::npos);
  gemm["gemm"] = {{"m", 8192}, {"n", 8192}, {"k", 8192}, {"groups", 1}, {"layout", "dense"}};
  json gj = run_cases(json::array({gemm})).json();
  REQUIRE(gj["cases"].size() == 1);
  CHECK(gj["cases"][0]["predicted"].get<double>() > 500);
  gemm["gemm"]["layout"] = "grouped-masked";
  CHECK(skipped(gemm).find("grouped GEMM") != std::string::npos);
  g = c;
  g["hardware"]["power_limit_w"] = 300;
  CHECK(skipped(g).find("power limit") != std::string::npos);
  // The whole MoE block is used: shared experts and dense layers change the model.
  json moe = c;
  moe["model"]["params"] = nullptr;
  moe["model"]["moe"] = {{"experts", 8},        {"topk", 2},         {"expert_ffn_hidden", 1024},
                         {"shared_experts", 1}, {"dense_layers", 2}, {"moe_layer_freq", 1},
                         {"dropless", true}};
  json m1 = run_cases(json::array({moe})).json();
  REQUIRE(m1["cases"].size() == 1);
  CHECK(m1["cases"][0]["kind"] == "moe");
  json moe2 = moe;
  moe2["model"]["moe"]["shared_experts"] = 0;
  json m2 = run_cases(json::array({moe2})).json();
  REQUIRE(m2["cases"].size() == 1);
  CHECK(m1["cases"][0]["predicted"] != m2["cases"][0]["predicted"]);
  moe2["model"]["moe"]["moe_layer_freq"] = 2;
  CHECK(skipped(moe2).find("moe_layer_freq 2") != std::string::npos);
  // Routing: forced balance spreads tokens evenly; learned dropless routing (false or not stated)
  // carries the auxiliary-loss default skew (slower); capacity-limited routing caps it at 1.0.
  auto routed = [&](const json& fb, bool dropless) {
    json x = moe;
    x["model"]["moe"]["forced_balance"] = fb;
    x["model"]["moe"]["dropless"] = dropless;
    json r = run_cases(json::array({x})).json();
    REQUIRE(r["cases"].size() == 1);
    return r["cases"][0];
  };
  const json forced = routed(true, true), learned = routed(false, true),
             unstated = routed(nullptr, true), capped = routed(false, false);
  CHECK(learned["predicted"].get<double>() < forced["predicted"].get<double>());
  CHECK(unstated["predicted"] == learned["predicted"]);
  CHECK(capped["predicted"] == forced["predicted"]);
  CHECK(learned["assumptions"].dump().find("busiest expert 1.52 x the mean") != std::string::npos);
  CHECK(forced["assumptions"].dump().find("busiest expert") == std::string::npos);
  CHECK(capped["assumptions"].dump().find("capacity factor 1.0") != std::string::npos);
  // Expert tensor parallelism: unstated it is tp (Megatron-Core's default), so EP is carved out of
  // dp and ep = 32 cannot run on dp = 16; etp 1 folds EP over tp x dp; other values are skipped.
  json et = moe;
  et["model"]["moe"]["experts"] = 64;
  et["parallel"]["tp"] = 2;
  et["parallel"]["dp"] = 16;
  et["parallel"]["ep"] = 32;
  et["parallel"]["sp"] = true;
  CHECK(skipped(et).find("ep=32 does not divide dp=16") != std::string::npos);
  et["parallel"]["etp"] = 1;
  json e1 = run_cases(json::array({et})).json();
  REQUIRE(e1["cases"].size() == 1);
  CHECK(e1["cases"][0]["layout"].get<std::string>().find("etp=1") != std::string::npos);
  et["parallel"]["etp"] = 4;
  CHECK(skipped(et).find("etp 4 (neither 1 nor tp = 2)") != std::string::npos);
  // A job on several NVL72 racks runs in equal segments, one per rack (Slurm --segment), not
  // filling the first racks: 128 GPUs are 2 x 64, 72 GPUs (one rack) stay unsegmented.
  json nv = c;
  nv["hardware"]["gpu"] = "GB200";
  nv["hardware"]["gpu_id"] = "gb200";
  nv["hardware"]["gpus_per_node"] = 4;
  nv["hardware"]["nvlink_domain"] = 72;
  nv["hardware"]["inter_node_per_gpu_gbps"] = nullptr;
  nv["hardware"]["num_gpus"] = 128;
  nv["parallel"]["dp"] = 128;
  nv["training"]["global_batch"] = 1024;
  json n1 = run_cases(json::array({nv})).json();
  REQUIRE(n1["cases"].size() == 1);
  CHECK(n1["cases"][0]["assumptions"].dump().find(
            "placement: 2 segments of 64 GPUs, one per 72-GPU NVLink domain") != std::string::npos);
  nv["hardware"]["num_gpus"] = 72;
  nv["parallel"]["dp"] = 72;
  nv["training"]["global_batch"] = 576;
  json n2 = run_cases(json::array({nv})).json();
  REQUIRE(n2["cases"].size() == 1);
  CHECK(n2["cases"][0]["assumptions"].dump().find("placement:") == std::string::npos);
  // training.precision naming MXFP8 selects the block-scaled dtype; other FP8 wording stays fp8.
  nv["training"]["dtype"] = "fp8";
  nv["training"]["precision"] = "MXFP8 (BF16 optimizer states)";
  const json mx = run_cases(json::array({nv})).json();
  nv["training"]["precision"] = "FP8 block-wise";
  const json f8 = run_cases(json::array({nv})).json();
  REQUIRE(mx["cases"].size() == 1);
  REQUIRE(f8["cases"].size() == 1);
  CHECK(mx["cases"][0]["assumptions"].dump().find("dtype mxfp8") != std::string::npos);
  CHECK(f8["cases"][0]["assumptions"].dump().find("mxfp8") == std::string::npos);
  CHECK(mx["cases"][0]["predicted"] != f8["cases"][0]["predicted"]);
}

TEST_CASE("validation: a built model far from model.params is inconsistent, not scored") {
  json c = one_case("narayanan21-t1-1.7b-32gpu");
  c["model"]["params"] = 3.4e9;  // twice the real size
  json j = run_cases(json::array({c})).json();
  CHECK(j["cases"].empty());
  REQUIRE(j["inconsistent"].size() == 1);
  CHECK(j["inconsistent"][0]["stated_params"] == 3.4e9);
  double built = j["inconsistent"][0]["built_params"];
  CHECK(built == doctest::Approx(1.7e9).epsilon(0.05));
  CHECK(j["summary"]["n"] == 0);
}

TEST_CASE("validation: unknown keys, wrong types and out-of-range values are input errors") {
  json base = one_case("narayanan21-t1-1.7b-32gpu");
  auto expect_error = [&](json c, const std::string& path_part) {
    json arr = json::array({one_case("korthikanti22-22b-8gpu-sp-selective"), c});
    auto r = run_cases(arr);
    CAPTURE(r.err);
    CHECK(r.rc == 2);
    CHECK(r.err.find("case 1 (id \"narayanan21-t1-1.7b-32gpu\")") != std::string::npos);
    CHECK(r.err.find(path_part) != std::string::npos);
    CHECK(r.err.find("expected") != std::string::npos);
  };
  json c = base;
  c["parallel"]["bogus"] = 1;
  expect_error(c, "bogus");
  c = base;
  c["extra_top"] = 1;
  expect_error(c, "extra_top");
  c = base;
  c["parallel"]["tp"] = "2";
  expect_error(c, "parallel.tp");
  // Issue 25: micro_batch 0 or a fraction and gpus_per_node 0 divided by zero; vp 2^31-1 hung.
  c = base;
  c["training"]["micro_batch"] = 0;
  expect_error(c, "training.micro_batch");
  c = base;
  c["training"]["micro_batch"] = 0.5;
  expect_error(c, "training.micro_batch");
  c = base;
  c["hardware"]["gpus_per_node"] = 0;
  expect_error(c, "hardware.gpus_per_node");
  c = base;
  c["parallel"]["vp"] = 2147483647;
  expect_error(c, "parallel.vp");
  c = base;
  c["hardware"]["num_gpus"] = 1e12;
  expect_error(c, "hardware.num_gpus");
  c = base;
  c["training"]["global_batch"] = 1099511627776LL;  // 2^40
  expect_error(c, "training.global_batch");
  c = base;
  c["model"]["kv_heads"] = 48;  // above heads (24)
  expect_error(c, "model.kv_heads");
  c = base;
  c["software"]["date"] = "2021-13";
  expect_error(c, "software.date");
  c = base;
  c["hardware"]["fabric"] = "slingshot";
  expect_error(c, "hardware.fabric");
  c = base;
  c["measured"]["value"] = -3;
  expect_error(c, "measured.value");
  // Degrees inside their ranges whose product overflows a 64-bit integer: skipped, no UB.
  c = base;
  for (const char* k : {"tp", "pp", "dp", "cp"}) c["parallel"][k] = 1 << 20;
  json j = run_cases(json::array({c})).json();
  REQUIRE(j["skipped"].size() == 1);
  CHECK(j["skipped"][0]["reason"].get<std::string>().find("does not equal") != std::string::npos);
  // Not an array.
  std::string dir = temp_dir();
  auto notarray =
      run_shell("echo '{\"id\": 1}' > " + dir + "/x.json && " + std::string(TUTTI_BINARY_DIR) +
                "/tutti validate --cases " + dir + "/x.json");
  CHECK(notarray.rc == 2);
  CHECK(notarray.err.find("expected an array of cases") != std::string::npos);
}

TEST_CASE("validation: several case files are scored together, ids unique across them") {
  json a = json::array({one_case("narayanan21-t1-1.7b-32gpu")});
  json b = json::array({one_case("korthikanti22-22b-8gpu-sp-selective")});
  std::string fa = write(a, "a.json"), fb = write(b, "b.json");
  json j = validate({"--cases", fa, "--cases", fb});
  CHECK(j["total_cases"] == 2);
  CHECK(j["files"].size() == 2);
  auto dup = run_tutti({"validate", "--cases", fa, "--cases", write(a, "c.json")});
  CHECK(dup.rc == 2);
  CHECK(dup.err.find("a.json") != std::string::npos);
  CHECK(dup.err.find("c.json") != std::string::npos);
}

TEST_CASE("validation: parsed case documents give what the case files give") {
  // validate_cases(std::vector<Doc>) (the fuzz target's entry, no temporary file) is
  // validate_cases(paths) after reading each file: same report, same first error.
  using tutti::Doc;
  tutti::ValidationOptions o;
  o.engine = "analytic";
  json a = json::array({one_case("narayanan21-t1-1.7b-32gpu")});
  json b = json::array({one_case("korthikanti22-22b-8gpu-sp-selective")});
  std::string fa = write(a, "doc-a.json"), fb = write(b, "doc-b.json");
  auto from_files = tutti::validate_cases(std::vector<std::string>{fa, fb}, o);
  auto from_docs = tutti::validate_cases(std::vector<Doc>{Doc::load(fa), Doc::load(fb)}, o);
  CHECK(from_docs.cases.size() == 2);
  CHECK(tutti::to_json(from_docs).dump() == tutti::to_json(from_files).dump());
  CHECK(tutti::to_table(from_docs, true) == tutti::to_table(from_files, true));
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const tutti::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // A duplicate id across files and a malformed case: the same first error either way.
  json bad = a;
  bad.push_back(b[0]);
  bad[1]["parallel"]["tp"] = "eight";
  std::string fc = write(bad, "doc-c.json");
  for (const auto& files : std::vector<std::vector<std::string>>{{fa, fc}, {fc, fa}, {fb, fc}}) {
    std::vector<Doc> docs;
    for (const auto& f : files) docs.push_back(Doc::load(f));
    const std::string want = message([&] { (void)tutti::validate_cases(files, o); });
    CAPTURE(want);
    CHECK(want != "no error");
    CHECK(message([&] { (void)tutti::validate_cases(docs, o); }) == want);
  }
  CHECK_THROWS_AS(tutti::validate_cases(std::vector<Doc>{}, o), tutti::InputError);
}

TEST_CASE("validation: cases named by the profile's fitted_to lists are reported apart") {
  json profile = json::parse(read_text(src("sim/calibration/default.json")));
  json listing = {{"a", {{"fitted_to", {"file:bench/data/x.csv"}}}},
                  {"b", json::array({{{"fitted_to", {"case:y"}}}})}};
  CHECK(tutti::fitted_entries(listing) ==
        std::vector<std::string>{"file:bench/data/x.csv", "case:y"});
  profile["compute"]["gemm"]["fitted_to"] = {"case:narayanan21-t1-1.7b-32gpu",
                                             "source:korthikanti2022"};
  auto entries = tutti::fitted_entries(profile);
  CHECK(std::count(entries.begin(), entries.end(), "case:narayanan21-t1-1.7b-32gpu") == 1);
  CHECK(std::count(entries.begin(), entries.end(), "source:korthikanti2022") == 1);
  std::string path = write(profile, "profile.json");
  bool parser_takes_fitted_to = true;
  try {
    (void)tutti::load_calibration(path);
  } catch (const tutti::InputError&) {
    parser_takes_fitted_to = false;
  }
  if (!parser_takes_fitted_to) {
    // fitted_to keys reach the calibration parser with branch calib (issue 16 point 5).
    MESSAGE("the calibration parser does not accept fitted_to yet: end-to-end check skipped");
    return;
  }
  json three =
      json::array({one_case("narayanan21-t1-1.7b-32gpu"), one_case("narayanan21-t1-3.6b-64gpu"),
                   one_case("korthikanti22-22b-8gpu-sp-selective")});
  json j = validate({"--cases", write(three, "three.json"), "--calibration", path});
  CHECK(j["fitted"]["n"] == 2);
  CHECK(j["summary"]["n"] == 1);
  int fitted = 0;
  for (auto& c : j["cases"]) {
    bool expect = c["id"] == "narayanan21-t1-1.7b-32gpu" || c["source_key"] == "korthikanti2022";
    CHECK(c["fitted"].get<bool>() == expect);
    fitted += expect;
  }
  CHECK(j["fitted"]["n"] == fitted);
  for (auto& g : j["by_source"]) CHECK(g["group"] != "korthikanti2022");
}

TEST_CASE("validation: the case schema agrees with the reader") {
  json schema = tutti::load_schema(src("schemas/validation_cases.schema.json"));
  CHECK(tutti::format_schema_errors(tutti::validate_schema(schema, shipped())) == "");
  json base = one_case("narayanan21-t1-1.7b-32gpu");
  std::vector<std::pair<const char*, json>> broken = {
      {"/parallel/bogus", 1},         {"/parallel/vp", 2147483647},   {"/training/micro_batch", 0},
      {"/training/micro_batch", 0.5}, {"/hardware/gpus_per_node", 0}, {"/software/date", "21-04"},
      {"/model/mlp", "swiglu"},       {"/parallel/sharding", "zero3"}};
  for (const auto& [ptr, v] : broken) {
    const std::string pointer = ptr;  // clang 14 cannot capture a structured binding
    CAPTURE(pointer);
    json c = base;
    c[json::json_pointer(ptr)] = v;
    json arr = json::array({c});
    CHECK_FALSE(tutti::validate_schema(schema, arr).empty());
    CHECK(run_cases(arr).rc == 2);
  }
}

TEST_CASE("validation: deterministic output") {
  if (tutti::testing::skip_under_sanitizers("two validate runs over a published subset")) return;
  auto a = run_tutti({"validate", "--cases", kCases, "--json", "--only", "korthikanti"});
  auto b = run_tutti({"validate", "--cases", kCases, "--json", "--only", "korthikanti"});
  CHECK(a.rc == 0);
  CHECK(a.out == b.out);
  auto bad = run_tutti({"validate", "--cases", "-"}, "");
  CHECK(bad.rc == 2);
}

TEST_CASE("validation: training.recompute is read as a module list only in Megatron's names") {
  json c = one_case("korthikanti22-22b-8gpu-sp-selective");
  auto run = [&](const std::string& words) {
    json x = c;
    x["training"]["recompute"] = words;
    json r = run_cases(json::array({x})).json();
    REQUIRE(r["cases"].size() == 1);
    std::string all;
    for (auto& a : r["cases"][0]["assumptions"]) all += a.get<std::string>() + "\n";
    return std::make_pair(r["cases"][0]["layout"].get<std::string>(), all);
  };
  const auto first = run("selective: layernorm mlp");
  const std::string mapped = first.first, why = first.second;
  CHECK(mapped.find("recompute=selective") != std::string::npos);
  CHECK(mapped.find("recompute_modules=layernorm+mlp") != std::string::npos);
  CHECK(why.find("recompute modules layernorm+mlp") != std::string::npos);
  CHECK(
      run("selective: moe_act mlp (reproduce guide)").first.find("recompute_modules=moe_act+mlp") !=
      std::string::npos);
  // Words that are not exactly Megatron's module names keep the default (core_attn).
  for (const char* words : {"norm, act", "selective: mlp up_proj", "selective + sequence parallel",
                            "selective: mla_up_proj"}) {
    CAPTURE(words);
    const auto got = run(words);
    const std::string lay = got.first, notes = got.second;
    CHECK(lay.find("recompute=selective") != std::string::npos);
    CHECK(lay.find("recompute_modules") == std::string::npos);
    CHECK(notes.find("names no exact Megatron module list") != std::string::npos);
  }
}
