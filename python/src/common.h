// What the binding's files share: the JSON bridge (nlohmann::json <-> Python objects, via
// Python's json module: small metadata only, never bulk data) and the per-file binders
// module.cpp calls. Bulk results cross as numpy arrays that own their buffers (results.h).
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

#include <string>

namespace attnlab::python {

namespace py = pybind11;

py::object to_python(const nlohmann::json& j);
// A str or a list of str as the CLI's comma-separated list ("maps,rank"); `fallback` for None.
std::string comma_list(const py::object& names, const std::string& fallback);
nlohmann::json from_python(const py::handle& o);

void bind_errors(py::module_& m);
void bind_registry(py::module_& m);
void bind_model(py::module_& m);
// attnlab.complexity and attnlab.bench_attention (bind_costs.cpp).
void bind_costs(py::module_& m);
// attnlab.clip_tokenize (bind_text.cpp).
void bind_text(py::module_& m);
struct Model;
// Model.trace and the Traces it returns (bind_traces.cpp), added to the Model class.
void bind_traces(py::module_& m, py::class_<Model, std::shared_ptr<Model>>& model);
// Model.text_map (bind_text.cpp).
void bind_text_map(py::class_<Model, std::shared_ptr<Model>>& model);
// Model.classify (bind_classify.cpp).
void bind_classify(py::class_<Model, std::shared_ptr<Model>>& model);
// Model._embed, attnlab._project, attnlab._projection_figure (bind_embed.cpp).
void bind_embed(py::module_& m, py::class_<Model, std::shared_ptr<Model>>& model);
// attnlab._retrieve: patch retrieval over an embed folder (bind_retrieve.cpp).
void bind_retrieve(py::module_& m);
// Model.faithfulness (bind_faithfulness.cpp).
void bind_faithfulness(py::class_<Model, std::shared_ptr<Model>>& model);

}  // namespace attnlab::python
