// glibc malloc thresholds for repeated forwards; see allocator_tuning.h.
#include "core/runtime/allocator_tuning.h"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnlab::runtime {

const std::string& tune_allocator() {
  static const std::string what = []() -> std::string {
#if defined(__GLIBC__)
    const char* choice = std::getenv("ATTNLAB_MALLOC");
    if (choice && !std::strcmp(choice, "default")) return "glibc defaults (ATTNLAB_MALLOC=default)";
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables && std::strstr(tunables, "glibc.malloc"))
      return "glibc, the user's GLIBC_TUNABLES";
    constexpr int kMmapThreshold = 256 << 20;  // blocks up to 256 MiB from the heap
    constexpr int kTrimThreshold = 1 << 30;    // free top kept up to 1 GiB
    if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) != 1 ||
        mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1)
      return "glibc defaults (mallopt refused the thresholds)";
    return "glibc, blocks up to 256 MiB from the heap, its top trimmed above 1 GiB "
           "(ATTNLAB_MALLOC=default for glibc's own)";
#else
    return "the C library's defaults";
#endif
  }();
  return what;
}

}  // namespace attnlab::runtime
