// A dataset's embeddings from Python (issue 70 goals 1, 2, 6): Model._embed writes the
// folder `attnlab embed` writes (session::write_embeddings, the same parser of images and
// datasets), project() runs the CLI's projections on a float32 matrix, and
// projection_figure() draws `attnlab project`'s figure. python/attnlab/embeddings.py
// wraps them as attnlab.embed and attnlab.Embeddings (numpy, pandas, figures inline).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>

#include "app/session/dataset_embedding.h"
#include "app/session/embedding_figure.h"
#include "app/session/embedding_projection.h"
#include "core/analysis/export.h"
#include "core/projection/matrix.h"
#include "python/src/control.h"
#include "python/src/figure.h"
#include "python/src/model.h"

namespace attnlab::python {
namespace {

py::object embed_folder(Model& m, const std::string& out, const std::vector<std::string>& images,
                        const std::string& dataset, int64_t layer, const std::string& pool,
                        int64_t batch, int64_t limit, bool heads, int64_t head_examples,
                        const py::object& progress, const std::string& features) {
  session::EmbeddingOptions options;
  options.layer = layer;
  // features= as --features; pool= "" (None) as no --pool: head for the output, else mean.
  options.features = models::parse_embedding_features(features);
  options.pool = pool.empty() ? models::default_embedding_pool(options.features)
                              : models::parse_embedding_pool(pool);
  if (batch < 1) throw std::invalid_argument("batch: at least 1, not " + std::to_string(batch));
  options.batch = batch;
  if (head_examples < 1)
    throw std::invalid_argument("head_examples: at least 1, not " + std::to_string(head_examples));
  options.heads = heads;
  options.head_examples = head_examples;
  PythonControl control;
  control.progress = progress;
  nlohmann::json record;
  run_controlled(control, [&] {
    py::gil_scoped_release release;
    const auto t0 = std::chrono::steady_clock::now();
    const bool classes = m.ready.model->output_kind() == models::OutputKind::classes;
    const int64_t k = classes ? m.ready.config.value("num_classes", int64_t{0}) : 0;
    session::EmbeddingSource source = session::embedding_source(
        images, dataset, m.ready.config.value("img_size", int64_t{224}), k);
    if (limit > 0 && limit < source.size()) source = source.part(0, limit);
    const std::vector<std::string> names =
        k > 0 ? session::model_class_names(m.choice, m.ready.config, k)
              : std::vector<std::string>{};
    session::EmbeddingCallbacks cb;
    std::vector<std::string> errors;
    cb.on_error = [&](const std::string& path, const std::string& error) {
      errors.push_back(path + ": " + error);
    };
    cb.on_progress = [&](int64_t done, int64_t total, const std::string&) {
      control.report(done, total);
    };
    cb.cancelled = [&] { return control.cancelled(); };
    const session::EmbeddingSummary s = session::write_embeddings(
        *m.ready.model, m.choice.preprocessing, names, source, options, out, cb);
    record = session::embedding_record(s, source, options, names);
    record["model"] = m.ready.describe;
    record["limit"] = limit;
    record["device"] = m.target.str();
    record["errors"] = errors;
    record["seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    analysis::write_json(out + "/embed.json", record);
    return 0;
  });
  return to_python(record);
}

py::tuple project(const py::array_t<float, py::array::c_style | py::array::forcecast>& x,
                  const std::string& method, int dims, double perplexity, int neighbors,
                  double min_dist, int iterations, uint64_t seed, const py::object& progress) {
  if (x.ndim() != 2)
    throw std::invalid_argument("project: an (N, F) matrix, not " + std::to_string(x.ndim()) +
                                "-d (token grids are for retrieval)");
  session::ProjectionRequest request;
  request.method = method;
  request.dims = dims;
  request.perplexity = perplexity;
  request.neighbors = neighbors;
  request.min_dist = min_dist;
  request.iterations = iterations;
  request.seed = seed;
  PythonControl control;
  control.progress = progress;
  session::EmbeddingProjection p;
  run_controlled(control, [&] {
    py::gil_scoped_release release;
    try {
      p = session::project_embeddings(x.data(), x.shape(0), x.shape(1), request,
                                      [&](int64_t done, int64_t total) {
                                        control.report(done, total);
                                        return !control.cancelled();
                                      });
    } catch (const projection::ProjectionCancelled&) {
      throw session::AnalysisCancelled();
    }
    return 0;
  });
  py::array_t<double> coords({py::ssize_t(p.n), py::ssize_t(p.dims)});
  std::copy(p.coords.begin(), p.coords.end(), coords.mutable_data());
  return py::make_tuple(coords, to_python(p.info));
}

Figure projection_figure(const std::string& folder, const std::string& method,
                         const py::array_t<double, py::array::c_style | py::array::forcecast>& xy,
                         const std::vector<std::string>& axes, const std::string& model,
                         const std::vector<std::string>& colours) {
  if (xy.ndim() != 2 || xy.shape(1) != 2)
    throw std::invalid_argument("projection_figure: (N, 2) coordinates");
  const std::vector<session::EmbeddingRow> rows = session::read_embedding_rows(folder);
  session::EmbeddingProjection p;
  p.method = session::parse_projection_method(method);
  p.n = xy.shape(0);
  p.dims = 2;
  p.coords.assign(xy.data(), xy.data() + xy.size());
  p.axis_names = axes;
  if (p.axis_names.size() != 2) {
    const std::string title = session::projection_method_title(p.method);
    p.axis_names = {title + " 1", title + " 2"};
  }
  std::vector<viz::ProjectionColouring> colourings;
  for (const auto& c : colours) colourings.push_back(session::parse_colouring(c));
  if (colourings.empty()) colourings = session::available_colourings(rows);
  Figure f;
  f.kind = "projection";
  f.stem = "projection_" + p.method;
  f.figure = session::embedding_projection_figure(rows, p, model, colourings);
  return f;
}

}  // namespace

void bind_embed(py::module_& m, py::class_<Model, std::shared_ptr<Model>>& model) {
  model.def("_embed", &embed_folder, py::arg("out"), py::arg("images"), py::arg("dataset"),
            py::arg("layer"), py::arg("pool"), py::arg("batch"), py::arg("limit"), py::arg("heads"),
            py::arg("head_examples"), py::arg("progress"), py::arg("features") = "output",
            "Writes `attnlab embed`'s folder (embeddings.npy, images.csv, embed.json; with "
            "heads, `--heads`' head statistics); returns embed.json's content. Use "
            "attnlab.embed.");
  m.def("_project", &project, py::arg("x"), py::arg("method"), py::arg("dims"),
        py::arg("perplexity"), py::arg("neighbors"), py::arg("min_dist"), py::arg("iterations"),
        py::arg("seed"), py::arg("progress"),
        "(coords, info): `attnlab project`'s projection of an (N, F) matrix. Use "
        "Embeddings.projection.");
  m.def("_projection_figure", &projection_figure, py::arg("folder"), py::arg("method"),
        py::arg("xy"), py::arg("axes"), py::arg("model"), py::arg("colours"),
        "`attnlab project`'s figure of an embed folder's rows at `xy`. Use Embeddings.figure.");
}

}  // namespace attnlab::python
