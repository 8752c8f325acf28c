// The projection figure of an embed folder (viz/figures/projection.h): its rows' labels,
// predictions, correctness and confidence beside a projection's coordinates, and the
// folder's embeddings and rows read for a projection. Shared by `attnlab project`,
// `attnlab report --embeddings` and attnlab.Embeddings.figure.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "app/session/dataset_embedding.h"
#include "app/session/embedding_projection.h"
#include "core/io/raw_tensor.h"
#include "viz/figures/projection.h"

namespace attnlab::session {

// The colourings the rows can give: label (some row has one), prediction (some row has
// one), correct/wrong (some row was judged), confidence (with predictions).
std::vector<viz::ProjectionColouring> available_colourings(const std::vector<EmbeddingRow>& rows);

// "label", "prediction", "correct", "confidence" → the colouring; std::invalid_argument
// naming the word otherwise.
viz::ProjectionColouring parse_colouring(const std::string& word);

// One class has one colour in the label and prediction panels: where the labels are the
// model's classes (the table judged them) by class index, named by the labels' names;
// otherwise (a folder's classes beside ImageNet predictions) by name, over the union.
// Throws std::invalid_argument for a 3-D projection or rows of another count.
viz::CaptionedFigure embedding_projection_figure(
    const std::vector<EmbeddingRow>& rows, const EmbeddingProjection& projection,
    const std::string& model, const std::vector<viz::ProjectionColouring>& colourings);

// An embed folder's pooled embeddings and its images.csv, read and checked against each
// other: what `attnlab project` and `attnlab report --embeddings` project.
struct PooledEmbeddings {
  io::RawTensor x;                 // (N, F) float32
  std::vector<EmbeddingRow> rows;  // N
  const float* data() const { return reinterpret_cast<const float*>(x.bytes.data()); }
};
// Throws io::IoError for an unreadable or truncated embeddings.npy, std::runtime_error for
// token grids (--pool tokens), another dtype, or a row count that is not the .npy's.
PooledEmbeddings read_pooled_embeddings(const std::string& dir);

// The model's name for a figure's title from an embed folder's embed.json: its preset, else
// its checkpoint's stem, else its architecture ("model" when embed.json says none).
std::string embed_model_name(const nlohmann::json& embed);

}  // namespace attnlab::session
