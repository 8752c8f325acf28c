// The faithfulness figures (issue 27): the deletion and insertion curves of every map kind
// (mean over the images, one row of two panels per model), and the scoreboard: models ×
// map kinds, the areas under the deletion (low is faithful) and insertion (high is
// faithful) curves as two heatmaps with their values written in the cells.
#pragma once

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct FaithfulnessFigureOptions {
  double width_in = kPageWidthIn;
  double font_pt = 7;
};

// curves: the "faithfulness_curves" table (model, map, image, step, fraction, deletion,
// insertion, ...). Throws std::invalid_argument when it has no rows or lacks a column.
CaptionedFigure faithfulness_curves_figure(const analysis::Table& curves,
                                           const FaithfulnessFigureOptions& options = {});

// summary: the "faithfulness" table (model, map, auc_deletion_mean, auc_insertion_mean, ...).
CaptionedFigure faithfulness_scoreboard_figure(const analysis::Table& summary,
                                               const FaithfulnessFigureOptions& options = {});

}  // namespace attnlab::viz
