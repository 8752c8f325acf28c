// The attention-entropy figure (issue 26): each head's mean row entropy normalised by
// ln K against layer depth — one dot per head, the layer mean as a line — for one or
// several models side by side. 1 is a uniform row over the head's K keys, 0 a one-hot row:
// a linear mechanism whose attention collapses to near-uniform rows shows near 1.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/head_dots.h"

namespace attnlab::viz {

using EntropyFigureOptions = HeadDotsFigureOptions;

// One entry per model: its name and its "entropy_heads" table (columns layer, head,
// normalised_entropy_mean; keys_mean, support_mean and signed_rows_mean used in the
// caption when present). Throws std::invalid_argument for no models, a missing column or an
// empty table.
CaptionedFigure entropy_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                               const EntropyFigureOptions& options = {});

}  // namespace attnlab::viz
