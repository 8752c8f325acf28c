// embedding_projection_figure: an embed folder's rows and a projection as viz's
// ProjectionPoints. Where the labels are the model's classes, labels and predictions share
// the class indices; otherwise both are numbered by name: labels' names first (in label
// order), then predicted names not among them (in class order).
#include "app/session/embedding_figure.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "core/io/npy.h"

namespace attnlab::session {
namespace {

std::string named_or(const std::string& name, const char* kind, int64_t index) {
  return name.empty() ? std::string(kind) + " " + std::to_string(index) : name;
}

}  // namespace

std::vector<viz::ProjectionColouring> available_colourings(const std::vector<EmbeddingRow>& rows) {
  bool labels = false, predictions = false, judged = false;
  for (const EmbeddingRow& r : rows) {
    labels = labels || r.label >= 0;
    predictions = predictions || r.prediction >= 0;
    judged = judged || r.correct >= 0;
  }
  std::vector<viz::ProjectionColouring> out;
  if (labels) out.push_back(viz::ProjectionColouring::Label);
  if (predictions) out.push_back(viz::ProjectionColouring::Prediction);
  if (judged) out.push_back(viz::ProjectionColouring::Correctness);
  if (predictions) out.push_back(viz::ProjectionColouring::Scalar);
  return out;
}

viz::ProjectionColouring parse_colouring(const std::string& word) {
  if (word == "label") return viz::ProjectionColouring::Label;
  if (word == "prediction") return viz::ProjectionColouring::Prediction;
  if (word == "correct") return viz::ProjectionColouring::Correctness;
  if (word == "confidence") return viz::ProjectionColouring::Scalar;
  throw std::invalid_argument("colour by label, prediction, correct or confidence, not '" + word +
                              "'");
}

viz::CaptionedFigure embedding_projection_figure(
    const std::vector<EmbeddingRow>& rows, const EmbeddingProjection& projection,
    const std::string& model, const std::vector<viz::ProjectionColouring>& colourings) {
  if (projection.dims != 2)
    throw std::invalid_argument("a projection figure is 2-D; this projection has " +
                                std::to_string(projection.dims) + " dimensions");
  if (int64_t(rows.size()) != projection.n)
    throw std::invalid_argument("the projection has " + std::to_string(projection.n) +
                                " points, the table " + std::to_string(rows.size()) + " rows");
  std::map<int64_t, std::string> label_names, prediction_names;
  for (const EmbeddingRow& r : rows) {
    if (r.label >= 0) label_names[r.label] = named_or(r.label_name, "label", r.label);
    if (r.prediction >= 0)
      prediction_names[r.prediction] = named_or(r.prediction_name, "class", r.prediction);
  }
  bool judged = false;
  for (const EmbeddingRow& r : rows) judged = judged || r.correct >= 0;
  for (const auto c : colourings)
    if (c == viz::ProjectionColouring::Correctness && !judged)
      throw std::invalid_argument(
          "correct/wrong needs labels that are the model's classes (the table judged none)");
  viz::ProjectionPoints pts;
  std::map<std::string, int> by_name;
  const auto index_of = [&](const std::string& name) {
    const auto [it, added] = by_name.emplace(name, int(pts.class_names.size()));
    if (added) pts.class_names.push_back(name);
    return it->second;
  };
  if (judged) {
    // The labels are the model's classes (the table judged them): one index space, class k
    // named by its label's name where a row has one (the names the user gave the folders).
    int64_t classes = 0;
    for (const auto& [k, name] : label_names) classes = std::max(classes, k + 1);
    for (const auto& [k, name] : prediction_names) classes = std::max(classes, k + 1);
    for (int64_t k = 0; k < classes; ++k) {
      const auto l = label_names.find(k);
      const auto p = prediction_names.find(k);
      pts.class_names.push_back(l != label_names.end()        ? l->second
                                : p != prediction_names.end() ? p->second
                                                              : "class " + std::to_string(k));
    }
  } else {
    for (const auto& [label, name] : label_names) index_of(name);
    for (const auto& [cls, name] : prediction_names) index_of(name);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const EmbeddingRow& r = rows[i];
    pts.xy.push_back(float(projection.coords[2 * i]));
    pts.xy.push_back(float(projection.coords[2 * i + 1]));
    if (judged) {
      pts.labels.push_back(int(r.label));
      pts.predictions.push_back(int(r.prediction));
    } else {
      pts.labels.push_back(r.label >= 0 ? index_of(label_names[r.label]) : -1);
      pts.predictions.push_back(r.prediction >= 0 ? index_of(prediction_names[r.prediction]) : -1);
    }
    pts.scalar.push_back(float(r.confidence));
  }
  pts.scalar_name = "confidence";
  pts.method = projection_method_title(projection.method);
  pts.x_label = projection.axis_names.at(0);
  pts.y_label = projection.axis_names.at(1);
  viz::ProjectionFigureOptions options;
  options.equal_axes = projection.method == "pca";
  return viz::projection_figure(pts, colourings, model, options);
}

PooledEmbeddings read_pooled_embeddings(const std::string& dir) {
  PooledEmbeddings e;
  e.x = io::read_npy(dir + "/" + kEmbeddingsNpy);
  if (e.x.dtype != io::DType::F32 || e.x.shape.size() != 2)
    throw std::runtime_error(dir + "/" + kEmbeddingsNpy + " is " + e.x.describe() +
                             ": a projection takes pooled embeddings (N, F) float32 — the token "
                             "grids of --pool tokens are for attnlab retrieve");
  e.rows = read_embedding_rows(dir);
  if (int64_t(e.rows.size()) != e.x.shape[0])
    throw std::runtime_error(dir + ": " + std::to_string(e.x.shape[0]) + " embeddings but " +
                             std::to_string(e.rows.size()) + " rows in " + kEmbeddingsCsv);
  return e;
}

std::string embed_model_name(const nlohmann::json& embed) {
  const nlohmann::json m = embed.value("model", nlohmann::json::object());
  if (!m.is_object()) return "model";
  if (m.contains("preset") && m["preset"].is_string() && !m["preset"].get<std::string>().empty())
    return m["preset"].get<std::string>();
  const nlohmann::json c = m.value("checkpoint", nlohmann::json());
  const nlohmann::json path = c.is_object() ? c.value("path", nlohmann::json()) : c;
  if (path.is_string()) return std::filesystem::path(path.get<std::string>()).stem().string();
  const nlohmann::json arch = m.value("arch", nlohmann::json());
  return arch.is_string() ? arch.get<std::string>() : std::string("model");
}

}  // namespace attnlab::session
