#pragma once
// Test support: run the built `tutti` executable and compare JSON with a tolerance.
// Golden CLI tests: run_tutti({"simulate", "--workload", ...}) then check rc, stdout, stderr.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tutti::testing {

struct RunResult {
  int rc = -1;
  std::string out, err;
  nlohmann::json json() const;  ///< Parses `out` as JSON (fails the test if it is not).
};

/// Runs TUTTI_BINARY_DIR/tutti with `args` (no shell), cwd = source dir, optional stdin text.
RunResult run_tutti(const std::vector<std::string>& args, const std::string& stdin_text = "");

/// Runs any command line through /bin/sh -c (for mpirun), cwd = source dir.
RunResult run_shell(const std::string& command);

/// Path of a file in the source tree: src("models/llama3-8b.json").
std::string src(const std::string& relative);

/// A fresh empty temporary directory under $TMPDIR (or /tmp), removed with its contents when the
/// test process exits (keep it with TUTTI_KEEP_TEST_TMP=1).
std::string temp_dir();

/// True (and a "tutti-skip:" line ctest counts as skipped) when the suite runs under the
/// sanitizers (scripts/sanitize.sh sets TUTTI_SANITIZER_SUITE=1) and this test re-runs, end to
/// end, work other tests already cover under them: the whole published case set, whose Release
/// run takes seconds and the instrumented one several minutes. The Release suite runs it.
bool skip_under_sanitizers(const char* what);

/// Compares `actual` with `expected`: same structure; numbers within rel_tol relative error
/// (or abs_tol absolute); keys only in `actual` are allowed when allow_extra. Returns "" when
/// they agree, else a message naming the first differing key path.
std::string json_diff(const nlohmann::json& actual, const nlohmann::json& expected,
                      double rel_tol = 1e-6, double abs_tol = 1e-12, bool allow_extra = true);

}  // namespace tutti::testing
