// attnlab.clip_tokenize(texts, context_length=77, truncate=True): CLIP's tokenizer from
// Python (models/clip_tokens.h), the ids as a numpy array (B, context_length) of int64 —
// what clip.tokenize returns (as int32 there). A text that cannot be tokenized as CLIP
// does, or is too long with truncate=False, raises UsageError naming it.
#include <pybind11/numpy.h>

#include <string>
#include <vector>

#include "models/clip_tokens.h"
#include "python/src/common.h"

namespace attnlab::python {

void bind_text(py::module_& m) {
  m.def(
      "clip_tokenize",
      [](const py::object& texts, int64_t context_length, bool truncate) {
        std::vector<std::string> list;
        if (py::isinstance<py::str>(texts)) {
          list.push_back(texts.cast<std::string>());
        } else {
          for (const auto& t : texts.cast<py::sequence>()) {
            if (!py::isinstance<py::str>(t))
              throw std::invalid_argument("clip_tokenize: texts must be strings, got " +
                                          std::string(py::str(py::type::of(t))));
            list.push_back(t.cast<std::string>());
          }
        }
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
