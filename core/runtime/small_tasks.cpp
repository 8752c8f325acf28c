// for_each_small_task: see small_tasks.h.
#include "core/runtime/small_tasks.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

#include "core/runtime/threads.h"

namespace attnlab::runtime {

bool small_tasks_side_by_side() {
  // A LibTorch whose LAPACK and BLAS are MKL's (PyPI's torch) runs MKL's own thread team
  // inside each task, and an SVD (dgesdd) called from a member of a team of ours never
  // returned (rank on deit_mini, 2 threads, torch 2.11): such a build runs tasks in turn.
  if (at::hasMKL()) return false;
  // Asked once: inside a team of this runtime, LibTorch sees a parallel region only when its
  // parallel_for runs on the same OpenMP runtime (at::in_parallel_region is that runtime's
  // omp_in_parallel; another parallel backend answers false too, and tasks then run in turn).
  static const bool one_runtime = [] {
    bool seen = false;
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0) seen = at::in_parallel_region();
    }
    return seen;
  }();
  return one_runtime;
}

void for_each_small_task(int64_t n, const std::function<void(int64_t)>& task) {
  const int threads = int(std::min<int64_t>(n, current_threads()));
  if (threads < 2 || omp_in_parallel() || !small_tasks_side_by_side()) {
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  const at::ThreadLocalState state;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  // An OpenMP team, not threads of our own: its members are the very threads that would
  // otherwise spin-wait for LibTorch's next parallel region on the other cores.
#pragma omp parallel num_threads(threads)
  {
    const at::ThreadLocalStateGuard guard(state);
    omp_set_num_threads(1);  // BLAS calls inside run on the calling thread
    for (int64_t i = next++; i < n && !failed; i = next++) {
      try {
        task(i);
      } catch (...) {  // nothing may leave an OpenMP region
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace attnlab::runtime
