// GPU test cases: GPU_TEST_CASE("name") instead of TEST_CASE. Such a case is in the doctest
// suite "gpu", which tests/test_main.cpp excludes when no GPU is usable, so doctest's summary
// and ctest count it as skipped, not passed. With KILN_REQUIRE_GPU=1 the suite always runs and
// the fixture below fails every case on a machine whose GPU cannot be used (scripts/gpu-check
// sets it, so a broken driver cannot turn the GPU suite into a row of passes).
// NO_GPU_TEST_CASE is the mirror image, for what kiln does on a machine without a GPU: suite
// "nogpu", excluded (and counted as skipped) where a GPU is usable.
#pragma once
#include <doctest/doctest.h>

#include <kiln/kiln.hpp>

namespace kiln::test_support {

struct GpuCase {
  GpuCase() {
    REQUIRE_MESSAGE(kiln::cuda_available(),
                    "this GPU test case needs a usable CUDA device and there is none (no GPU, no "
                    "driver, or CUDA_VISIBLE_DEVICES hides it); unset KILN_REQUIRE_GPU to skip "
                    "GPU cases on this machine");
  }
};

}  // namespace kiln::test_support

#define GPU_TEST_CASE(name) \
  TEST_CASE_FIXTURE(kiln::test_support::GpuCase, name* doctest::test_suite("gpu"))
#define NO_GPU_TEST_CASE(name) TEST_CASE(name* doctest::test_suite("nogpu"))
// Needs two GPUs: suite "gpu2", skipped (and counted as skipped) on machines with fewer. It runs
// with the file's host cases, in ctest's plain entry.
#define MULTI_GPU_TEST_CASE(name) \
  TEST_CASE_FIXTURE(kiln::test_support::GpuCase, name* doctest::test_suite("gpu2"))
