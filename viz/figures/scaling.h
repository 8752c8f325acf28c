// Scaling figures: a cost against the number of tokens, one line (with markers) per
// mechanism or model, on log-log axes — HiLo's Fig. 2 style "MACs vs resolution" from the
// complexity report, and measured latency / peak memory vs N from `attnlab
// bench-attention`.
#pragma once

#include <string>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct ScalingFigureOptions {
  double width_in = kColumnWidthIn;
  double height_in = 2.4;
  double font_pt = 7;
};

// Lines of `y_column` against `x_column` of `table`, one per distinct `series_column`
// value, in first-seen order; rows with a non-positive or non-finite value are skipped
// (log axes). `y_label` names the quantity and its unit, `what` opens the caption.
// Throws std::invalid_argument for a missing column or nothing to draw.
CaptionedFigure scaling_figure(const analysis::Table& table, const std::string& series_column,
                               const std::string& x_column, const std::string& y_column,
                               const std::string& x_label, const std::string& y_label,
                               const std::string& what, const ScalingFigureOptions& options = {});

}  // namespace attnlab::viz
