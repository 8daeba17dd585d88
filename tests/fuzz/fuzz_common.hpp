#pragma once
// Shared driver of tutti's libFuzzer targets (issue 25), one per input kind
// (tests/fuzz/*_fuzz.cpp). The contract under test: any bytes give either a result or an InputError
// (exit 2). An InternalError (exit 70), any other exception (bad_alloc, nlohmann type errors, ...),
// a crash, a sanitizer report, a hang or an out-of-memory is a finding: the target aborts so that
// libFuzzer records the input under build-fuzz/findings/<kind>/.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tutti/core/error.hpp"

namespace tutti::fuzz {

[[noreturn]] inline void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "tutti-fuzz: FINDING (%s): %s\n", what, detail.c_str());
  std::abort();
}

/// Runs `body(text)` on the input under the contract above.
template <class F>
int run(const std::uint8_t* data, std::size_t size, F body) {
  if (size > (std::size_t(1) << 20)) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    body(text);
  } catch (const InputError&) {
    // The contract: bad input is an InputError (exit 2).
  } catch (const InternalError& e) {
    finding("InternalError (exit 70)", e.what());
  } catch (const std::exception& e) {
    finding("unexpected exception (exit 70)", e.what());
  }
  return 0;
}

}  // namespace tutti::fuzz
