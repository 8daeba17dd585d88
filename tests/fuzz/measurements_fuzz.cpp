// Measurement documents written by `tutti exec bench|replay` and read by calibrate and validate.
#include "fuzz_common.hpp"
#include "tutti/exec/measurements.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    (void)tutti::exec::parse_measurements(text, "fuzz.json");
  });
}
