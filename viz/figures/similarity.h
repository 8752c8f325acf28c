// The patch-similarity figure: the cosine similarity of the query token's features with
// every token's, one panel per layer, over the picture the model saw (a diverging map on
// [-1, 1]: red alike, blue opposite). LibTorch-free; the analysis is
// app/session/analyses/similarity.cpp.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/attention_maps.h"
#include "viz/figures/captioned_figure.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

struct SimilarityLayer {
  std::string label;                     // "layer 3"
  const analysis::Array* map = nullptr;  // [rows, cols] cosine similarities
};

// Throws std::invalid_argument for no layer or a map that is not 2-D.
CaptionedFigure similarity_figure(const RgbaImage& picture,
                                  const std::vector<SimilarityLayer>& layers, const MapQuery& query,
                                  const std::string& model, const std::string& facet);

}  // namespace attnlab::viz
