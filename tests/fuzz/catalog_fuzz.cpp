// Hardware catalog files: the input replaces one embedded catalog file (its first byte picks which,
// in the sorted order CMake embeds them), so cross-references between files are exercised too.
#include "fuzz_common.hpp"
#include "tutti/topologies/catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    using namespace tutti;
    if (text.empty()) return;
    auto files = embedded_catalog_files();
    files[static_cast<unsigned char>(text[0]) % files.size()].second = text.substr(1);
    (void)Catalog::parse(files);
  });
}
