// Model.classify(images, top=5): the CLI's `classify` from Python — each image's most
// probable classes after the softmax, named by the model's class names (its config's, the
// bundled lists, or the class_names file it was loaded with). A model whose output is an
// embedding (DINO, CLIP) is refused by name. One image that fails gets its error in its
// entry; the others are classified (as the CLI skips it).
#include <pybind11/stl.h>

#include <ATen/ATen.h>

#include "app/session/predictions.h"
#include "python/src/images.h"
#include "python/src/model.h"

namespace attnlab::python {
namespace {

py::list classify(Model& m, const py::object& images, int top, const py::object& edits) {
  if (top < 1) throw std::invalid_argument("top: at least 1, not " + std::to_string(top));
  const std::vector<ImageItem> items = image_items(images, m.choice.preprocessing);
  std::vector<image::EditOp> ops;
  if (!edits.is_none()) {
    try {
      ops = image::parse_edits(edits.cast<std::string>());
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("edits: ") + e.what());
    }
  }
  require_pictures_for_edits(items, ops);
  models::require_classes(*m.ready.model, "classify");
  struct Answer {
    std::vector<session::Prediction> top;
    std::string error;
  };
  std::vector<Answer> answers(items.size());
  {
    py::gil_scoped_release release;
    at::NoGradGuard no_grad;
    std::vector<std::string> names;  // known once the class count is
    for (size_t k = 0; k < items.size(); ++k) {
      try {
        const at::Tensor x = item_input(items[k], m.choice.preprocessing, *m.ready.model, ops);
        const at::Tensor logits = m.ready.model->run(x.to(m.target.device)).logits[0];
        if (!at::isfinite(logits).all().item<bool>())
          throw std::runtime_error("the model's logits are not finite (NaN/Inf)");
        if (names.empty())
          names = session::model_class_names(m.choice, m.ready.config, logits.size(0));
        answers[k].top = session::top_predictions(logits, names, top);
      } catch (const std::exception& e) {
        answers[k].error = e.what();
      }
    }
  }
  py::list out;
  for (size_t k = 0; k < items.size(); ++k) {
    py::dict d;
    d["tag"] = items[k].tag;
    d["path"] = items[k].path;
    if (!answers[k].error.empty()) {
      d["error"] = answers[k].error;
    } else {
      py::list t;
      for (const auto& p : answers[k].top) t.append(py::make_tuple(p.cls, p.name, p.probability));
      d["top"] = t;
    }
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_classify(py::class_<Model, std::shared_ptr<Model>>& model) {
  model.def("classify", &classify, py::arg("images"), py::arg("top") = 5,
            py::arg("edits") = py::none(),
            "Each image's `top` most probable classes, as `attnlab classify`: a list of "
            "{tag, path, top: [(class, name, probability), ...]} ({..., error} for an image "
            "that failed).");
}

}  // namespace attnlab::python
