// runtime::for_each_small_task: every task runs exactly once whatever the thread count, a
// task's exception reaches the caller, the caller's grad mode reaches the tasks, and a
// task's LibTorch work gives the same numbers as on the caller (an SVD on a single-threaded
// BLAS against the batched call: the same LAPACK routine per matrix, so equal to float32
// rounding; 1e-5 relative covers a different BLAS kernel order); LibTorch never opens a
// team of its own inside a task.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "core/runtime/small_tasks.h"
#include "core/runtime/threads.h"

namespace attnlab::runtime {
namespace {

TEST(SmallTasks, EveryTaskRunsOnceAndErrorsReachTheCaller) {
  for (int64_t n : {0, 1, 2, 7, 100}) {
    std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
    for_each_small_task(n, [&](int64_t i) { ++runs[size_t(i)]; });
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(runs[size_t(i)].load(), 1) << n << " " << i;
  }
  EXPECT_THROW(for_each_small_task(8,
                                   [](int64_t i) {
                                     if (i == 5) throw std::runtime_error("task 5");
                                   }),
               std::runtime_error);
}

TEST(SmallTasks, TasksSeeTheCallersGradModeAndComputeAsTheCallerDoes) {
  at::NoGradGuard no_grad;
  std::atomic<int> grad_enabled{0};
  at::manual_seed(3);
  const at::Tensor stack = at::randn({12, 197, 64});
  const at::Tensor batched = at::linalg_svdvals(stack);
  at::Tensor each = at::empty_like(batched);
  for_each_small_task(12, [&](int64_t i) {
    if (at::GradMode::is_enabled()) ++grad_enabled;
    each[i].copy_(at::linalg_svdvals(stack[i]));
  });
  EXPECT_EQ(grad_enabled.load(), 0);
  EXPECT_LE((each - batched).abs().max().item<double>(),
            1e-5 * batched.abs().max().item<double>());
  EXPECT_GE(current_threads(), 1);
}

// Inside a task LibTorch must see a parallel region (so its own parallel_for and the BLAS run
// on the task's thread) whenever the tasks run side by side; where they run in turn (a
// LibTorch on another OpenMP runtime, or one thread) each is the caller's plain call.
TEST(SmallTasks, LibTorchOpensNoTeamInsideATask) {
  std::atomic<int> inside{0};
  for_each_small_task(6, [&](int64_t) { inside += at::in_parallel_region() ? 1 : 0; });
  const bool side_by_side = small_tasks_side_by_side() && current_threads() >= 2;
  EXPECT_EQ(inside.load(), side_by_side ? 6 : 0)
      << "side by side: " << small_tasks_side_by_side() << ", threads " << current_threads() << ", "
      << at::get_parallel_info();
}

}  // namespace
}  // namespace attnlab::runtime
