// attnlab.load → Model, Model.describe, Model.analyze → Results: the CLI's `analyze` from
// Python. The model is chosen and loaded as `--model` chooses it (presets, checkpoints of
// every format, configs, recognition), and analyze runs the session's image loop as the
// CLI does one image per forward (the same calls in the same order), so its tables and
// arrays are the CLI's values. The GIL is released while the engine works; progress and
// Ctrl-C are checked between images and inside the long analyses.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <ATen/ATen.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>

#include "app/session/analysis_session.h"
#include "app/session/edited_input.h"
#include "app/session/model_source.h"
#include "core/analysis/output_folder.h"
#include "core/runtime/precision.h"
#include "python/src/images.h"
#include "python/src/model.h"

namespace attnlab::python {
namespace {

// One analysis run's results; arrays are shared with the numpy arrays handed out.
struct Results {
  std::string model_tag;
  std::vector<analysis::Table> tables;
  std::vector<std::shared_ptr<const analysis::Array>> arrays;
  nlohmann::json metadata;
};

std::vector<int64_t> img_size_of(const py::object& size) {
  if (size.is_none()) return {};
  if (py::isinstance<py::int_>(size)) {
    const int64_t s = size.cast<int64_t>();
    if (s < 1)
      throw std::invalid_argument("img_size: a positive number of pixels, not " +
                                  std::to_string(s));
    return {s, s};
  }
  try {
    const auto hw = size.cast<std::vector<int64_t>>();
    if (hw.size() == 2 && hw[0] >= 1 && hw[1] >= 1) return hw;
  } catch (const py::cast_error&) {
  }
  throw std::invalid_argument("img_size: an int or (height, width), both positive");
}

std::shared_ptr<Model> load(const std::string& what, const py::object& img_size,
                            const std::string& device, const std::string& dtype,
                            const std::optional<std::string>& class_names) {
  session::ModelRequest request;
  request.model = what;
  request.img_size = img_size_of(img_size);
  if (class_names) request.class_names_path = *class_names;
  request.hash_checkpoint = true;  // the results' metadata records it, as a sidecar does
  auto m = std::make_shared<Model>();
  py::gil_scoped_release release;
  m->choice = session::choose_model(request);
  m->target = runtime::select_target(device, dtype);
  m->ready = session::load_chosen_model(m->choice, m->target);
  return m;
}

py::object describe(const Model& m) {
  nlohmann::json d = m.ready.describe;
  d["tag"] = m.choice.tag;
  d["preprocessing"] = m.choice.preprocessing.describe();
  d["device"] = m.target.str();
  if (!m.choice.recognition.empty()) d["recognition"] = m.choice.recognition;
  d["warnings"] = m.ready.warnings;
  return to_python(d);
}

// The analysis settings of Model.analyze's arguments, each refused by its keyword.
session::AnalysisSettings settings_of(const py::object& analyses, const py::object& query,
                                      const py::object& layers, const py::object& edits,
                                      const py::kwargs& options) {
  session::AnalysisSettings st;
  std::string list = "all";
  if (py::isinstance<py::str>(analyses)) {
    list = analyses.cast<std::string>();
  } else if (!analyses.is_none()) {
    list.clear();
    for (const auto& a : analyses.cast<py::sequence>())
      list += (list.empty() ? "" : ",") + a.cast<std::string>();
  }
  try {
    st.analyses = session::parse_analyses(list);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("analyses: ") + e.what());
  }
  if (py::isinstance<py::int_>(query)) {
    st.query_token = query.cast<int64_t>();
    if (st.query_token < 0) throw std::invalid_argument("query: a token index is at least 0");
  } else if (!query.is_none()) {
    std::vector<int64_t> yx;
    try {
      yx = query.cast<std::vector<int64_t>>();
    } catch (const py::cast_error&) {
    }
    if (yx.size() != 2 || yx[0] < 0 || yx[1] < 0)
      throw std::invalid_argument("query: (y, x) on the first layer's grid, or a token index");
    st.query_y = yx[0];
    st.query_x = yx[1];
  }
  if (!layers.is_none()) {
    try {
      st.layers = layers.cast<std::vector<int64_t>>();
    } catch (const py::cast_error&) {
      throw std::invalid_argument("layers: a list of layer indices");
    }
  }
  if (!edits.is_none()) {
    try {
      st.edits = image::parse_edits(edits.cast<std::string>());
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("edits: ") + e.what());
    }
  }
  for (const auto& [key, value] : options) {
    const std::string keyword = py::str(key);
    std::string name = keyword;
    for (char& c : name) c = c == '_' ? '-' : c;
    if (!session::find_analysis_option(name))
      throw std::invalid_argument(
          "unknown keyword '" + keyword +
          "': not an option of any analysis (attnlab.analyses() lists them)");
    try {
      st.options.set(name, from_python(value));
    } catch (const std::exception& e) {
      throw std::invalid_argument(keyword + ": " + e.what());
    }
  }
  return st;
}

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

