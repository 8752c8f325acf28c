// The module's exceptions: every failure of the engine reaches Python as one of these, with
// the message the CLI prints, never as a crash. AttnlabError is the base; UsageError (a
// bad argument, also a ValueError) names the argument; ModelError (a model that cannot be
// chosen, recognised or run); IoError (a file that cannot be read or written; also an
// OSError); Cancelled (Ctrl-C or a progress callback that returned False; also a
// KeyboardInterrupt when it came from Ctrl-C, raised as such).
#include <stdexcept>

#include "app/session/analysis_session.h"
#include "app/session/model_source.h"
#include "core/io/io_error.h"
#include "core/text/text_error.h"
#include "models/backbone.h"
#include "python/src/common.h"

namespace attnlab::python {

void bind_errors(py::module_& m) {
  static py::exception<std::runtime_error> base(m, "AttnlabError", PyExc_RuntimeError);
  static py::object usage = [&] {
    py::object o = py::reinterpret_steal<py::object>(PyErr_NewException(
        "attnlab.UsageError", py::make_tuple(base, py::handle(PyExc_ValueError)).ptr(), nullptr));
    m.add_object("UsageError", o);
    return o;
  }();
  static py::exception<models::ModelError> model(m, "ModelError", base.ptr());
  static py::object io = [&] {
    py::object o = py::reinterpret_steal<py::object>(PyErr_NewException(
        "attnlab.IoError", py::make_tuple(base, py::handle(PyExc_OSError)).ptr(), nullptr));
    m.add_object("IoError", o);
    return o;
  }();
  static py::exception<session::AnalysisCancelled> cancelled(m, "Cancelled", base.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::error_already_set&) {
      throw;  // a Python exception from a callback: as it was
    } catch (const session::AnalysisCancelled& e) {
      PyErr_SetString(cancelled.ptr(), e.what());
    } catch (const session::ModelChoiceError& e) {
      PyErr_SetString(usage.ptr(), e.what());
    } catch (const models::ModelError& e) {
      PyErr_SetString(model.ptr(), e.what());
    } catch (const io::IoError& e) {
      PyErr_SetString(io.ptr(), e.what());
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(usage.ptr(), e.what());
    } catch (const text::TextError& e) {  // a text that cannot be tokenized as CLIP does
      PyErr_SetString(usage.ptr(), e.what());
    } catch (const std::exception& e) {
      PyErr_SetString(base.ptr(), e.what());
    }
  });
}

}  // namespace attnlab::python
