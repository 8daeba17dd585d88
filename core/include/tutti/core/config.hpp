#pragma once
#include "tutti/core/enum.hpp"
// Strict configuration reader (docs/style.md habit 3). Every input file (workload, cluster,
// catalog, calibration profile, plan request) is read through these views, which:
//   * name the file and the key path in every error (`cluster.json: fabric.spine.radix: got 0,
//     expected >= 2`),
//   * reject unknown keys (Obj::done), missing keys (Obj::req), wrong types and bad units,
//   * parse quantities with units through parse_quantity (units.hpp), the one place that does.
// Command-line overrides (`--set fabric.oversubscription=2`) are applied to the JSON before the
// parser sees it, so they pass through exactly the same checks.
//
// Usage:
//   auto doc = Doc::load("cluster.json", overrides);
//   Obj root = doc.root();
//   int n = root.req("nodes").integer(1, 1 << 20);
//   double bw = root.req("nic_bandwidth").quantity(Dim::Bandwidth);
//   root.done();   // throws on any key that no call above asked for
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tutti/core/units.hpp"

namespace tutti {

class Obj;
class Arr;

/// A parsed JSON document with its file name (or "<string>", "--set").
class Doc {
 public:
  /// Reads and parses `path`, then applies each `KEY.PATH=VALUE` override in order.
  /// Throws InputError for a missing file, malformed JSON or a bad override.
  static Doc load(const std::string& path, const std::vector<std::string>& overrides = {});
  /// Parses JSON text; `name` is used in messages in place of a file name.
  static Doc parse(std::string_view text, std::string name,
                   const std::vector<std::string>& overrides = {});
  /// Wraps an existing JSON value (copied).
  static Doc from_json(const nlohmann::json& j, std::string name);

  Obj root() const;  ///< The top level, which must be an object.
  const nlohmann::json& json() const;
  const std::string& name() const;

 private:
  struct State;
  std::shared_ptr<State> s_;
};

/// Applies one `a.b.c=value` override to `j` (value parsed as JSON, else taken as a string).
/// Intermediate objects are created as needed; array elements are addressed by index (`nodes.0.x`).
void apply_override(nlohmann::json& j, std::string_view assignment, const std::string& file);

/// A view of one JSON value at a key path.
class Value {
 public:
  Value(std::shared_ptr<const void> keep, const nlohmann::json* j, std::string file,
        std::string path);
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  const nlohmann::json& json() const { return *j_; }

  bool is_object() const;
  bool is_array() const;
  bool is_string() const;
  bool is_number() const;
  bool is_null() const;

  Obj obj() const;  ///< Requires an object.
  Arr arr() const;  ///< Requires an array.
  double number(double min = -std::numeric_limits<double>::infinity(),
                double max = std::numeric_limits<double>::infinity()) const;
  std::int64_t integer(std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  std::string string() const;
  bool boolean() const;
  /// A string that must be one of `options`.
  std::string choice(std::initializer_list<std::string_view> options) const;
  std::string choice(const std::string_view* options,
                     std::size_t n) const;  ///< The same, from an array.
  /// One of a table-declared enum's names (core/enum.hpp), as that enumerator; else InputError
  /// listing the names. The one way an input file names an enumerator.
  template <TableEnum E>
  E enumerator() const {
    constexpr auto& names = EnumTable<E>::names;
    std::array<std::string_view, names.size()> opts{};
    for (std::size_t i = 0; i < names.size(); ++i) opts[i] = names[i];
    return *parse_enum<E>(choice(opts.data(), opts.size()));
  }
  /// A quantity string with units ("400Gbps"), converted to SI, checked against [min, max].
  /// Plain numbers are rejected: units are required.
  double quantity(Dim d, double min = 0.0,
                  double max = std::numeric_limits<double>::infinity()) const;

  /// Throws InputError naming this value: `file: path: got <json>, expected <expected>`.
  [[noreturn]] void fail(std::string_view expected) const;
  /// A view of a value inside this one (keeps the document alive).
  Value child(const nlohmann::json* j, std::string path) const;

 private:
  std::shared_ptr<const void> keep_;
  const nlohmann::json* j_;
  std::string file_, path_;
};

/// A JSON object whose keys are checked: every key present must be asked for before done().
class Obj {
 public:
  explicit Obj(Value v);
  const std::string& path() const { return v_.path(); }
  const std::string& file() const { return v_.file(); }
  const Value& value() const { return v_; }

  Value req(std::string_view key);                 ///< Missing -> InputError.
  std::optional<Value> opt(std::string_view key);  ///< Absent or null -> nullopt.
  bool has(std::string_view key) const;
  /// Marks `key` as known without reading it (documentation keys such as "source", "notes").
  void allow(std::string_view key);
  /// Every key present in the object, in file order.
  std::vector<std::string> keys() const;

  // Shorthands for the common optional-with-default case.
  double number_or(std::string_view key, double dflt, double min = -1e300, double max = 1e300);
  std::int64_t integer_or(std::string_view key, std::int64_t dflt, std::int64_t min,
                          std::int64_t max);
  std::string string_or(std::string_view key, std::string dflt);
  bool boolean_or(std::string_view key, bool dflt);
  template <TableEnum E>
  E enumerator_or(std::string_view key, E dflt) {
    auto v = opt(key);
    return v ? v->template enumerator<E>() : dflt;
  }
  std::string choice_or(std::string_view key, std::string dflt,
                        std::initializer_list<std::string_view> options);
  double quantity_or(std::string_view key, Dim d, double dflt, double min = 0.0,
                     double max = std::numeric_limits<double>::infinity());

  /// Throws InputError for the first key present that was never asked for, listing the known keys.
  void done() const;

 private:
  std::string child_path(std::string_view key) const;
  Value v_;
  std::vector<std::string> seen_;
};

/// A JSON array view.
class Arr {
 public:
  explicit Arr(Value v);
  std::size_t size() const;
  Value at(std::size_t i) const;
  const std::string& path() const { return v_.path(); }
  const Value& value() const { return v_; }

 private:
  Value v_;
};

/// Short rendering of a JSON value for messages (strings quoted, long values elided).
std::string describe_json(const nlohmann::json& j);

}  // namespace tutti
