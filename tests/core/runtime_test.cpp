// Threads are configured explicitly (LibTorch starts at 1 here) and devices are chosen
// at run time; CUDA tests skip cleanly on machines without it.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstdlib>
#include <thread>

#include "core/runtime/device.h"
#include "core/runtime/threads.h"

namespace attnlab::runtime {
namespace {

TEST(Threads, ExplicitRequestWins) {
  EXPECT_EQ(configure_threads(1), 1);
  EXPECT_EQ(current_threads(), 1);
  EXPECT_EQ(configure_threads(2), 2);
}

TEST(Threads, DefaultIsAllHardwareThreads) {
  unsetenv("ATTNLAB_THREADS");
  int expected = int(std::thread::hardware_concurrency());
  EXPECT_EQ(configure_threads(0), expected > 0 ? expected : 1);
}

TEST(Threads, EnvironmentOverride) {
  setenv("ATTNLAB_THREADS", "1", 1);
  EXPECT_EQ(configure_threads(0), 1);
  setenv("ATTNLAB_THREADS", "many", 1);
  EXPECT_THROW(configure_threads(0), std::invalid_argument);
  unsetenv("ATTNLAB_THREADS");
}

// The test binaries' main() (tests/support/torch_test_main.cpp) applies ATTNLAB_THREADS
// before any test runs, so the portability sweep's one-thread cells really are one thread.
TEST(Threads, TestMainAppliesTheEnvironment) {
  const char* env = std::getenv("ATTNLAB_THREADS");
  if (!env) GTEST_SKIP() << "ATTNLAB_THREADS is not set (scripts/test_portability.sh sets it)";
  EXPECT_EQ(current_threads(), std::atoi(env));
}

TEST(Device, CpuAndAuto) {
  EXPECT_EQ(select_device("cpu"), c10::Device(c10::kCPU));
  c10::Device d = select_device("auto");
  EXPECT_EQ(d.is_cuda(), cuda_available());
  EXPECT_THROW(select_device("tpu"), std::invalid_argument);
  EXPECT_FALSE(describe_runtime().empty());
}

TEST(Device, CudaRequestWithoutCudaIsAClearError) {
  if (cuda_available()) GTEST_SKIP() << "CUDA present: covered by CudaWhenPresent";
  try {
    select_device("cuda");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA is not available"), std::string::npos);
  }
}

TEST(Device, CudaWhenPresent) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA in this build or on this machine";
  c10::Device d = select_device("cuda:0");
  at::Tensor x = at::ones({4, 4}, at::TensorOptions().device(d));
  EXPECT_FLOAT_EQ(x.sum().item<float>(), 16.f);
  EXPECT_THROW(select_device("cuda:99"), std::invalid_argument);
}

}  // namespace
}  // namespace attnlab::runtime
