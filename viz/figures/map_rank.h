// The attention-map rank figure (issue 26; FLatten's Fig. 5 as a per-layer plot): each
// head's numerical rank of its implicit map A as a share of full rank min(N, K), against
// layer depth, one dot per head and the layer mean as a line, for one or several models;
// a model whose layers add a depthwise token mixing beside A (FLatten's dwc, RALA's LePE,
// Castling's dconv) gets a second series "<model> + <mixing>": the rank of A + W_c. A
// softmax map sits near 1, a linear one at or below d / N, and the added mixing lifts it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/head_dots.h"

namespace attnlab::viz {

using MapRankFigureOptions = HeadDotsFigureOptions;

// One entry per model: its name and its "map_rank_heads" table (columns layer, head, form,
// mixing, tokens_mean, keys_mean, bound_mean, rank_mean, lifted_rank_mean). Throws
// std::invalid_argument for no models, a missing column or no finite rank at all.
CaptionedFigure map_rank_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                                const MapRankFigureOptions& options = {});

}  // namespace attnlab::viz
