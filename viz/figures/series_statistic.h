// A per-layer statistic against the training step (issue 26, "any statistic over
// checkpoints"): one line per layer from a "<table>_series" table (analyze-series, report
// --series, the GUI's series timeline), the value averaged over the rows a layer has at a
// step (heads, or matrix kinds). The series figure of entropy, map_rank, outliers and
// locality; Castling's mask keeps its own (castling_mask.h).
#pragma once

#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct SeriesStatistic {
  std::string table;    // "entropy_layers_series"
  std::string column;   // "normalised_entropy_mean"
  std::string y_label;  // "row entropy / ln K"
  std::string what;     // the caption's sentence on what the value is
  // A key column whose values get lines of their own ("" = none): spectra's "branch",
  // rank's "matrix"; the lines are labelled "layer 2 kv".
  std::string split_by;
};

struct SeriesStatisticOptions {
  std::string x_column = "step";  // a resolution sweep: "img_size"
  std::string x_label = "training step";
  double width_in = kColumnWidthIn;
  double height_in = 2.2;
  double font_pt = 7;
};

// Throws std::invalid_argument when the table is missing, lacks x_column, layer or the column,
// or has no finite value.
CaptionedFigure series_statistic_figure(const std::vector<analysis::Table>& tables,
                                        const SeriesStatistic& statistic,
                                        const SeriesStatisticOptions& options = {});

}  // namespace attnlab::viz
