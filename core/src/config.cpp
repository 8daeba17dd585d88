#include "tutti/core/config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tutti/core/error.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/core/limits.hpp"

namespace tutti {

using Json = nlohmann::json;

struct Doc::State {
  Json j;
  std::string name;
};

namespace {

std::string join_path(const std::string& base, std::string_view key) {
  if (base.empty()) return std::string(key);
  return base + "." + std::string(key);
}

const char* type_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::null:
      return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a number";
    default:
      return "a value";
  }
}

}  // namespace

std::string describe_json(const Json& j) {
  std::string s = j.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  if (j.is_object() || j.is_array()) return std::string(type_name(j)) + " " + s;
  return s;
}

void apply_override(Json& j, std::string_view assignment, const std::string& file) {
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw InputError("--set", std::string(assignment), "\"" + std::string(assignment) + "\"",
                     "KEY.PATH=VALUE");
  std::string key(assignment.substr(0, eq));
  std::string text(assignment.substr(eq + 1));
  Json value;
  try {
    value = parse_json_text(text, "--set");
  } catch (const JsonTextError& e) {
    if (e.fault() == JsonTextFault::NumberRange)
      throw InputError("--set", key, text,
                       "a number within the range of a double (magnitude <= 1.8e308)");
    if (e.fault() != JsonTextFault::Syntax)
      throw InputError("--set", key, e.what(), "a JSON value or a bare string");
    value = text;  // bare strings: --set fabric.kind=fat_tree
  }
  Json* cur = &j;
  std::string path;
  std::size_t start = 0;
  while (true) {
    auto dot = key.find('.', start);
    std::string part =
        key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw InputError("--set", key, "an empty key segment", "KEY.PATH=VALUE");
    path = join_path(path, part);
    if (cur->is_array()) {
      char* end = nullptr;
      unsigned long idx = std::strtoul(part.c_str(), &end, 10);
      if (*end != '\0' || idx >= cur->size())
        throw InputError(file, path, "\"" + part + "\"",
                         "an index below " + std::to_string(cur->size()));
      cur = &(*cur)[idx];
    } else {
      if (cur->is_null()) *cur = Json::object();
      if (!cur->is_object())
        throw InputError(file, path, describe_json(*cur), "an object to set a key in");
      cur = &(*cur)[part];
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  *cur = std::move(value);
}

Doc Doc::load(const std::string& path, const std::vector<std::string>& overrides) {
  // Only regular files of a sane size: /dev/zero or a FIFO would never end.
  constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t(256) << 20;
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw InputError(path, "(file)", "not a regular file", "a JSON file");
  if (auto size = std::filesystem::file_size(path, ec); !ec && size > kMaxInputBytes)
    throw InputError(path, "(file)", std::to_string(size) + " bytes",
                     "a JSON file of at most 256 MiB");
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path, overrides);
}

Doc Doc::parse(std::string_view text, std::string name, const std::vector<std::string>& overrides) {
  Doc d;
  d.s_ = std::make_shared<State>();
  d.s_->name = std::move(name);
  d.s_->j = parse_json_text(text, d.s_->name);  // depth, duplicate keys, number range checked
  for (const auto& o : overrides) apply_override(d.s_->j, o, d.s_->name);
  return d;
}

Doc Doc::from_json(const Json& j, std::string name) {
  Doc d;
  d.s_ = std::make_shared<State>();
  d.s_->j = j;
  d.s_->name = std::move(name);
  return d;
}

Obj Doc::root() const {
  Value v(s_, &s_->j, s_->name, "");
  if (!s_->j.is_object())
    throw InputError(s_->name, "(top level)", describe_json(s_->j), "a JSON object");
  return Obj(v);
}
const Json& Doc::json() const {
  return s_->j;
}
const std::string& Doc::name() const {
  return s_->name;
}

// ---- Value ----

Value::Value(std::shared_ptr<const void> keep, const Json* j, std::string file, std::string path)
    : keep_(std::move(keep)), j_(j), file_(std::move(file)), path_(std::move(path)) {}

Value Value::child(const Json* j, std::string path) const {
  return Value(keep_, j, file_, std::move(path));
}

bool Value::is_object() const {
  return j_->is_object();
}
bool Value::is_array() const {
  return j_->is_array();
}
bool Value::is_string() const {
  return j_->is_string();
}
bool Value::is_number() const {
  return j_->is_number();
}
bool Value::is_null() const {
  return j_->is_null();
}

void Value::fail(std::string_view expected) const {
  throw InputError(file_, path_.empty() ? "(top level)" : path_, describe_json(*j_),
                   std::string(expected));
}

Obj Value::obj() const {
  if (!j_->is_object()) fail("an object");
  return Obj(*this);
}
Arr Value::arr() const {
  if (!j_->is_array()) fail("an array");
  return Arr(*this);
}

static std::string range_text(double min, double max) {
  bool lo = std::isfinite(min) && min > -1e299, hi = std::isfinite(max) && max < 1e299;
  auto num = [](double x) {
    std::ostringstream o;
    o << x;
    return o.str();
  };
  if (lo && hi) return "a number in [" + num(min) + ", " + num(max) + "]";
  if (lo) return "a number >= " + num(min);
  if (hi) return "a number <= " + num(max);
  return "a number";
}

double Value::number(double min, double max) const {
  if (!j_->is_number()) fail(range_text(min, max));
  double v = j_->get<double>();
  if (!(v >= min && v <= max)) fail(range_text(min, max));
  return v;
}

std::int64_t Value::integer(std::int64_t min, std::int64_t max) const {
  auto text = [&] {
    std::string t = "an integer";
    if (min > std::numeric_limits<std::int64_t>::min() &&
        max < std::numeric_limits<std::int64_t>::max())
      t += " in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    else if (min > std::numeric_limits<std::int64_t>::min())
      t += " >= " + std::to_string(min);
    else if (max < std::numeric_limits<std::int64_t>::max())
      t += " <= " + std::to_string(max);
    return t;
  };
  std::int64_t v = 0;
  if (j_->is_number_unsigned()) {
    auto u = j_->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) fail(text());
    v = static_cast<std::int64_t>(u);
  } else if (j_->is_number_integer()) {
    v = j_->get<std::int64_t>();
  } else if (j_->is_number_float()) {
    double d = j_->get<double>();
    if (std::floor(d) != d || std::fabs(d) > 9e18) fail(text());
    v = static_cast<std::int64_t>(d);
  } else {
    fail(text());
  }
  if (v < min || v > max) fail(text());
  return v;
}

