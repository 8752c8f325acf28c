// RALA-style rank figure (RAVLT paper, Figs. 4/5/8): per layer, the numerical rank and the
// effective rank of each matrix the model offers (KV buffer, RALA's un-augmented buffer,
// the attention output, RALA's gated output), mean over heads and images with ± std
// across images as error bars and full rank (d) as a dashed reference; then, per matrix
// kind, the singular-value spectra σ_i/σ_1 of every layer (mean over heads, log scale).
// Models without a KV buffer (softmax, HiLo, anchor) show their output alone.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct RankFigureOptions {
  // Matrix kinds that get a singular-value panel, when the results have them.
  std::vector<std::string> sigma_matrices = {"kv", "output"};
  double width_in = kPageWidthIn;
  double height_in = 1.9;
  double font_pt = 7;
  std::string model;  // named in the caption when not empty
};

// Needs the table "rank_layers" (columns layer, matrix, full_mean, rank_mean, rank_std,
// effective_rank_mean, effective_rank_std; images optional) and, for the spectra, the
// arrays "rank_sigma__L<ll>__<matrix>" (head, index) of the layers in that table.
// Throws std::invalid_argument naming a missing table, column or array.
CaptionedFigure rank_figure(const std::vector<analysis::Table>& tables,
                            const std::vector<analysis::Array>& arrays,
                            const RankFigureOptions& options = {});

// Legend text of a matrix kind ("kv" -> "KV buffer"); unknown kinds are returned as is.
std::string rank_matrix_label(const std::string& matrix);

}  // namespace attnlab::viz
