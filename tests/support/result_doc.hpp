#pragma once
// Test support for the result documents' strict readers (each owning library's from_json, see
// docs/ARCHITECTURE.md "Result documents"): run the CLI and parse its JSON, read a document and
// write it back, corrupt one key and check that the InputError names the file and that key's path.
// The round-trip tests of every result kind use these, so each asserts the same things the same
// way.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "run.hpp"
#include "tutti/core/error.hpp"

namespace tutti::testing {

/// Runs tutti with `args`, requires exit status `rc` (the test stops with stderr otherwise) and
/// returns its stdout parsed as JSON.
inline nlohmann::json run_json(const std::vector<std::string>& args, int rc = 0) {
  const RunResult r = run_tutti(args);
  REQUIRE_MESSAGE(r.rc == rc, r.err);
  return r.json();
}

/// Reads `doc` with the strict reader `read` (called as read(doc, source, "")) and checks that
/// the typed result written back (its to_json) is the same document, byte for byte. Returns the
/// typed result.
template <class Read>
auto check_round_trip(Read read, const nlohmann::json& doc, const std::string& source) {
  const auto typed = read(doc, source, "");
  CHECK(to_json(typed).dump() == doc.dump());
  return typed;
}

/// The key path of the InputError the strict reader `read` throws for `doc` (called as
/// read(doc, source, at)), after checking that the error names `source` as its file;
/// "(no error)" when the reader accepts the document.
template <class Read>
std::string input_error_path(Read read, const nlohmann::json& doc, const std::string& source,
                             const std::string& at = "") {
  try {
    (void)read(doc, source, at);
  } catch (const InputError& e) {
    CHECK(e.file() == source);
    return e.key_path();
  }
  return "(no error)";
}

/// How a corruption's expected key path is compared with the one the InputError names.
enum class KeyMatch {
  exact,     ///< the same path
  prefix,    ///< the error's path starts with it (a missing or wrong key inside that object)
  contains,  ///< the error's path contains it
};

/// One malformed key: the value at JSON pointer `pointer` replaced by `value` (the key erased
/// when `value` is empty), and the key path the InputError must name, after the reader's `at`.
struct Corruption {
  std::string pointer;
  std::optional<nlohmann::json> value;
  std::string key;
  KeyMatch match = KeyMatch::exact;
};

/// `good` with that one corruption applied.
inline nlohmann::json corrupted(const nlohmann::json& good, const Corruption& c) {
  nlohmann::json bad = good;
  const nlohmann::json::json_pointer at(c.pointer);
  if (c.value) {
    bad[at] = *c.value;
  } else {
    bad[at.parent_pointer()].erase(at.back());
  }
  return bad;
}

/// For each corruption of `good`, one at a time: the strict reader `read` refuses the document
/// with an InputError naming `source` and the corruption's key path (prefixed with `at` where the
/// document sits in its file, e.g. "architectures.1.topology").
template <class Read>
void check_corruptions(Read read, const nlohmann::json& good, const std::vector<Corruption>& cases,
                       const std::string& source, const std::string& at = "") {
  for (const Corruption& c : cases) {
    INFO("corrupted: ", c.pointer);
    const std::string path = input_error_path(read, corrupted(good, c), source, at);
    const std::string want = at.empty() ? c.key : at + "." + c.key;
    switch (c.match) {
      case KeyMatch::exact:
        CHECK(path == want);
        break;
      case KeyMatch::prefix:
        CHECK_MESSAGE(path.rfind(want, 0) == 0, want, " does not start ", path);
        break;
      case KeyMatch::contains:
        CHECK_MESSAGE(path.find(want) != std::string::npos, want, " not in ", path);
        break;
    }
  }
}

}  // namespace tutti::testing
