// `attnlab._attnlab`: the extension module's entry point. Each file binds one concept
// (errors, registries, models and their results); python/attnlab/__init__.py re-exports
// them with the Python-only conveniences (to_pandas, tqdm progress).
#include "core/runtime/threads.h"
#include "python/src/common.h"
#include "python/src/results.h"
#include "python/src/tensor.h"

namespace attnlab::python {

py::object to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

std::string comma_list(const py::object& names, const std::string& fallback) {
  if (names.is_none()) return fallback;
  if (py::isinstance<py::str>(names)) return names.cast<std::string>();
  std::string list;
  for (const auto& n : names.cast<py::sequence>())
    list += (list.empty() ? "" : ",") + n.cast<std::string>();
  return list;
}

nlohmann::json from_python(const py::handle& o) {
  const std::string text = py::str(py::module_::import("json").attr("dumps")(o));
  return nlohmann::json::parse(text);
}

}  // namespace attnlab::python

PYBIND11_MODULE(_attnlab, m) {
  m.doc() = "attnlab: attention analyses of vision transformers (the C++ engine)";
  attnlab::python::bind_errors(m);
  attnlab::python::bind_registry(m);
  attnlab::python::bind_tensor(m);
  attnlab::python::bind_results(m);  // before the methods that return Results
  attnlab::python::bind_model(m);
  attnlab::python::bind_costs(m);
  attnlab::python::bind_text(m);
  attnlab::python::bind_retrieve(m);
  // LibTorch's thread pool as the CLI sets it at start-up: ATTNLAB_THREADS, else every core.
  attnlab::runtime::configure_threads(0);
  m.def("set_threads", &attnlab::runtime::configure_threads, pybind11::arg("n"),
        "Sets LibTorch's intra-op threads (as the CLI's --threads); returns the count in effect.");
  m.def("threads", &attnlab::runtime::current_threads, "LibTorch's intra-op thread count.");
}
