// Castling-ViT's auxiliary-mask sparsity along training (Castling-ViT, Fig. 6): the share
// of softmax(q·kᵀ/√d) entries above the mask threshold — the mask's non-zero fraction —
// against the training step, one line per layer (all heads together), ± std across images.
#pragma once

#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct CastlingMaskFigureOptions {
  double width_in = kColumnWidthIn;
  double height_in = 2.1;
  double font_pt = 7;
  bool percent = true;  // y in percent (fraction × 100)
  bool error_bars = true;
};

// Needs the series table "mask_heads_series" that `attnlab analyze-series` writes (columns
// step, layer, head, fraction_mean, fraction_std; threshold_mean used in the caption when
// present). Rows whose head is "all" are plotted; per-head rows are ignored.
// Throws std::invalid_argument naming a missing table or column, or when no "all" rows exist.
CaptionedFigure castling_mask_figure(const std::vector<analysis::Table>& tables,
                                     const CastlingMaskFigureOptions& options = {});

}  // namespace attnlab::viz
