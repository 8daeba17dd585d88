// Workload files: parse, resolve and check the layout, memory, and the Program when it is small.
#include "fuzz_common.hpp"
#include "tutti/models/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    using namespace tutti;
    Workload w = parse_workload(text, "fuzz.json");
    Layout l = resolve_layout(w, "", 0);
    check_layout(w, l);
    (void)params(w);
    (void)tokens_to_train(w);
    (void)memory_per_gpu(w, l);
    if (double(microbatches(w, l)) * (w.model.tf.layers + 1) * l.vp <= 2048) {
      Program p = expand_program(w, l);
      (void)summarize(p);
    }
  });
}
