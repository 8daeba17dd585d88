#include "tutti/core/error.hpp"

namespace tutti {

namespace {
// Control characters from input (a NUL in a key, an ESC) would truncate or garble the message on
// a terminal; they are written as \u00XX. Newlines and tabs stay (multi-line suggestions).
std::string printable(std::string s) {
  std::string out;
  out.reserve(s.size());
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string compose(const std::string& file, const std::string& path, const std::string& found,
                    const std::string& expected) {
  // Appends only: GCC 12 warns -Wrestrict on `str + ": "` (a false positive, GCC bug 105329).
  std::string m;
  for (const std::string* part : {&file, &path}) {
    if (part->empty()) continue;
    m.append(*part).append(": ");
  }
  m.append("got ").append(found).append(", expected ").append(expected);
  return printable(std::move(m));
}
}  // namespace

InputError::InputError(std::string file, std::string key_path, std::string found,
                       std::string expected)
    : std::runtime_error(compose(file, key_path, found, expected)),
      file_(std::move(file)),
      key_path_(std::move(key_path)),
      found_(std::move(found)),
      expected_(std::move(expected)) {}

InputError::InputError(std::string message) : std::runtime_error(printable(std::move(message))) {}

}  // namespace tutti
