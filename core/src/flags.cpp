#include "tutti/core/flags.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "tutti/core/error.hpp"

namespace tutti {

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto comma = text.find(',', pos);
    auto item = text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

std::vector<FlagItem> split_flag_items(std::string_view text, const std::string& flag,
                                       const std::string& expected) {
  std::vector<FlagItem> items;
  for (const std::string& item : split_list(text)) {
    auto eq = item.find('=');
    if (eq == std::string_view::npos) throw InputError(flag, item, "\"" + item + "\"", expected);
    FlagItem next{item.substr(0, eq), item.substr(eq + 1)};
    for (const FlagItem& prev : items)
      if (prev.key == next.key)  // `--parallel tp=2,tp=4`: which one was meant is not ours to guess
        throw InputError(flag, next.key,
                         "\"" + next.key + "\" twice (" + prev.key + "=" + prev.value + ", " +
                             next.key + "=" + next.value + ")",
                         "each key at most once");
    items.push_back(std::move(next));
  }
  return items;
}

long long flag_integer(const FlagItem& item, const std::string& flag, long long lo, long long hi) {
  long long v = 0;
  const std::string& s = item.value;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi)
    throw InputError(flag, item.key, "\"" + s + "\"",
                     fmt::format("an integer in [{}, {}]", lo, hi));
  return v;
}

double flag_number(const FlagItem& item, const std::string& flag, double lo, double hi) {
  const std::string& s = item.value;
  char* end = nullptr;
  double v = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < lo || v > hi)
    throw InputError(flag, item.key, "\"" + s + "\"",
                     fmt::format("a number in [{:g}, {:g}]", lo, hi));
  return v;
}

}  // namespace tutti
