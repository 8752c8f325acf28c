// A signal that ends the process in the middle of write_file_atomic leaves no temporary
// file once remove_temporaries_on_signal is installed (main() installs it), and nothing
// under the final name: Ctrl-C during an export loses only the file being written. The
// write runs in a death-test child killed by the signal from inside its fill callback,
// so the moment is exact; without the handler the same write leaves its temporary,
// which shows the check can fail.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "core/io/file_bytes.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {

// Writes half of `out`, raises `sig`, then would write the rest.
void write_interrupted(const std::string& out, int sig) {
  io::write_file_atomic(out, [&](const io::ByteSink& sink) {
    const std::string half(4096, 'a');
    sink(half.data(), half.size());
    ::raise(sig);
    sink(half.data(), half.size());
  });
  std::_Exit(0);  // not reached: the signal ends the process
}

class InterruptedWrite : public ::testing::TestWithParam<int> {
 protected:
  // fork without exec: the child writes into this test's directory.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "fast"); }
};

TEST_P(InterruptedWrite, LeavesNoTemporaryAndNoFileWithTheHandler) {
  const TempDir dir("interrupted");
  const std::string out = dir.file("figure.pdf");
  EXPECT_EXIT(
      {
        io::remove_temporaries_on_signal();
        write_interrupted(out, GetParam());
      },
      ::testing::KilledBySignal(GetParam()), "");
  EXPECT_TRUE(dir.list().empty()) << "left: " << (dir.list().empty() ? "" : dir.list().front());
}

TEST_P(InterruptedWrite, LeavesItsTemporaryWithoutTheHandler) {
  const TempDir dir("interrupted");
  const std::string out = dir.file("figure.pdf");
  EXPECT_EXIT(write_interrupted(out, GetParam()), ::testing::KilledBySignal(GetParam()), "");
  ASSERT_EQ(dir.list().size(), 1u);
  EXPECT_EQ(dir.list().front().rfind("figure.pdf.tmp-", 0), 0u) << dir.list().front();
}

INSTANTIATE_TEST_SUITE_P(
    Signals, InterruptedWrite, ::testing::Values(SIGINT, SIGTERM, SIGHUP), [](const auto& p) {
      return std::string(p.param == SIGINT ? "SIGINT" : p.param == SIGTERM ? "SIGTERM" : "SIGHUP");
    });

}  // namespace
}  // namespace attnlab::testing
