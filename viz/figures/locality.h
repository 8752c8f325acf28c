// Locality figure, as in the ViT paper (Dosovitskiy et al., Fig. 7 right): mean attention
// distance per head against layer depth — one dot per head, the layer mean (over heads)
// as a line — for one or several models side by side (one colour each, legend).
// Distances are in patches of each layer's own token grid.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/head_dots.h"

namespace attnlab::viz {

using LocalityFigureOptions = HeadDotsFigureOptions;

// One entry per model: its name (legend) and its "locality_heads" table (columns layer,
// head, mean_distance_mean; grid used in the caption when present). Models are spread a
// little along x within a layer so that their dots do not cover each other.
// Throws std::invalid_argument for no models, a missing column or an empty table.
CaptionedFigure locality_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                                const LocalityFigureOptions& options = {});

}  // namespace attnlab::viz
