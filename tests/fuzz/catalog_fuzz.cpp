// Hardware catalog files: the input replaces one embedded catalog file (its first byte picks which,
// in the sorted order CMake embeds them), so cross-references between files are exercised too.
// The unchanged files are read once (Catalog::read_file) and only the replaced one per input;
// Catalog::join then runs what Catalog::parse runs after reading each file (unique ids across
// files, references between files), with the same first error as parse (catalog.hpp), so the
// target checks what parsing the ten unchanged files and the new one would, ~10x faster.
#include "fuzz_common.hpp"
#include "tutti/topologies/catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tutti;
  static const std::vector<Catalog::File> unchanged = [] {
    std::vector<Catalog::File> out;
    for (const auto& [name, text] : embedded_catalog_files())
      out.push_back(Catalog::read_file(name, text));
    return out;
  }();
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    if (text.empty()) return;
    const auto& files = embedded_catalog_files();
    std::size_t k = static_cast<unsigned char>(text[0]) % files.size();
    std::vector<Catalog::File> parts = unchanged;
    parts[k] = Catalog::read_file(files[k].first, text.substr(1));
    (void)Catalog::join(parts);
  });
}
