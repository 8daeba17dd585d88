// Calibration profiles: parse, then write back and parse again (calibrate's own round trip).
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/sim/calibration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    using namespace tutti;
    CalibrationProfile p = parse_calibration(text, "fuzz.json");
    nlohmann::json j;
    to_json(j, p);
    (void)parse_calibration(write_json_text(j), "round trip");
  });
}
