// Cluster files: parse (fabric generators, routing tables, bill of materials run inside).
#include "fuzz_common.hpp"
#include "tutti/core/config.hpp"
#include "tutti/topologies/cluster.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    using namespace tutti;
    Cluster c = parse_cluster(Doc::parse(text, "fuzz.json"));
    (void)c.gpus();
  });
}
