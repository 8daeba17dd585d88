#include "tutti/core/json_text.hpp"

#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tutti {

using Json = nlohmann::json;

JsonTextError::JsonTextError(JsonTextFault fault, std::string file, std::string key_path,
                             std::string found, std::string expected)
    : InputError(std::move(file), std::move(key_path), std::move(found), std::move(expected)),
      fault_(fault) {}

JsonTextError::JsonTextError(JsonTextFault fault, std::string message)
    : InputError(std::move(message)), fault_(fault) {}

std::string text_location(std::string_view text, std::size_t offset) {
  if (offset > text.size()) offset = text.size();
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

namespace {

// A char iterator that records how far the lexer has read, so the builder knows where a key
// ended (nlohmann's SAX events carry no position).
struct TrackingIterator {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p = nullptr;
  const char** mark = nullptr;
  reference operator*() const { return *p; }
  TrackingIterator& operator++() {
    ++p;
    *mark = p;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator t = *this;
    ++*this;
    return t;
  }
  bool operator==(const TrackingIterator& o) const { return p == o.p; }
  bool operator!=(const TrackingIterator& o) const { return p != o.p; }
};

// Builds the DOM with an explicit stack (no recursion), checking depth, duplicates and ranges.
class Builder {
 public:
  Builder(std::string_view text, const std::string& name, const char* const* mark)
      : text_(text), name_(name), mark_(mark) {}

  Json take() { return std::move(root_); }

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string&) { return put(Json(v)); }
  bool string(Json::string_t& v) { return put(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return put(Json::binary(std::move(v))); }

  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(Json::string_t& k) {
    Frame& f = stack_.back();
    std::size_t end = static_cast<std::size_t>(*mark_ - text_.data());
    std::size_t start = key_start(end);
    auto [it, fresh] = f.key_offsets.emplace(k, start);
    if (!fresh) {
      std::string path = path_text(stack_.size());
      path += (path.empty() ? "" : ".") + k;
      throw JsonTextError(JsonTextFault::DuplicateKey, name_, path,
                          "key \"" + k + "\" twice: at " + text_location(text_, it->second) +
                              " and at " + text_location(text_, start),
                          "each key at most once per object");
    }
    f.key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) {
    std::size_t at = position > 0 ? position - 1 : 0;
    if (ex.id == 406) {  // out_of_range.406: a number beyond the range of a double
      std::string path = path_text(stack_.size(), /*pending=*/true);
      throw JsonTextError(JsonTextFault::NumberRange, name_, path.empty() ? "(top level)" : path,
                          last_token + " at " + text_location(text_, at),
                          "a number within the range of a double (magnitude <= 1.8e308)");
    }
    std::string msg = ex.what();
    auto p = msg.find("syntax error");
    if (p != std::string::npos) msg = msg.substr(p);
    throw JsonTextError(JsonTextFault::Syntax,
                        name_ + ": malformed JSON at " + text_location(text_, at) + ": " + msg);
  }

 private:
  struct Frame {
    Json* container = nullptr;
    std::string key;        // objects: the key whose value comes next
    std::size_t index = 0;  // arrays: the index of the next element
    std::unordered_map<std::string, std::size_t> key_offsets;  // objects: where each key began
  };

  // Places `v` in the innermost open container (or as the root); returns where it went.
  Json* place(Json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.container->is_object()) {
      Json& slot = (*f.container)[f.key];
      slot = std::move(v);
      return &slot;
    }
    f.container->push_back(std::move(v));
    ++f.index;
    return &f.container->back();
  }
  bool put(Json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Json&& v) {
    if (stack_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
      std::size_t at = static_cast<std::size_t>(*mark_ - text_.data());
      std::string path = elide(path_text(stack_.size(), /*pending=*/true));
      throw JsonTextError(
          JsonTextFault::Depth, name_, path.empty() ? "(top level)" : path,
          "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels at " +
              text_location(text_, at > 0 ? at - 1 : 0),
          "at most " + std::to_string(kMaxJsonDepth) + " nested objects and arrays");
    }
    Frame f;
    f.container = place(std::move(v));
    stack_.push_back(std::move(f));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  // The key path of the open containers [0, depth); with `pending`, the innermost array frame
  // names the element being read (its index), not the last one placed.
  std::string path_text(std::size_t depth, bool pending = false) const {
    std::string s;
    for (std::size_t i = 0; i < depth; ++i) {
      const Frame& f = stack_[i];
      std::string seg;
      if (f.container->is_object()) {
        if (i + 1 == depth && !pending) break;  // the key is added by the caller
        seg = f.key;
      } else {
        std::size_t idx = f.index;
        if (i + 1 < depth) idx = idx > 0 ? idx - 1 : 0;  // the open child is the last element
        seg = std::to_string(idx);
      }
      if (!s.empty()) s += ".";
      s += seg;
    }
    return s;
  }

  // A key path of more than 8 segments as its first 4 and last 2 ("a.b.c.d...(122 more)...y.z").
  static std::string elide(const std::string& path) {
    std::vector<std::size_t> dots;
    for (std::size_t i = 0; i < path.size(); ++i)
      if (path[i] == '.') dots.push_back(i);
    if (dots.size() < 8) return path;
    std::size_t hidden = dots.size() - 5;
    return path.substr(0, dots[3]) + ".(" + std::to_string(hidden) + " more)." +
           path.substr(dots[dots.size() - 2] + 1);
  }

  // Offset of the opening quote of the key whose closing quote ends just before `end`.
  std::size_t key_start(std::size_t end) const {
    if (end < 2) return 0;
    std::size_t i = end - 2;  // the last character inside the quotes (or the opening quote)
    while (i > 0) {
      if (text_[i] == '"') {
        std::size_t backslashes = 0;
        while (i >= 1 + backslashes && text_[i - 1 - backslashes] == '\\') ++backslashes;
        if (backslashes % 2 == 0) return i;
      }
      --i;
    }
    return 0;
  }

  std::string_view text_;
  const std::string& name_;
  const char* const* mark_;
  Json root_;
  std::vector<Frame> stack_;
};

}  // namespace

std::string first_non_finite(const Json& j) {
  struct Item {
    const Json* v;
    std::string path;
  };
  std::vector<Item> todo{{&j, ""}};
  while (!todo.empty()) {
    Item it = std::move(todo.back());
    todo.pop_back();
    const Json& v = *it.v;
    if (v.is_number_float()) {
      if (!std::isfinite(v.get<double>())) return it.path.empty() ? "(top level)" : it.path;
    } else if (v.is_object()) {
      for (auto e = v.begin(); e != v.end(); ++e)
        todo.push_back({&*e, it.path.empty() ? e.key() : it.path + "." + e.key()});
    } else if (v.is_array()) {
      for (std::size_t i = v.size(); i-- > 0;)
        todo.push_back(
            {&v[i], it.path.empty() ? std::to_string(i) : it.path + "." + std::to_string(i)});
    }
  }
  return "";
}

std::string write_json_text(const Json& j, int indent) {
  std::string bad = first_non_finite(j);
  if (!bad.empty())
    throw InternalError("output field " + bad + " is not a finite number (NaN or infinite)");
  return j.dump(indent);
}

Json parse_json_text(std::string_view text, const std::string& name) {
  const char* mark = text.data();
  TrackingIterator first{text.data(), &mark}, last{text.data() + text.size(), &mark};
  Builder b(text, name, &mark);
  bool ok = Json::sax_parse(first, last, &b, nlohmann::detail::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/false);
  if (!ok) throw JsonTextError(JsonTextFault::Syntax, name + ": malformed JSON");
  return b.take();
}

}  // namespace tutti
