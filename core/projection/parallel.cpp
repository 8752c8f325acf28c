// parallel.h: waves of blocks on plain std::threads.
#include "core/projection/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace attnlab::projection {

void parallel_blocks(int64_t blocks, int threads, const std::function<void(int64_t)>& body,
                     const Progress& progress, const char* stage) {
  threads = std::max(1, threads);
  const int64_t wave = progress ? 4 * static_cast<int64_t>(threads) : blocks;
  for (int64_t start = 0; start < blocks; start += std::max<int64_t>(wave, 1)) {
    const int64_t end = std::min(blocks, start + std::max<int64_t>(wave, 1));
    const int workers = static_cast<int>(std::min<int64_t>(threads, end - start));
    if (workers <= 1) {
      for (int64_t b = start; b < end; ++b) body(b);
    } else {
      std::atomic<int64_t> next{start};
      std::vector<std::exception_ptr> errors(static_cast<size_t>(end - start));
      auto run = [&] {
        for (int64_t b = next++; b < end; b = next++) {
          try {
            body(b);
          } catch (...) {
            errors[static_cast<size_t>(b - start)] = std::current_exception();
          }
        }
      };
      std::vector<std::thread> pool;
      for (int t = 1; t < workers; ++t) pool.emplace_back(run);
      run();
      for (auto& th : pool) th.join();
      for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    }
    report_progress(progress, end, blocks, stage);
  }
}

}  // namespace attnlab::projection
