#include "core/runtime/threads.h"

#include <ATen/Parallel.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

namespace attnlab::runtime {

int configure_threads(int requested) {
  int n = requested;
  if (n <= 0) {
    if (const char* env = std::getenv("ATTNLAB_THREADS"); env && *env) {
      char* end = nullptr;
      long v = std::strtol(env, &end, 10);
      if (*end != '\0' || v <= 0 || v > 4096)
        throw std::invalid_argument(
            std::string("ATTNLAB_THREADS must be a positive integer, got '") + env + "'");
      n = static_cast<int>(v);
    }
  }
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  if (n <= 0) n = 1;
  at::set_num_threads(n);
  return at::get_num_threads();
}

int current_threads() {
  return at::get_num_threads();
}

}  // namespace attnlab::runtime
