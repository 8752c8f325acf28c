// See thread_priority.h.
#include "app/gui/thread_priority.h"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace attnlab::gui {

void lower_this_thread_priority() {
#if defined(__linux__)
  // On Linux nice values belong to threads: setpriority on the thread id affects only it.
  // 10 is what desktop environments give background work; raising it back needs no rights.
  constexpr int kBackgroundNice = 10;
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  (void)setpriority(PRIO_PROCESS, tid, kBackgroundNice);
#endif
}

}  // namespace attnlab::gui
