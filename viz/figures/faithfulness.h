// The faithfulness figures (issue 27): the deletion and insertion curves of every map kind
// (mean over the images, one row of two panels per model, a third with the randomisation
// check when given), and the scoreboard: models ×
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

// The Spearman correlation at or above which a map that survives the re-initialisation
// of every block is flagged (analysis::kRandomisationFlag; viz does not see core/analysis).
inline constexpr double kRandomisationFlagLine = 0.5;

// curves: the "faithfulness_curves" table (model, map, image, step, fraction, deletion,
// insertion, ...). With `randomisation` (model, map, blocks, spearman or spearman_mean: the
// randomisation check), a third column of panels draws each map's correlation against the
// number of re-initialised top blocks. Throws std::invalid_argument when a table has no
// rows or lacks a column.
CaptionedFigure faithfulness_curves_figure(const analysis::Table& curves,
                                           const FaithfulnessFigureOptions& options = {},
                                           const analysis::Table* randomisation = nullptr);

// summary: the "faithfulness" table (model, map, auc_deletion_mean, auc_insertion_mean, ...).
CaptionedFigure faithfulness_scoreboard_figure(const analysis::Table& summary,
                                               const FaithfulnessFigureOptions& options = {});

}  // namespace attnlab::viz
