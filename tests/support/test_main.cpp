// main() of the test binaries that do not link LibTorch (io, viz, the GUI's helpers and
// script parser): GoogleTest's, with tests/support/gtest_exit.h's exit status.
#include <gtest/gtest.h>

#include "tests/support/gtest_exit.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return attnlab::testing::suite_exit_code(RUN_ALL_TESTS());
}
