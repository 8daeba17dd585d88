// parse_json_text: depth limit, duplicate keys with both locations, numbers beyond double range,
// and the same rules through Doc::parse and --set overrides.
#include "tutti/core/json_text.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "tutti/core/config.hpp"

using namespace tutti;

namespace {
struct Caught {
  std::string what;
  int fault = -1;
};
Caught caught(const std::function<void()>& f) {
  try {
    f();
  } catch (const JsonTextError& e) {
    return {e.what(), static_cast<int>(e.fault())};
  } catch (const InputError& e) {
    return {e.what(), 100};
  }
  return {};
}
bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("json_text: the document it parses equals nlohmann's for ordinary input") {
  std::string t = R"({"a": [1, 2.5, "x", {"b": null, "c": [true, false]}], "d": {"e": -7},
                     "u": 18446744073709551615, "esc": "q\"\\"})";
  CHECK(parse_json_text(t, "t.json") == nlohmann::json::parse(t));
  CHECK(parse_json_text("[]", "t") == nlohmann::json::array());
  CHECK(parse_json_text(" 3 ", "t") == 3);
}

TEST_CASE("json_text: nesting 100,000 deep is an input error, not a stack overflow") {
  std::string deep(100000, '[');
  auto c = caught([&] { parse_json_text(deep, "deep.json"); });
  CHECK(c.fault == static_cast<int>(JsonTextFault::Depth));
  CHECK(has(c.what, "deep.json: "));
  CHECK(has(c.what, "nesting deeper than 128 levels"));
  std::string deep_obj;
  for (int i = 0; i < 100000; ++i) deep_obj += "{\"k\":";
  c = caught([&] { Doc::parse(deep_obj, "w.json"); });
  CHECK(c.fault == static_cast<int>(JsonTextFault::Depth));
  CHECK(has(c.what, "w.json: k.k.k."));
  // Exactly the limit is accepted.
  std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  CHECK_NOTHROW(parse_json_text(ok, "t"));
  std::string over = std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  CHECK_THROWS_AS(parse_json_text(over, "t"), JsonTextError);
}

TEST_CASE("json_text: a duplicate key names the key path and both locations") {
  std::string t = "{\n  \"fabric\": {\n    \"radix\": 64,\n    \"radix\": 32\n  }\n}";
  auto c = caught([&] { parse_json_text(t, "cluster.json"); });
  CHECK(c.fault == static_cast<int>(JsonTextFault::DuplicateKey));
  CHECK(c.what ==
        "cluster.json: fabric.radix: got key \"radix\" twice: at line 3, column 5 and at line 4, "
        "column 5, expected each key at most once per object");
  // In an array element; escaped spellings of the same key are the same key.
  c = caught([&] { parse_json_text(R"({"a": [{}, {"x": 1, "\u0078": 2}]})", "f"); });
  CHECK(c.fault == static_cast<int>(JsonTextFault::DuplicateKey));
  CHECK(has(c.what, "f: a.1.x: "));
  // Same key in sibling objects is fine.
  CHECK_NOTHROW(parse_json_text(R"({"a": {"x": 1}, "b": {"x": 1}})", "f"));
}

TEST_CASE("json_text: numbers beyond the range of a double name the key") {
  auto c = caught([&] { Doc::parse(R"({"model": {"layers": 1e999}})", "w.json"); });
  CHECK(c.fault == static_cast<int>(JsonTextFault::NumberRange));
  CHECK(has(c.what, "w.json: model.layers: got 1e999 at line 1, column"));
  CHECK(has(c.what, "expected a number within the range of a double"));
  c = caught([&] { parse_json_text(R"({"a": [1, -1e400]})", "f"); });
  CHECK(has(c.what, "f: a.1: got -1e400"));
  std::string big_int = "{\"n\": 1" + std::string(400, '0') + "}";
  c = caught([&] { parse_json_text(big_int, "f"); });
  CHECK(c.fault == static_cast<int>(JsonTextFault::NumberRange));
  CHECK(has(c.what, "f: n: "));
  // 1e308 is a double: accepted here (ranges are the parsers' business).
  CHECK(parse_json_text("[1e308]", "f")[0].get<double>() == 1e308);
}

TEST_CASE("json_text: syntax errors carry line and column, comments are refused") {
  auto c = caught([&] { parse_json_text("{\n \"a\": 1,\n}", "f.json"); });
  CHECK(c.fault == static_cast<int>(JsonTextFault::Syntax));
  CHECK(has(c.what, "f.json: malformed JSON at line 3"));
  c = caught([&] { parse_json_text("{\"a\": 1} // c", "f.json"); });
  CHECK(c.fault == static_cast<int>(JsonTextFault::Syntax));
  c = caught([&] { parse_json_text("", "f.json"); });
  CHECK(c.fault == static_cast<int>(JsonTextFault::Syntax));
}

TEST_CASE("json_text: --set values: 1e999 names the key, bare words stay strings") {
  auto c = caught([&] { Doc::parse(R"({"a": {"b": 1}})", "f.json", {"a.b=1e999"}); });
  CHECK(c.what ==
        "--set: a.b: got 1e999, expected a number within the range of a double "
        "(magnitude <= 1.8e308)");
  Doc d = Doc::parse(R"({"a": {"b": 1}})", "f.json", {"a.b=fat_tree", "a.c=[1,2]"});
  CHECK(d.json()["a"]["b"] == "fat_tree");
  CHECK(d.json()["a"]["c"] == nlohmann::json::array({1, 2}));
  c = caught([&] { Doc::parse("{}", "f.json", {"a=" + std::string(1000, '[')}); });
  CHECK(has(c.what, "--set: a: "));
  CHECK(has(c.what, "nesting deeper than"));
}

TEST_CASE("json_text: a NUL or control character in a key does not truncate the message") {
  std::string t = std::string("{\"ra") + "\\u0000" + "dix\": 1}";
  Doc d = Doc::parse(t, "c.json");
  std::string msg;
  try {
    d.root().done();
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK(has(msg, "c.json: ra\\u0000dix: got unknown key \"ra\\u0000dix\", expected no keys here"));
}

TEST_CASE("config: integers beyond int64 are refused, not wrapped") {
  Doc d = Doc::parse(R"({"n": 18446744073709551615})", "f.json");
  auto c = caught([&] { d.root().req("n").integer(1, 1000); });
  CHECK(c.what == "f.json: n: got 18446744073709551615, expected an integer in [1, 1000]");
}

TEST_CASE("config: Doc::load refuses what is not a regular file (/dev/zero would never end)") {
  auto c = caught([&] { Doc::load("/dev/zero"); });
  CHECK(c.what == "/dev/zero: (file): got not a regular file, expected a JSON file");
}
