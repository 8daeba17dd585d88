// Validation case files: every case is read and predicted (analytic engine).
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/sim/validation.hpp"

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
    ValidationReport rep = validate_cases(path, vo);
    (void)write_json_text(to_json(rep));
  });
}
