// The doctest main of every test binary. ctest runs one test case per process with
// `--test-case=NAME` (doctest_discover_tests); a filter that matches nothing would pass silently
// (doctest exits 0), so a name ctest cannot carry (a ';' splits it into two ctest tests, neither
// matching) would never run. This main fails such a run instead.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

namespace {

unsigned g_passing_filters = 0;  ///< Test cases that passed the filters in the last run.
bool g_ran = false;

/// Records how many test cases the filters let through; reports nothing itself.
struct FilterCount : doctest::IReporter {
  explicit FilterCount(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& s) override {
    g_passing_filters = s.numTestCasesPassingFilters;
    g_ran = true;
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("tutti-filter-count", 1, FilterCount);

int main(int argc, char** argv) {
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  if (ctx.shouldExit()) return rc;  // --list-test-cases and other queries
  bool filtered = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a(argv[i]);
    filtered = filtered || a.rfind("--test-case=", 0) == 0 || a.rfind("-tc=", 0) == 0;
  }
  if (filtered && g_ran && g_passing_filters == 0) {
    std::fprintf(stderr,
                 "no test case matched the --test-case filter: the name ctest passed is not a "
                 "test case's name (a ';' in a TEST_CASE name splits it in ctest)\n");
    return rc != 0 ? rc : 1;
  }
  return rc;
}
