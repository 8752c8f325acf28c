// main() of the test binaries that link LibTorch. It applies ATTNLAB_THREADS as the
// attnlab executable does (LibTorch's and OpenMP BLAS's intra-op threads), so that
// `ATTNLAB_THREADS=1 ctest` really runs every test single-threaded:
// scripts/test_portability.sh relies on it. Without the variable LibTorch keeps its own
// default (all cores). The exit status is tests/support/gtest_exit.h's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "core/runtime/threads.h"
#include "tests/support/gtest_exit.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (const char* env = std::getenv("ATTNLAB_THREADS"); env && *env) {
    try {
      attnlab::runtime::configure_threads(0);
    } catch (const std::exception& e) {
      std::cerr << "test main: " << e.what() << "\n";
      return 2;
    }
  }
  return attnlab::testing::suite_exit_code(RUN_ALL_TESTS());
}
