#include "tutti/core/error.hpp"

namespace tutti {

namespace {
std::string compose(const std::string& file, const std::string& path, const std::string& found,
                    const std::string& expected) {
  // Appends only: GCC 12 warns -Wrestrict on `str + ": "` (a false positive, GCC bug 105329).
  std::string m;
  for (const std::string* part : {&file, &path}) {
    if (part->empty()) continue;
    m.append(*part).append(": ");
  }
  m.append("got ").append(found).append(", expected ").append(expected);
  return m;
}
}  // namespace

InputError::InputError(std::string file, std::string key_path, std::string found,
                       std::string expected)
    : std::runtime_error(compose(file, key_path, found, expected)),
      file_(std::move(file)),
      key_path_(std::move(key_path)),
      found_(std::move(found)),
      expected_(std::move(expected)) {}

InputError::InputError(std::string message) : std::runtime_error(std::move(message)) {}

}  // namespace tutti
