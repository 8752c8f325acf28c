// The projection figure of an embed folder (viz/figures/projection.h): its rows' labels,
// predictions, correctness and confidence beside a projection's coordinates. Shared by
// `attnlab project` and attnlab.Embeddings.figure.
#pragma once

#include <string>
#include <vector>

#include "app/session/dataset_embedding.h"
#include "app/session/embedding_projection.h"
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

}  // namespace attnlab::session
