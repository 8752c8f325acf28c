// attnlab.load → Model, Model.describe, Model.analyze → Results: the CLI's `analyze` from
// Python. The model is chosen and loaded as `--model` chooses it (presets, checkpoints of
// every format, configs, recognition), and analyze runs the session's image loop as the
// CLI does one image per forward (the same calls in the same order), so its tables and
// arrays are the CLI's values. The GIL is released while the engine works; progress and
// Ctrl-C are checked between images and inside the long analyses.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <ATen/ATen.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "app/session/analysis_session.h"
#include "app/session/input_picture.h"
#include "app/session/model_source.h"
#include "app/session/query.h"
#include "core/analysis/output_folder.h"
#include "core/runtime/precision.h"
#include "python/src/control.h"
#include "python/src/images.h"
#include "python/src/model.h"
#include "python/src/results.h"

namespace attnlab::python {
namespace {

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
                            const std::optional<std::string>& class_names, bool random_init) {
  session::ModelRequest request;
  request.model = what;
  request.random_init = random_init;
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
  try {
    st.analyses = session::parse_analyses(comma_list(analyses, "all"));
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
        const at::Tensor x =
            item_input(item, m.choice.preprocessing, *m.ready.model, settings.edits);
        const at::Tensor on_device = x.to(m.target.device);
        const models::ForwardResult result = m.ready.model->run(on_device, forward);
        session.add(item.tag, result, 0, {item.path, &x, &m.choice.preprocessing});
        if (session.explains()) session.explain(item.tag, *m.ready.model, on_device);
        out->images.push_back({item.tag, session::input_picture(x, m.choice.preprocessing)});
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
    out->report_figures = true;
    out->preprocessing = m.choice.preprocessing.describe();
    out->rollout_switches = session::describe_rollout(session::rollout_options(settings.options));
    out->class_names = session::model_class_names(
        m.choice, m.ready.config, m.ready.config.value("num_classes", int64_t{1000}));
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
  const std::vector<ImageItem> items = image_items(images, m.choice.preprocessing);
  const session::AnalysisSettings settings = settings_of(analyses, query, layers, edits, options);
  require_pictures_for_edits(items, settings.edits);
  PythonControl control;
  control.progress = progress;
  return run_controlled(control, [&] { return run_analysis(m, items, settings, control); });
}

}  // namespace

void bind_model(py::module_& m) {
  py::class_<Model, std::shared_ptr<Model>> model(m, "Model",
                                                  "A model loaded as `attnlab --model` loads it.");
  bind_traces(m, model);
  bind_classify(model);
  bind_embed(m, model);
  bind_text_map(model);
  bind_faithfulness(model);
  model.def("describe", &describe, "Architecture, config, checkpoint, preprocessing, device.")
      .def_property_readonly("tag", [](const Model& x) { return x.choice.tag; })
      .def("analyze", &analyze, py::arg("images"), py::arg("analyses") = py::none(),
           py::arg("query") = py::none(), py::arg("layers") = py::none(),
           py::arg("edits") = py::none(), py::arg("progress") = py::none(),
           "Runs the analyses (default all) on the images (paths, folders, H×W×3 uint8 "
           "arrays); options of the analyses as keywords (outlier_factor=3). Returns Results.");
  m.def("load", &load, py::arg("model"), py::arg("img_size") = py::none(),
        py::arg("device") = "cpu", py::arg("dtype") = "fp32", py::arg("class_names") = py::none(),
        py::arg("random_init") = false,
        "Loads a preset, checkpoint (safetensors, .pth, .bin, .npz), model folder or config as "
        "`attnlab --model` does; img_size (int or (H, W)), class_names and random_init (a preset "
        "with random weights) as --img-size, --class-names and --random-init.");
}

}  // namespace attnlab::python
