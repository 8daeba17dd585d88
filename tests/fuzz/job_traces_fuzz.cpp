// Job traces read by `tutti cluster`: the first byte picks the reader (SWF, Slurm sacct
// --parsable2, tutti JSON job list; 0, 1, 2 modulo 3), the rest is the trace text.
#include "fuzz_common.hpp"
#include "tutti/cluster/jobs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    using namespace tutti;
    if (text.empty()) return;
    const std::string body = text.substr(1);
    switch (static_cast<unsigned char>(text[0]) % 3) {
      case 0:
        (void)read_swf(body, "fuzz.swf");
        break;
      case 1:
        (void)read_sacct(body, "fuzz.txt");
        break;
      default:
        (void)read_job_json(body, "fuzz.json");
        break;
    }
  });
}
