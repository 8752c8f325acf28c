// Background threads (model compute, file loading) run at a lower scheduling priority
// than the UI, so on a machine with few cores a running job slows itself, not the frame
// loop. Linux: a per-thread nice value; elsewhere nothing. ATTNLAB_WORKER_PRIORITY=normal
// leaves them at normal priority (the test scripts set it: see thread_priority.cpp).
#pragma once

namespace attnlab::gui {

// Lowers the calling thread's priority to "background"; harmless when not permitted.
void lower_this_thread_priority();

}  // namespace attnlab::gui
