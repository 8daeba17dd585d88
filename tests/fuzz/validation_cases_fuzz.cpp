// Validation case files: every case is read, and predicted (analytic engine) when the file is
// cheap enough to predict at a useful fuzzing rate under ASan: at most kMaxPasses micro-batch x
// layer passes per pipeline summed over its cases (a 1T-parameter case on 512 GPUs holds 65,536,
// ~30 s instrumented, a slow input rather than a hang) and no case on more than kMaxGpus GPUs.
// The GPU bound: most of the time of a prediction is the max-min flow simulation of the
// collectives that cross the fabric (simulate_collectives), which grows with the GPUs of a
// pipeline stage (one seed each, instrumented, wall on a loaded machine: 0.01-0.4 s on 8-16
// GPUs, 0.5-0.7 s on 64, 1.2 s on 128, 5 s on 512). 16 GPUs are two 8-GPU servers, so the
// multi-node paths still run; bench/fuzz.md has the rate and coverage trade-off.
// Larger files are read and checked in full but not predicted (ValidationOptions::only matching
// no id); the golden tests predict them. The text is parsed once (Doc::parse) and handed to
// validate_cases as a document: no temporary file.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "tutti/core/config.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/validation/validation.hpp"

namespace {

constexpr double kMaxPasses = 8192;
constexpr double kMaxGpus = 16;

double field(const nlohmann::json& c, const char* section, const char* key) {
  if (!c.is_object() || !c.contains(section) || !c[section].is_object()) return 1;
  const auto& s = c[section];
  if (!s.contains(key) || !s[key].is_number()) return 1;
  double v = s[key].get<double>();
  return v >= 1 ? v : 1;
}

/// Upper estimate of the layer passes the analytic engine runs for a case file.
double passes(const nlohmann::json& j) {
  if (!j.is_array()) return 0;
  double sum = 0;
  for (const auto& c : j)
    sum += field(c, "training", "global_batch") /
           (field(c, "training", "micro_batch") * field(c, "parallel", "dp")) *
           (field(c, "model", "layers") + 1) * field(c, "parallel", "vp");
  return sum;
}

/// Largest GPU count of a case in the file.
double max_gpus(const nlohmann::json& j) {
  if (!j.is_array()) return 0;
  double m = 0;
  for (const auto& c : j) m = std::max(m, field(c, "hardware", "num_gpus"));
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    using namespace tutti;
    std::vector<Doc> docs;
    docs.push_back(Doc::parse(text, "fuzz-cases.json"));
    ValidationOptions vo;
    vo.engine = "analytic";
    const nlohmann::json& j = docs.front().json();
    if (passes(j) > kMaxPasses || max_gpus(j) > kMaxGpus)
      vo.only = std::string("\x01(read only)\x01");
    ValidationReport rep = validate_cases(docs, vo);
    (void)write_json_text(to_json(rep));
  });
}
