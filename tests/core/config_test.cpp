#include "tutti/core/config.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tutti/core/error.hpp"

using namespace tutti;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("config: unknown key names file, path and the known keys") {
  auto doc = Doc::parse(R"({"fabric": {"radix": 64, "radixx": 2}})", "cluster.json");
  std::string msg = error_of([&] {
    Obj root = doc.root();
    Obj f = root.req("fabric").obj();
    f.req("radix").integer(2, 1024);
    f.done();
  });
  CHECK(msg == "cluster.json: fabric.radixx: got unknown key \"radixx\", expected one of: radix");
}

TEST_CASE("config: missing key, wrong type, range and bad unit are input errors") {
  auto doc = Doc::parse(R"({"a": 0, "b": "x", "bw": "400Gbit", "arr": [1, "2"]})", "f.json");
  Obj root = doc.root();
  CHECK(error_of([&] { root.req("missing"); }) ==
        "f.json: missing: got nothing (missing key), expected a value for \"missing\"");
  CHECK(error_of([&] { root.req("a").integer(2, 8); }) ==
        "f.json: a: got 0, expected an integer in [2, 8]");
  CHECK(error_of([&] { root.req("b").number(); }) == "f.json: b: got \"x\", expected a number");
  CHECK(error_of([&] {
          root.req("bw").quantity(Dim::Bandwidth);
        }).find("f.json: bw: got \"400Gbit\", expected a bandwidth") == 0);
  CHECK(error_of([&] { root.req("arr").arr().at(1).integer(); }) ==
        "f.json: arr.1: got \"2\", expected an integer");
  CHECK(error_of([&] {
          root.req("b").choice({"y", "z"});
        }) == "f.json: b: got \"x\", expected one of \"y\" \"z\"");
}

TEST_CASE("config: --set overrides go through the same checks") {
  auto doc = Doc::parse(R"({"fabric": {"oversubscription": 1}})", "c.json",
                        {"fabric.oversubscription=2", "fabric.kind=fat_tree"});
  Obj root = doc.root();
  Obj f = root.req("fabric").obj();
  CHECK(f.req("oversubscription").number(1, 16) == 2);
  CHECK(f.req("kind").string() == "fat_tree");
  auto bad = Doc::parse(R"({"x": 1})", "c.json", {"x=0"});
  CHECK(error_of([&] { bad.root().req("x").integer(1, 4); }) ==
        "c.json: x: got 0, expected an integer in [1, 4]");
  CHECK_THROWS_AS(Doc::parse("{}", "c.json", {"novalue"}), InputError);
}

TEST_CASE("config: malformed JSON and missing files are input errors") {
  CHECK(error_of([] { Doc::parse("{\"a\": }", "bad.json"); }).find("bad.json: malformed JSON") ==
        0);
  CHECK(error_of([] { Doc::load("/nonexistent/x.json"); }) ==
        "/nonexistent/x.json: cannot open file");
}
