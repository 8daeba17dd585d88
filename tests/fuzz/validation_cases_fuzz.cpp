// Validation case files: every case is read, and predicted (analytic engine) when the file is
// small enough to predict within the fuzz timeout under ASan: at most kMaxPasses micro-batch x
// layer passes per pipeline summed over its cases (a 1T-parameter case on 512 GPUs holds 65,536,
// ~30 s instrumented, a slow input rather than a hang). Larger files are read and checked in full
// but not predicted (ValidationOptions::only matching no id); the golden tests predict them.
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/validation/validation.hpp"

namespace {

constexpr double kMaxPasses = 8192;

double field(const nlohmann::json& c, const char* section, const char* key) {
  if (!c.is_object() || !c.contains(section) || !c[section].is_object()) return 1;
  const auto& s = c[section];
  if (!s.contains(key) || !s[key].is_number()) return 1;
  double v = s[key].get<double>();
  return v >= 1 ? v : 1;
}

/// Upper estimate of the layer passes the analytic engine runs for `text` (as a case file).
double passes(const std::string& text) {
  nlohmann::json j;
  try {
    j = tutti::parse_json_text(text, "fuzz.json");
  } catch (const tutti::InputError&) {
    return 0;  // validate_cases reports it
  }
  if (!j.is_array()) return 0;
  double sum = 0;
  for (const auto& c : j)
    sum += field(c, "training", "global_batch") /
           (field(c, "training", "micro_batch") * field(c, "parallel", "dp")) *
           (field(c, "model", "layers") + 1) * field(c, "parallel", "vp");
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = [] {
    char buf[] = "/tmp/tutti-fuzz-cases-XXXXXX";
    int fd = mkstemp(buf);
    if (fd >= 0) close(fd);
    return std::string(buf);
  }();
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    using namespace tutti;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    ValidationOptions vo;
    vo.engine = "analytic";
    if (passes(text) > kMaxPasses) vo.only = std::string("\x01(read only)\x01");
    ValidationReport rep = validate_cases(path, vo);
    (void)write_json_text(to_json(rep));
  });
}
