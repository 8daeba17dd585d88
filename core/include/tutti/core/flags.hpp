#pragma once
// Command-line flags of the form `--flag KEY=VALUE,KEY=VALUE` (--parallel, --facility): one
// splitter and typed value readers, so every such flag reports errors the same way
// (`--flag: KEY: got "VALUE", expected ...`, exit 2).
#include <string>
#include <string_view>
#include <vector>

namespace tutti {

struct FlagItem {
  std::string key, value;
};

/// Splits a comma-separated list; empty items are skipped.
std::vector<std::string> split_list(std::string_view text);

/// Splits `text` on commas into KEY=VALUE items; empty items are skipped. Throws InputError
/// naming `flag` when an item has no '='; `expected` describes the whole flag's syntax.
std::vector<FlagItem> split_flag_items(std::string_view text, const std::string& flag,
                                       const std::string& expected);

/// The item's value as an integer in [lo, hi]; throws InputError naming flag and key otherwise.
long long flag_integer(const FlagItem& item, const std::string& flag, long long lo, long long hi);
/// The item's value as a finite number in [lo, hi]; throws InputError otherwise.
double flag_number(const FlagItem& item, const std::string& flag, double lo, double hi);

}  // namespace tutti
