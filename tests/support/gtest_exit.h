// The exit status of a test binary's main(): GoogleTest's, except that a run whose tests
// were all skipped (a dataset or a device that is not there) exits 77, which the ctest
// entries of cmake/GTestSuites.cmake report as skipped. A run with any failure still
// fails; one with a passing test passes.
#pragma once

#include <gtest/gtest.h>

namespace attnlab::testing {

inline int suite_exit_code(int run_all_tests_result) {
  const ::testing::UnitTest& t = *::testing::UnitTest::GetInstance();
  if (run_all_tests_result == 0 && t.failed_test_count() == 0 && t.successful_test_count() == 0 &&
      t.skipped_test_count() > 0)
    return 77;
  return run_all_tests_result;
}

}  // namespace attnlab::testing
