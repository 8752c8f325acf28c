// A per-head statistic against layer depth, for several models on one panel (the ViT
// paper's Fig. 7 right layout): one dot per head, the mean over heads as a line, one colour
// per model, models offset slightly along x within a layer. The locality and entropy
// figures draw their panels with it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

// One model's entry: its name (the legend) and its per-head table (columns layer, head and
// the statistic; "grid" collected for the caption when present).
using ModelTable = std::pair<std::string, analysis::Table>;

// The size of such a figure: one column wide.
struct HeadDotsFigureOptions {
  double width_in = kColumnWidthIn;
  double height_in = 2.1;
  double font_pt = 7;
};

// Up to this many models the legend sits inside the axes (above the data); beyond, right
// of them.
inline constexpr size_t kMaxInsideLegend = 4;

struct HeadDots {
  Panel panel;                     // x: layer, y: the statistic; axes fitted
  std::vector<std::string> grids;  // the tables' distinct "grid" cells, in order
};

// The panel of `column` for `models`, model i in colour cycle_color(colours[i]) (default:
// i; a caller leaving some models out passes their original indices, so every model keeps
// its colour). Throws std::invalid_argument naming `who` for a missing column, an empty
// table or no finite value at all.
HeadDots head_dots(const std::vector<ModelTable>& models, const std::string& column,
                   const std::string& y_label, const std::string& who,
                   const std::vector<int>& colours = {});

// The one-panel figure of `dots` at the options' width, font and height (below).
Figure head_dots_figure(const HeadDots& dots, const HeadDotsFigureOptions& options);

// options.height_in, or taller when the panel's legend sits outside and has more rows than
// that height leaves the axes (every model's name stays readable).
double head_dots_height_in(const Panel& panel, const HeadDotsFigureOptions& options);

// "a, b and c".
std::string name_list(const std::vector<std::string>& names);

}  // namespace attnlab::viz
