// attnlab.Results: tables as numpy columns, arrays as zero-copy read-only numpy views (and
// as tensors over the same buffers, tensor.h), captions, key columns, the sidecar metadata,
// and save(), which writes what the CLI's --out writes for the same run. Its figures are
// bound by bind_figures.cpp.
#include <ATen/ATen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "app/session/edited_input.h"
#include "core/analysis/output_folder.h"
#include "core/image/image_edits.h"
#include "python/src/results.h"
#include "python/src/tensor.h"

namespace attnlab::python {
namespace {

// A table's columns as numpy arrays: int64 when every cell is an integer, float64 when
// numeric, else a list of str.
py::dict table_columns(const analysis::Table& t) {
  py::dict d;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    bool all_int = true, numeric = true;
    for (const auto& row : t.rows) {
      all_int &= row[c].kind == analysis::Cell::Kind::Int;
      numeric &= row[c].numeric();
    }
    if (numeric && all_int) {
      py::array_t<int64_t> a(py::ssize_t(t.rows.size()));
      auto w = a.mutable_unchecked<1>();
      for (size_t r = 0; r < t.rows.size(); ++r) w(py::ssize_t(r)) = t.rows[r][c].i;
      d[py::str(t.columns[c])] = a;
    } else if (numeric) {
      py::array_t<double> a(py::ssize_t(t.rows.size()));
      auto w = a.mutable_unchecked<1>();
      for (size_t r = 0; r < t.rows.size(); ++r) w(py::ssize_t(r)) = t.rows[r][c].number();
      d[py::str(t.columns[c])] = a;
    } else {
      py::list l;
      for (const auto& row : t.rows) l.append(row[c].str());
      d[py::str(t.columns[c])] = l;
    }
  }
  return d;
}

// The array as numpy without a copy: a read-only view of the result's buffer, which a
// capsule keeps alive as long as the numpy array lives.
py::array array_view(const std::shared_ptr<const analysis::Array>& a) {
  auto* keep = new std::shared_ptr<const analysis::Array>(a);
  py::capsule owner(
      keep, [](void* p) { delete static_cast<std::shared_ptr<const analysis::Array>*>(p); });
  std::vector<py::ssize_t> shape(a->shape.begin(), a->shape.end());
  py::array out(py::dtype::of<float>(), shape, {}, a->data.data(), owner);
  out.attr("flags").attr("writeable") = false;  // numpy's own switch, not pybind11 internals
  return out;
}

// The array as a float32 CPU tensor over the result's buffer (no copy): the deleter's
// copy of the pointer keeps the buffer alive as long as the tensor's storage. Tensors have
// no read-only flag, so a write through it changes the results (and what save() writes).
at::Tensor array_tensor(const std::shared_ptr<const analysis::Array>& a) {
  return at::from_blob(const_cast<float*>(a->data.data()), a->shape, [keep = a](void*) {},
                       at::TensorOptions().dtype(at::kFloat));
}

py::list save(const Results& r, const std::string& dir) {
  std::vector<std::string> files;
  {
    py::gil_scoped_release release;
    analysis::OutputFolder folder(dir, r.model_tag);
    for (const auto& t : r.tables)
      for (const auto& f : folder.write_table(t)) files.push_back(f);
    for (const auto& a : r.arrays) files.push_back(folder.write_array(*a));
    if (r.metadata.contains("settings") && r.metadata["settings"].contains("edits"))
      files.push_back(session::write_edits_file(
          folder, image::parse_edits(r.metadata["settings"]["edits"].get<std::string>())));
    files.push_back(folder.write_sidecar(r.metadata));
  }
  return py::cast(files);
}

}  // namespace

void bind_results(py::module_& m) {
  py::class_<Results, std::shared_ptr<Results>> results(
      m, "Results", "What Model.analyze or Model.faithfulness computed.");
  results
      .def_property_readonly(
          "tables",
          [](const Results& r) {
            py::dict d;
            for (const auto& t : r.tables) d[py::str(t.name)] = table_columns(t);
            return d;
          },
          "Each table by name: its columns as numpy arrays (text as str lists).")
      .def_property_readonly(
          "captions",
          [](const Results& r) {
            py::dict d;
            for (const auto& t : r.tables) d[py::str(t.name)] = t.caption;
            for (const auto& a : r.arrays) d[py::str(a->name)] = a->caption;
            return d;
          },
          "What each table and array holds, one sentence each.")
      .def_property_readonly("key_columns",
                             [](const Results& r) {
                               py::dict d;
                               for (const auto& t : r.tables) d[py::str(t.name)] = t.key_columns;
                               return d;
                             })
      .def_property_readonly(
          "arrays",
          [](const Results& r) {
            py::dict d;
            for (const auto& a : r.arrays) d[py::str(a->name)] = array_view(a);
            return d;
          },
          "Each array by its result key: float32 numpy arrays (read-only "
          "views of the results, no copy).")
      .def_property_readonly(
          "tensors",
          [](const Results& r) {
            py::dict d;
            for (const auto& a : r.arrays) d[py::str(a->name)] = tensor_out(array_tensor(a));
            return d;
          },
          "The arrays as float32 CPU tensors over the same buffers (no copy): torch.Tensor "
          "when the module was built against this environment's torch, else attnlab.Tensor. "
          "A write through one changes the results.")
      .def_property_readonly("metadata", [](const Results& r) { return to_python(r.metadata); })
      .def("save", &save, py::arg("folder"),
           "Writes the tables (CSV, JSON, LaTeX), arrays (.npy) and the sidecar as `attnlab "
           "analyze --out FOLDER` writes them; returns the files.");
  bind_figures(m, results);
}

}  // namespace attnlab::python
