// The head-importance figure (issue 26; Michel et al. 2019's layers × heads layout): per
// model a heatmap of one statistic of ablating each head — by default the mean drop of the
// predicted class's probability — on a colour scale symmetric around 0 shared by all
// panels (coolwarm: red where switching the head off hurts, blue where it helps).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/analysis/table.h"
#include "viz/colormap.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct HeadImportanceOptions {
  std::string column = "probability_drop_mean";  // of the "head_importance" table
  std::string label = "drop of the predicted class's probability";
  double width_in = kPageWidthIn;
  double font_pt = 7;
  int max_cols = 3;
  Colormap cmap = Colormap::Coolwarm;
};

// tables: (model name, its "head_importance" table with columns layer, head and
// options.column). Throws std::invalid_argument for no models or a missing column.
CaptionedFigure head_importance_figure(
    const std::vector<std::pair<std::string, analysis::Table>>& tables,
    const HeadImportanceOptions& options = {});

}  // namespace attnlab::viz
