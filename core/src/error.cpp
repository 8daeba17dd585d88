#include "tutti/core/error.hpp"

namespace tutti {

namespace {
std::string compose(const std::string& file, const std::string& path, const std::string& found,
                    const std::string& expected) {
  std::string m;
  if (!file.empty()) m += file + ": ";
  if (!path.empty()) m += path + ": ";
  m += "got " + found + ", expected " + expected;
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
