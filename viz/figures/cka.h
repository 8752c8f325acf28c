// The linear-CKA figure (issue 26; Kornblith et al. 2019's Fig. layout): per model a
// layers × layers heatmap of CKA from its image-averaged HSIC matrix, one colour scale
// from 0 to 1 for all panels. Similar layers show as bright blocks along the diagonal.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/colormap.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct CkaModel {
  std::string name;
  analysis::Array hsic;    // "cka__hsic": (L, L) mean HSIC_1 of each pair of layers
  analysis::Array layers;  // "cka__layers": (L,) traced-layer index of each row/column
};

struct CkaFigureOptions {
  double width_in = kPageWidthIn;
  double font_pt = 7;
  int max_cols = 3;
  Colormap cmap = Colormap::Magma;
};

// CKA_ab = H_ab / √(H_aa·H_bb) (NaN, drawn empty, where a diagonal entry is <= 0). Throws
// std::invalid_argument for no models or arrays of the wrong shape.
CaptionedFigure cka_figure(const std::vector<CkaModel>& models, const CkaFigureOptions& options = {});

// Between two models: CKA of every layer of model A (rows) with every layer of model B
// (columns), row-major.
struct CkaPair {
  std::string model_a, model_b;
  std::vector<int64_t> layers_a, layers_b;
  std::vector<float> cka;
};
// One heatmap per pair on the same 0..1 scale. Throws std::invalid_argument for no pairs
// or a pair whose values do not fill its layers.
CaptionedFigure cka_pairs_figure(const std::vector<CkaPair>& pairs,
                                 const CkaFigureOptions& options = {});

// The CKA matrix of an HSIC matrix (L×L, row-major), as the figure draws it.
std::vector<float> cka_of_hsic(const analysis::Array& hsic);

}  // namespace attnlab::viz