std::shared_ptr<Results> run_analysis(Model& m, const std::vector<ImageItem>& items,
                                      const session::AnalysisSettings& settings,
                                      PythonControl& control) {
  auto out = std::make_shared<Results>();
  out->model_tag = m.choice.tag;
  nlohmann::json images_json = nlohmann::json::array(), failed = nlohmann::json::array();
  {
    py::gil_scoped_release release;
    session::AnalysisSession session(
        settings,
        [&](const analysis::Array& a) {
          out->arrays.push_back(std::make_shared<const analysis::Array>(a));
        },
        {[&] { return control.cancelled(); }, {}});
    const models::ForwardOptions forward = settings.forward_options();
    for (size_t k = 0; k < items.size(); ++k) {
      const ImageItem& item = items[k];
      control.report(int64_t(k), int64_t(items.size()));
      if (control.cancelled()) throw session::AnalysisCancelled();
      try {
        const at::Tensor x = session::edited_input(item_picture(item), m.choice.preprocessing,
                                                   *m.ready.model, settings.edits);
        const at::Tensor on_device = x.to(m.target.device);
        const models::ForwardResult result = m.ready.model->run(on_device, forward);
        session.add(item.tag, result, 0, {item.path, &x, &m.choice.preprocessing});
        if (session.explains()) session.explain(item.tag, *m.ready.model, on_device);
        images_json.push_back({{"path", item.path}, {"tag", item.tag}, {"status", "analysed"}});
      } catch (const session::AnalysisCancelled&) {
        throw;
      } catch (const std::exception& e) {  // one bad image: said, the others go on (as the CLI)
        images_json.push_back({{"path", item.path}, {"tag", item.tag}, {"status", "failed"}});
        failed.push_back({{"tag", item.tag}, {"path", item.path}, {"error", e.what()}});
      }
    }
    control.report(int64_t(items.size()), int64_t(items.size()));
    if (session.images() == 0)
      throw std::runtime_error(
          "no image could be analysed" +
          (failed.empty() ? std::string() : ": " + failed[0]["error"].get<std::string>()));
    session.finish();
    out->tables = session.tables();
    for (const auto& a : session.arrays())
      out->arrays.push_back(std::make_shared<const analysis::Array>(a));
    out->metadata = {{"settings", settings.to_json()},  {"model", m.ready.description()},
                     {"images", images_json},           {"failed", failed},
                     {"layers", session.layers_json()}, {"warnings", session.warnings()},
                     {"skipped", session.skipped()}};
  }
  return out;
}

std::shared_ptr<Results> analyze(Model& m, const py::object& images, const py::object& analyses,
                                 const py::object& query, const py::object& layers,
                                 const py::object& edits, const py::object& progress,
                                 const py::kwargs& options) {
  const std::vector<ImageItem> items = image_items(images);
  const session::AnalysisSettings settings = settings_of(analyses, query, layers, edits, options);
  PythonControl control;
  control.progress = progress;
  try {
    return run_analysis(m, items, settings, control);
  } catch (const session::AnalysisCancelled&) {
    if (!control.interrupted) throw;         // the progress callback stopped it: attnlab.Cancelled
    PyErr_SetNone(PyExc_KeyboardInterrupt);  // Ctrl-C: as Python raises it
    throw py::error_already_set();
  }
}

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

py::list save(const Results& r, const std::string& dir) {
  std::vector<std::string> files;
  {
    py::gil_scoped_release release;
    analysis::OutputFolder folder(dir, r.model_tag);
    for (const auto& t : r.tables)
      for (const auto& f : folder.write_table(t)) files.push_back(f);
    for (const auto& a : r.arrays) files.push_back(folder.write_array(*a));
    if (r.metadata.contains("settings") && r.metadata["settings"].contains("edits")) {
      std::vector<image::EditOp> edits =
          image::parse_edits(r.metadata["settings"]["edits"].get<std::string>());
      files.push_back(folder.write_text(session::kEditsFile, session::edits_file_text(edits),
                                        "the what-if edits applied to every image"));
    }
    files.push_back(folder.write_sidecar(r.metadata));
  }
  return py::cast(files);
}

}  // namespace

void bind_model(py::module_& m) {
  py::class_<Model, std::shared_ptr<Model>> model(m, "Model",
                                                  "A model loaded as `attnlab --model` loads it.");
  bind_traces(m, model);
  bind_classify(model);
  model.def("describe", &describe, "Architecture, config, checkpoint, preprocessing, device.")
      .def_property_readonly("tag", [](const Model& x) { return x.choice.tag; })
      .def("analyze", &analyze, py::arg("images"), py::arg("analyses") = py::none(),
           py::arg("query") = py::none(), py::arg("layers") = py::none(),
           py::arg("edits") = py::none(), py::arg("progress") = py::none(),
           "Runs the analyses (default all) on the images (paths, folders, H×W×3 uint8 "
           "arrays); options of the analyses as keywords (outlier_factor=3). Returns Results.");
  py::class_<Results, std::shared_ptr<Results>>(m, "Results", "What Model.analyze computed.")
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
      .def_property_readonly("metadata", [](const Results& r) { return to_python(r.metadata); })
      .def("save", &save, py::arg("folder"),
           "Writes the tables (CSV, JSON, LaTeX), arrays (.npy) and the sidecar as `attnlab "
           "analyze --out FOLDER` writes them; returns the files.");
  m.def("load", &load, py::arg("model"), py::arg("img_size") = py::none(),
        py::arg("device") = "cpu", py::arg("dtype") = "fp32", py::arg("class_names") = py::none(),
        "Loads a preset, checkpoint (safetensors, .pth, .bin, .npz), model folder or config as "
        "`attnlab --model` does; img_size (int or (H, W)) and class_names as --img-size and "
        "--class-names.");
}

}  // namespace attnlab::python