std::string Value::string() const {
  if (!j_->is_string()) fail("a string");
  return j_->get<std::string>();
}

bool Value::boolean() const {
  if (!j_->is_boolean()) fail("true or false");
  return j_->get<bool>();
}

std::string Value::choice(std::initializer_list<std::string_view> options) const {
  return choice(options.begin(), options.size());
}

std::string Value::choice(const std::string_view* options, std::size_t n) const {
  std::string expected = "one of";
  for (std::size_t i = 0; i < n; ++i)
    expected += std::string(" \"") + std::string(options[i]) + "\"";
  if (!j_->is_string()) fail(expected);
  auto s = j_->get<std::string>();
  if (std::find(options, options + n, s) == options + n) fail(expected);
  return s;
}

double Value::quantity(Dim d, double min, double max) const {
  std::optional<double> v;
  if (j_->is_string()) {
    v = parse_quantity(j_->get<std::string>(), d);
  } else if (j_->is_number() && (d == Dim::Count || d == Dim::Ratio)) {
    v = j_->get<double>();
  }
  if (!v) fail(dim_expectation(d));
  max = std::min(max, dim_max(d));  // the one ceiling per dimension (limits.hpp)
  if (!(*v >= min && *v <= max)) {
    std::string e = dim_expectation(d);
    if (min > 0 || (std::isfinite(max)))
      e += " in [" + format_quantity(min, d) + ", " +
           (std::isfinite(max) ? format_quantity(max, d) : std::string("inf")) + "]";
    if (min == 0 && !std::isfinite(max)) e = dim_expectation(d) + " >= 0";
    fail(e);
  }
  return *v;
}

// ---- Obj ----

Obj::Obj(Value v) : v_(std::move(v)) {}

std::string Obj::child_path(std::string_view key) const {
  return join_path(v_.path(), key);
}

Value Obj::req(std::string_view key) {
  allow(key);
  auto it = v_.json().find(std::string(key));
  if (it == v_.json().end())
    throw InputError(v_.file(), child_path(key), "nothing (missing key)",
                     "a value for \"" + std::string(key) + "\"");
  return v_.child(&*it, child_path(key));
}

std::optional<Value> Obj::opt(std::string_view key) {
  allow(key);
  auto it = v_.json().find(std::string(key));
  if (it == v_.json().end() || it->is_null()) return std::nullopt;
  return v_.child(&*it, child_path(key));
}

bool Obj::has(std::string_view key) const {
  auto it = v_.json().find(std::string(key));
  return it != v_.json().end() && !it->is_null();
}

void Obj::allow(std::string_view key) {
  if (std::find(seen_.begin(), seen_.end(), key) == seen_.end()) seen_.emplace_back(key);
}

std::vector<std::string> Obj::keys() const {
  std::vector<std::string> k;
  for (auto it = v_.json().begin(); it != v_.json().end(); ++it) k.push_back(it.key());
  return k;
}

double Obj::number_or(std::string_view key, double dflt, double min, double max) {
  auto v = opt(key);
  return v ? v->number(min, max) : dflt;
}
std::int64_t Obj::integer_or(std::string_view key, std::int64_t dflt, std::int64_t min,
                             std::int64_t max) {
  auto v = opt(key);
  return v ? v->integer(min, max) : dflt;
}
std::string Obj::string_or(std::string_view key, std::string dflt) {
  auto v = opt(key);
  return v ? v->string() : dflt;
}
bool Obj::boolean_or(std::string_view key, bool dflt) {
  auto v = opt(key);
  return v ? v->boolean() : dflt;
}
std::string Obj::choice_or(std::string_view key, std::string dflt,
                           std::initializer_list<std::string_view> options) {
  auto v = opt(key);
  return v ? v->choice(options) : dflt;
}
double Obj::quantity_or(std::string_view key, Dim d, double dflt, double min, double max) {
  auto v = opt(key);
  return v ? v->quantity(d, min, max) : dflt;
}

void Obj::done() const {
  for (auto it = v_.json().begin(); it != v_.json().end(); ++it) {
    if (std::find(seen_.begin(), seen_.end(), it.key()) != seen_.end()) continue;
    std::string known;
    for (const auto& s : seen_) known += (known.empty() ? "" : ", ") + s;
    throw InputError(v_.file(), child_path(it.key()), "unknown key \"" + it.key() + "\"",
                     known.empty() ? std::string("no keys here") : "one of: " + known);
  }
}

// ---- Arr ----

Arr::Arr(Value v) : v_(std::move(v)) {}
std::size_t Arr::size() const {
  return v_.json().size();
}
Value Arr::at(std::size_t i) const {
  return v_.child(&v_.json()[i], v_.path() + "." + std::to_string(i));
}

}  // namespace tutti
