// attnlab.clip_tokenize(texts, context_length=77, truncate=True): CLIP's tokenizer from
// Python (models/clip_tokens.h), the ids as a numpy array (B, context_length) of int64 —
// what clip.tokenize returns (as int32 there). A text that cannot be tokenized as CLIP
// does, or is too long with truncate=False, raises UsageError naming it.
// Model.text_map(image, texts): where a whole CLIP sees each text (models/image_text.h
// prompt_maps), as numpy.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "models/clip_tokens.h"
#include "models/image_text.h"
#include "python/src/common.h"
#include "python/src/images.h"
#include "python/src/model.h"

namespace attnlab::python {
namespace {

std::vector<std::string> text_list(const py::object& texts, const char* who) {
  std::vector<std::string> list;
  if (py::isinstance<py::str>(texts)) return {texts.cast<std::string>()};
  for (const auto& t : texts.cast<py::sequence>()) {
    if (!py::isinstance<py::str>(t))
      throw std::invalid_argument(std::string(who) + ": texts must be strings, got " +
                                  std::string(py::str(py::type::of(t))));
    list.push_back(t.cast<std::string>());
  }
  return list;
}

template <class T>
py::array_t<T> to_numpy(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kCPU, c10::CppTypeToScalarType<T>::value).contiguous();
  py::array_t<T> out(c.sizes().vec());
  std::copy(c.data_ptr<T>(), c.data_ptr<T>() + c.numel(), out.mutable_data());
  return out;
}

py::dict text_map(Model& m, const py::object& image, const py::object& texts) {
  const std::vector<std::string> list = text_list(texts, "text_map");
  if (list.empty()) throw std::invalid_argument("text_map: texts: at least one text");
  models::ImageTextModel* pair = models::image_text_model(*m.ready.model);
  if (!pair)
    throw models::ModelError("text_map: " + m.ready.model->arch() +
                             " reads images only: text needs a whole CLIP (clip_full)");
  const std::vector<ImageItem> items = image_items(image, m.choice.preprocessing);
  if (items.size() != 1)
    throw std::invalid_argument("text_map: image: one image, got " + std::to_string(items.size()));
  models::PromptMaps maps;
  {
    py::gil_scoped_release release;
    const at::NoGradGuard no_grad;
    const at::Tensor x = item_input(items[0], m.choice.preprocessing, *m.ready.model, {});
    const at::Tensor tokens = models::clip_tokens(list, pair->context_length());
    const at::Tensor texts_n = models::l2_normalized(pair->encode_text(tokens).features);
    maps = models::prompt_maps(*m.ready.model, x.to(m.target.device), texts_n);
  }
  py::dict d;
  d["texts"] = list;
  d["maps"] = to_numpy<float>(maps.cosine[0]);
  d["logits"] = to_numpy<float>(maps.logits[0]);
  d["probabilities"] = to_numpy<float>(at::softmax(maps.logits[0].to(at::kFloat), 0));
  return d;
}

}  // namespace

void bind_text_map(py::class_<Model, std::shared_ptr<Model>>& model) {
  model.def("text_map", &text_map, py::arg("image"), py::arg("texts"),
            "Where a whole CLIP sees each text in one image: {texts, maps (len(texts), g, g): "
            "each patch's cosine with the text, logits: exp(logit_scale) x cosine of image "
            "and text, probabilities: their softmax over the texts}.");
}

void bind_text(py::module_& m) {
  m.def(
      "clip_tokenize",
      [](const py::object& texts, int64_t context_length, bool truncate) {
        const std::vector<std::string> list = text_list(texts, "clip_tokenize");
        at::Tensor ids;
        {
          py::gil_scoped_release release;
          ids = models::clip_tokens(list, context_length, truncate);
        }
        py::array_t<int64_t> out({ids.size(0), ids.size(1)});
        std::copy(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel(),
                  out.mutable_data());
        return out;
      },
      py::arg("texts"), py::arg("context_length") = 77, py::arg("truncate") = true,
      "CLIP's token ids of texts (a string or a list of strings), as clip.tokenize gives them: "
      "a numpy int64 array (len(texts), context_length).");
}

}  // namespace attnlab::python
