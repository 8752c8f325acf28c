// See thread_priority.h.
#include "app/gui/jobs/thread_priority.h"

#include <cstdlib>
#include <string>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace attnlab::gui {

void lower_this_thread_priority() {
#if defined(__linux__)
  // ATTNLAB_WORKER_PRIORITY=normal keeps the workers at the frame loop's priority: the test
  // scripts run beside other tests (ctest -j), whose processes would otherwise take nearly
  // all the CPU from a background worker and stretch every wait.
  if (const char* p = std::getenv("ATTNLAB_WORKER_PRIORITY"); p && std::string(p) == "normal")
    return;
  // On Linux nice values belong to threads: setpriority on the thread id affects only it.
  // 10 is what desktop environments give background work; raising it back needs no rights.
  constexpr int kBackgroundNice = 10;
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  (void)setpriority(PRIO_PROCESS, tid, kBackgroundNice);
#endif
}

}  // namespace attnlab::gui
