// Many small LibTorch computations (a head's 197×64 SVD) run fastest side by side, one per
// core, each calling a single-threaded BLAS. With Debian's OpenMP OpenBLAS, a multi-threaded
// BLAS call on a matrix this small spends more on waking its threads than on arithmetic
// (72 head SVDs: 29 ms on one thread, 42 ms with two BLAS threads, both on 2 cores).
//
// for_each_small_task hands whole tasks to an OpenMP team of up to current_threads()
// threads (the same runtime and threads LibTorch uses), each with its OpenMP thread count
// set to 1 with omp_set_num_threads inside the team: OpenBLAS reads it per call and then
// runs the call on the calling thread. Nothing global changes
// (at::set_num_threads would also resize LibTorch's pools and make OpenBLAS reallocate its
// buffers, which costs the next forward pass more than this saves). The caller's
// thread-local state (grad mode, inference mode) is copied to the helpers.
#pragma once

#include <cstdint>
#include <functional>

namespace attnlab::runtime {

// Calls task(i) for every i in [0, n), each exactly once, in any order, on the team;
// returns when all are done. The first exception thrown by a task is rethrown here (tasks
// not yet started are then skipped). With one thread, or n < 2, or where
// small_tasks_side_by_side() is false, it is a plain loop here.
void for_each_small_task(int64_t n, const std::function<void(int64_t)>& task);

// Whether the tasks run side by side: only where LibTorch's parallel regions are this
// file's OpenMP runtime's (Debian's LibTorch and g++ share one libgomp). Elsewhere (a
// LibTorch on its native or TBB thread pool, or on an OpenMP runtime that does not see this
// team) a member's omp_set_num_threads(1) would not stop LibTorch's parallel_for or its
// BLAS from opening a pool as wide as the machine inside every task, so the tasks run in
// turn, each with LibTorch's own threads, as any LibTorch program runs them.
bool small_tasks_side_by_side();

}  // namespace attnlab::runtime
