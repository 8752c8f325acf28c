// Patch retrieval from Python (issue 70 goal 4): attnlab._retrieve runs core/retrieval's
// search, as `attnlab retrieve` does, on an embed folder's embeddings.npy (memory-mapped,
// never read whole). python/attnlab/embeddings.py wraps it as Embeddings.retrieve, which
// reads the grid from embed.json, checks the patch and names the images.
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "core/retrieval/top_k.h"
#include "core/runtime/threads.h"
#include "python/src/common.h"
#include "python/src/control.h"

namespace attnlab::python {
namespace {

std::vector<std::tuple<int64_t, int64_t, float>> retrieve(const std::string& path,
                                                          int64_t image_row, int64_t token,
                                                          int64_t k, bool exclude_self,
                                                          const py::object& progress) {
  if (k < 1) throw std::invalid_argument("retrieve: k at least 1, not " + std::to_string(k));
  PythonControl control;
  control.progress = progress;
  std::vector<retrieval::Match> best;
  run_controlled(control, [&] {
    py::gil_scoped_release release;
    const retrieval::TokenIndex index(path);
    if (image_row < 0 || image_row >= index.images())
      throw std::invalid_argument("retrieve: image " + std::to_string(image_row) +
                                  " is not a row of " + path + " (0.." +
                                  std::to_string(index.images() - 1) + ")");
    if (token < 0 || token >= index.tokens())
      throw std::invalid_argument("retrieve: token " + std::to_string(token) + " is outside the " +
                                  std::to_string(index.tokens()) + " tokens of each image of " +
                                  path);
    const std::vector<float> query = index.vector(image_row, token);
    retrieval::SearchOptions options;
    options.exclude_image = exclude_self ? image_row : -1;
    // As the CLI: attnlab.set_threads, else ATTNLAB_THREADS, else every core (the result
    // is the same for any count).
    options.threads = runtime::current_threads();
    options.on_progress = [&](int64_t done, int64_t total) { control.report(done, total); };
    options.cancelled = [&] { return control.cancelled(); };
    try {
      best = retrieval::top_k_similar(index, query, k, options);
    } catch (const retrieval::Cancelled&) {
      throw session::AnalysisCancelled();
    }
    return 0;
  });
  std::vector<std::tuple<int64_t, int64_t, float>> out;
  out.reserve(best.size());
  for (const retrieval::Match& m : best) out.emplace_back(m.image, m.token, m.score);
  return out;
}

}  // namespace

void bind_retrieve(py::module_& m) {
  m.def("_retrieve", &retrieve, py::arg("path"), py::arg("image_row"), py::arg("token"),
        py::arg("k"), py::arg("exclude_self"), py::arg("progress") = py::none(),
        "[(image, token, score)]: the k tokens of an (N, T, F) float32 .npy most similar by "
        "cosine to token `token` of row `image_row` (score descending, then image, then "
        "token), as `attnlab retrieve`. Use Embeddings.retrieve.");
}

}  // namespace attnlab::python
