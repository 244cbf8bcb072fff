// The main of every test binary. Cases in the suite "gpu" (tests/support/gpu.hpp) are excluded
// when no GPU is usable, unless KILN_REQUIRE_GPU=1 makes them run (and fail). A run in which
// every selected case was skipped that way exits with kSkipped, which ctest reports as a skip
// (tests/CMakeLists.txt); a run whose filters select no case at all is a failure, so that a
// misspelled --test-case cannot pass vacuously.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <kiln/kiln.hpp>

namespace {

constexpr int kSkipped = 77;  // ctest's SKIP_RETURN_CODE for these binaries

unsigned g_cases_run = 0;
bool g_run_ended = false;

// Records how many cases passed the filters; doctest's own reporter prints the summary.
struct RunCounter : doctest::IReporter {
  explicit RunCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& s) override {
    g_cases_run = s.numTestCasesPassingFilters;
    g_run_ended = true;
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
REGISTER_LISTENER("kiln_run_counter", 1, RunCounter);

bool gpu_required() {
  const char* v = std::getenv("KILN_REQUIRE_GPU");
  return v && std::strcmp(v, "0") != 0 && *v;
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context;
  const bool skip_gpu = !gpu_required() && !kiln::cuda_available();
  if (skip_gpu) context.addFilter("test-suite-exclude", "gpu");
  context.applyCommandLine(argc, argv);
  int rc = context.run();
  if (context.shouldExit() || rc != 0 || !g_run_ended || g_cases_run > 0) return rc;
  if (skip_gpu) {
    std::cout << "[kiln] no usable GPU: the selected GPU test cases are skipped "
                 "(KILN_REQUIRE_GPU=1 makes that a failure)\n";
    return kSkipped;
  }
  std::cerr << "[kiln] no test case matched the filters: nothing was tested\n";
  return 1;
}
