// Outlier-token figures (issue 26; the "registers" observation): the statistics per layer
// for one or several models — the largest token norm over the median (log scale, the
// outlier threshold dashed) beside the attention mass the outliers receive (solid) and the
// prefix tokens receive (dashed) — and one image's token norms over the picture, one
// panel per layer, where outliers show as bright cells.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

struct OutliersFigureOptions {
  double width_in = kPageWidthIn;
  double height_in = 2.2;
  double font_pt = 7;
};

// One entry per model: its name and its "outliers_layers" table (columns layer,
// factor_mean, max_over_median_mean, outlier_mass_mean, prefix_mass_mean,
// outlier_share_mean, tokens_mean). Throws
// std::invalid_argument for no models, a missing column or an empty table.
CaptionedFigure outliers_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                                const OutliersFigureOptions& options = {});

struct OutlierPositionsOptions {
  double width_in = kPageWidthIn;
  double font_pt = 7;
  int max_cols = 6;  // panels per row
};

// image_arrays: the per-image arrays, among them "outliers__<image_tag>__L<ll>__norm" (y, x:
// each grid token's norm / the layer's median); image: the picture the model saw. Every
// layer on one shared scale from 0 to the largest ratio. tables: "outliers_layers" for
// the caption's threshold (optional). Throws std::invalid_argument for no such array.
CaptionedFigure outlier_positions_figure(const std::vector<analysis::Array>& image_arrays,
                                         const std::string& image_tag, const RgbaImage& image,
                                         const std::vector<analysis::Table>& tables,
                                         const OutlierPositionsOptions& options = {});

}  // namespace attnlab::viz
