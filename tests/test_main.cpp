// The main of every test binary. Cases in the suite "gpu" (tests/support/gpu.hpp) are excluded
// when no GPU is usable, unless KILN_REQUIRE_GPU=1 makes them run (and fail); cases in the
// suite "gpu2" (two GPUs) where fewer than two are; cases in the suite "nogpu" where a GPU is
// usable. A run in which
// every selected case was skipped that way exits with kSkipped, which ctest reports as a skip
// (tests/CMakeLists.txt); a run whose filters select no case at all is a failure, so that a
// misspelled --test-case cannot pass vacuously.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <kiln/kiln.hpp>
#include <ostream>
#include <vector>

namespace {

constexpr int kSkipped = 77;  // ctest's SKIP_RETURN_CODE for these binaries

unsigned g_cases_run = 0, g_cases_counted = 0;
bool g_run_ended = false;

// Records how many cases passed the filters; doctest's own reporter prints the summary.
struct RunCounter : doctest::IReporter {
  explicit RunCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData& q) override {
    if (q.run_stats) g_cases_counted = q.run_stats->numTestCasesPassingFilters;
  }
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

// How many cases the command line selects by itself, before the GPU suite is excluded: a
// doctest count query, printed nowhere.
unsigned cases_selected(int argc, char** argv) {
  std::vector<const char*> args(argv, argv + argc);
  args.push_back("--count");
  std::ostream nowhere(nullptr);
  doctest::Context probe;
  probe.applyCommandLine(static_cast<int>(args.size()), args.data());
  probe.setCout(&nowhere);
  probe.run();
  return g_cases_counted;
}

int main(int argc, char** argv) {
  const int gpus = kiln::cuda_device_count();
  const bool skip_gpu = !gpu_required() && gpus == 0;
  const bool skip_multi_gpu = gpus < 2;
  // Cases these exclusions skip must not read as "no case matched": count the selection first.
  const unsigned selected = skip_gpu || skip_multi_gpu ? cases_selected(argc, argv) : 0;
  doctest::Context context;
  if (skip_gpu) context.addFilter("test-suite-exclude", "gpu");
  if (skip_multi_gpu) context.addFilter("test-suite-exclude", "gpu2");
  if (gpus > 0) context.addFilter("test-suite-exclude", "nogpu");
  context.applyCommandLine(argc, argv);
  int rc = context.run();
  if (context.shouldExit() || rc != 0 || !g_run_ended || g_cases_run > 0) return rc;
  if (selected > 0) {
    std::cout << "[kiln] every selected test case needs " << (gpus == 0 ? "a GPU" : "two GPUs")
              << " and is skipped (KILN_REQUIRE_GPU=1 makes a missing GPU a failure)\n";
    return kSkipped;
  }
  std::cerr << "[kiln] no test case matched the filters: nothing was tested\n";
  return 1;
}
