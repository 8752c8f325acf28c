// Model.faithfulness(images, maps, step, baseline, batch, randomisation, seed) → Results:
// `attnlab faithfulness` for one model from Python (session::FaithfulnessRun, the same
// scoring and tables), its figures the command's curves and scoreboard. Files are read as
// the command reads them (core/data's file batches), arrays through the preprocessing;
// without labels the reference class is the unperturbed prediction, as in the command.
#include <pybind11/stl.h>

#include <ATen/ATen.h>

#include <chrono>
#include <optional>

#include "app/session/faithfulness_run.h"
#include "core/data/batches.h"
#include "core/io/text.h"
#include "python/src/control.h"
#include "python/src/images.h"
#include "python/src/model.h"
#include "python/src/results.h"
#include "viz/figures/faithfulness.h"

namespace attnlab::python {
namespace {

session::FaithfulnessSettings faithfulness_settings(const py::object& maps, double step,
                                                    const std::string& baseline, int64_t batch,
                                                    bool randomisation, int64_t seed) {
  session::FaithfulnessSettings s;
  try {  // by default every kind, as the command scores them
    s.kinds = session::parse_faithfulness_maps(
        comma_list(maps, text::join(session::faithfulness_map_kinds(), ",")));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("maps: ") + e.what());
  }
  s.kinds_named = !maps.is_none();
  if (!(step > 0 && step <= 0.5))
    throw std::invalid_argument("step: the fraction of cells per step, in (0, 0.5]");
  if (batch < 1) throw std::invalid_argument("batch: at least 1");
  if (seed < 1) throw std::invalid_argument("seed: a positive integer");
  s.request.step = step;
  s.request.batch = batch;
  s.request.seed = uint64_t(seed);
  try {
    s.baseline = models::parse_perturb_baseline(baseline);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("baseline: ") + e.what());
  }
  s.randomise = randomisation;
  return s;
}

// The command's two figures, each owning the tables it draws.
void faithfulness_figures(Results& r) {
  std::optional<analysis::Table> curves, summary, checks;
  for (const auto& t : r.tables) {
    if (t.name == "faithfulness_curves") curves = t;
    if (t.name == "faithfulness") summary = t;
    if (t.name == "faithfulness_randomisation_summary") checks = t;
  }
  r.own_figures.push_back(
      {"faithfulness_curves", "faithfulness__faithfulness_curves",
       [=] { return viz::faithfulness_curves_figure(*curves, {}, checks ? &*checks : nullptr); }});
  r.own_figures.push_back({"faithfulness_scoreboard", "faithfulness__faithfulness_scoreboard",
                           [=] { return viz::faithfulness_scoreboard_figure(*summary); }});
}

std::shared_ptr<Results> faithfulness(Model& m, const py::object& images, const py::object& maps,
                                      double step, const std::string& baseline, int64_t batch,
                                      bool randomisation, int64_t seed,
                                      const py::object& progress) {
  const std::vector<ImageItem> items = image_items(images, m.choice.preprocessing);
  const session::FaithfulnessSettings settings =
      faithfulness_settings(maps, step, baseline, batch, randomisation, seed);
  PythonControl control;
  control.progress = progress;
  auto out = std::make_shared<Results>();
  out->model_tag = "faithfulness";  // the command's file prefix
  return run_controlled(control, [&] {
    std::vector<std::string> notes;
    session::FaithfulnessRun run(settings,
                                 [&](const std::string& note, bool) { notes.push_back(note); });
    nlohmann::json failed = nlohmann::json::array();
    const auto t0 = std::chrono::steady_clock::now();
    py::gil_scoped_release release;
    run.begin_model(m.choice.tag);
    std::array<int64_t, 2> shape{0, 0};
    for (size_t k = 0; k < items.size(); ++k) {
      const ImageItem& item = items[k];
      control.report(int64_t(k), int64_t(items.size()));
      if (control.cancelled()) throw session::AnalysisCancelled();
      try {
        at::Tensor x;
        if (item.path.empty()) {  // an array or a tensor
          x = item_input(item, m.choice.preprocessing, *m.ready.model, {});
        } else {  // as the command reads --images
          const data::FileBatch fb =
              data::load_file_batch({{item.path, -1}}, 0, 1, m.choice.preprocessing, shape);
          if (fb.size() == 0)
            throw std::runtime_error(fb.failed.empty() ? "unreadable" : fb.failed.front().error);
          x = fb.images;
        }
        run.score(*m.ready.model, x.to(m.target.device), -1, item.tag, int64_t(k),
                  [&] { return control.cancelled(); });
      } catch (const session::AnalysisCancelled&) {
        throw;
      } catch (const std::exception& e) {  // one bad image: said, the others go on
        if (control.cancelled()) throw session::AnalysisCancelled();
        failed.push_back({{"tag", item.tag}, {"path", item.path}, {"error", e.what()}});
      }
    }
    control.report(int64_t(items.size()), int64_t(items.size()));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    run.end_model(m.ready.description(), seconds);
    if (run.empty())
      throw std::runtime_error(
          "faithfulness: no map could be scored" +
          (failed.empty() ? std::string() : ": " + failed[0]["error"].get<std::string>()));
    out->tables = run.tables();
    faithfulness_figures(*out);
    out->metadata = run.sidecar();
    out->metadata["failed"] = failed;
    out->metadata["device"] = m.target.device.str();
    out->metadata["dtype"] = runtime::dtype_name(m.target.dtype);
    out->metadata["seconds"] = seconds;
    return out;
  });
}

}  // namespace

void bind_faithfulness(py::class_<Model, std::shared_ptr<Model>>& model) {
  model.def("faithfulness", &faithfulness, py::arg("images"), py::arg("maps") = py::none(),
            py::arg("step") = 0.05, py::arg("baseline") = "blur", py::arg("batch") = 32,
            py::arg("randomisation") = true, py::arg("seed") = 1, py::arg("progress") = py::none(),
            "`attnlab faithfulness` on this model: deletion, insertion, positive and negative "
            "perturbation curves and areas per image and map kind (default cls, rollout, "
            "gradcam, gradrollout, random, centre), and the model-randomisation check. "
            "Returns Results (tables, metadata, the curves and scoreboard figures).");
}

}  // namespace attnlab::python
