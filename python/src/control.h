// How work in the binding is stopped from Python: a progress callback that returns
// False (attnlab.Cancelled) or Ctrl-C (KeyboardInterrupt), both seen through the engine's
// cancellation (session::AnalysisCancelled) while the GIL is released.
#pragma once

#include <atomic>

#include "app/session/analysis_session.h"
#include "python/src/common.h"

namespace attnlab::python {

// Asks Python, with the GIL, whether to stop: Ctrl-C (its KeyboardInterrupt is kept to be
// raised at the end) or a progress callback that returned False.
struct PythonControl {
  py::object progress;  // None or callable(done, total) -> falsy False stops
  std::atomic<bool> interrupted{false}, stopped{false};

  bool cancelled() {
    if (interrupted || stopped) return true;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();  // raised again as Cancelled/KeyboardInterrupt by analyze
      interrupted = true;
    }
    return interrupted;
  }
  void report(int64_t done, int64_t total) {
    if (progress.is_none()) return;
    py::gil_scoped_acquire gil;
    const py::object answer = progress(done, total);
    if (!answer.is_none() && !answer.cast<bool>()) stopped = true;
  }
};

// Runs `work` (which releases the GIL itself) and turns a cancellation by Ctrl-C into
// Python's KeyboardInterrupt; one by the callback stays AnalysisCancelled (attnlab.Cancelled).
template <typename Work>
auto run_controlled(PythonControl& control, Work work) {
  try {
    return work();
  } catch (const session::AnalysisCancelled&) {
    if (!control.interrupted) throw;
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
}

}  // namespace attnlab::python
