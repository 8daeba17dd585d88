#include "common.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tutti/core/error.hpp"
#include "tutti/core/json_text.hpp"

namespace tutti::cli {

void emit(const Globals& g, const std::string& text) {
  if (g.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  std::ofstream out(g.output, std::ios::binary);
  if (!out) throw InputError(g.output + ": cannot write output file");
  out << text;
  if (!out) throw InputError(g.output + ": write failed");
}

void emit_json(const Globals& g, const nlohmann::json& j) {
  emit(g, write_json_text(j, 2) + "\n");
}

void note(const Globals& g, const std::string& text) {
  if (g.verbosity < 0) return;
  std::fputs(text.c_str(), stderr);
  if (text.empty() || text.back() != '\n') std::fputc('\n', stderr);
}

std::string read_text(const std::string& path) {
  std::error_code ec;  // only regular files: /dev/zero or a FIFO would never end
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw InputError(path, "(file)", "not a regular file", "a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%") ==
          std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int not_landed(const std::string& what, int issue) {
  std::fprintf(stderr,
               "tutti: %s has not landed yet (tracked in issue %d); refusing to print invented "
               "numbers.\n",
               what.c_str(), issue);
  return kUsage;
}

}  // namespace tutti::cli
