// LibTorch's intra-op thread pool starts at 1 thread on this Debian build (measured), so
// attnlab sets it explicitly at start-up: to the machine's cores unless overridden by
// --threads N or the ATTNLAB_THREADS environment variable.
#pragma once

namespace attnlab::runtime {

// requested > 0 wins; otherwise ATTNLAB_THREADS if set and valid; otherwise the number of
// hardware threads. Returns the count now in effect. Throws std::invalid_argument for a
// malformed ATTNLAB_THREADS.
int configure_threads(int requested = 0);

// Thread count LibTorch currently uses for intra-op parallelism.
int current_threads();

// For its lifetime, LibTorch (and the BLAS under it) computes on one thread here; the count
// in effect before comes back at the end. For work made of many small matrices (a head's
// 197×64 SVD, 14×14 transforms, 197×197 products), where waking BLAS threads costs more than
// the arithmetic: measured on deit_small's analyses (bench_analysis, 2 cores), rank takes
// 51 ms with two threads and 40 ms with one, spectra 23 and 15 ms, rollout 20 and 16 ms.
class SingleThreadScope {
 public:
  SingleThreadScope();
  ~SingleThreadScope();
  SingleThreadScope(const SingleThreadScope&) = delete;
  SingleThreadScope& operator=(const SingleThreadScope&) = delete;

 private:
  int before_;
};

}  // namespace attnlab::runtime
