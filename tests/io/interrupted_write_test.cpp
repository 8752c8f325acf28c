// A signal that ends the process in the middle of write_file_atomic leaves no temporary
// file once remove_temporaries_on_signal is installed (main() installs it), and nothing
// under the final name: Ctrl-C during an export loses only the file being written. The
// write runs in a death-test child killed by the signal from inside its fill callback,
// so the moment is exact; without the handler the same write leaves its temporary,
// which shows the check can fail. A second case signals a process whose threads are all
// writing, alone or in batches, at whatever point each one has reached.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

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

// Four threads write files in a loop; once 20 entries exist the process signals itself
// (delivered to whichever thread the kernel picks). Every file left must be whole, and no
// temporary may be left, whichever step of a write each thread was at.
TEST_P(InterruptedWrite, ConcurrentWritersLeaveOnlyWholeFiles) {
  const TempDir dir("interrupted");
  const std::string content(64 * 1024, 'w');
  EXPECT_EXIT(
      {
        io::remove_temporaries_on_signal();
        // Two threads write one file at a time, two in batches of five (io::BatchedWrites:
        // temporaries until their commit).
        for (int t = 0; t < 4; ++t)
          std::thread([&, t] {
            for (int i = 0;; i += 5) {
              std::unique_ptr<io::BatchedWrites> batch;
              if (t >= 2) batch = std::make_unique<io::BatchedWrites>();
              for (int j = i; j < i + 5; ++j)
                io::write_file_atomic(dir.file(std::to_string(t) + "_" + std::to_string(j)),
                                      content);
              if (batch) batch->commit();
            }
          }).detach();
        while (dir.list().size() < 20) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ::kill(::getpid(), GetParam());
        for (;;) ::pause();
      },
      ::testing::KilledBySignal(GetParam()), "");
  const auto left = dir.list();
  EXPECT_GE(left.size(), 1u);
  for (const auto& name : left) {
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << "temporary left: " << name;
    const auto got = io::read_file_bytes(dir.file(name));
    EXPECT_EQ(std::string(got.begin(), got.end()), content) << name << " is not whole";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Signals, InterruptedWrite, ::testing::Values(SIGINT, SIGTERM, SIGHUP), [](const auto& p) {
      return std::string(p.param == SIGINT ? "SIGINT" : p.param == SIGTERM ? "SIGTERM" : "SIGHUP");
    });

}  // namespace
}  // namespace attnlab::testing
