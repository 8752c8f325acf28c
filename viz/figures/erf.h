// The effective-receptive-field figure (issue 26; Luo et al. 2016's Fig. layout): per
// model the image-averaged contribution map of one output token on a log scale, with the
// token marked and the discs holding the reported shares drawn around it, and one panel
// of the share of the contribution within a radius, every model a line.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/analysis/table.h"
#include "viz/colormap.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct ErfModel {
  std::string name;
  analysis::Array map;          // "erf__map": (H, W) contribution shares
  double centre_y = 0, centre_x = 0;  // the token's centre in pixels
  std::vector<std::pair<double, double>> radii;  // (percent, radius in pixels), "erf"
  std::vector<double> cumulative;  // share within radius r = 0, 1, ... ("erf_profile")
};

struct ErfFigureOptions {
  double width_in = kPageWidthIn;
  double font_pt = 7;
  int max_cols = 3;
  double decades = 3;  // the map's colour scale spans max / 10^decades .. max
  Colormap cmap = Colormap::Inferno;
};

// Throws std::invalid_argument for no models or a map that is not (H, W).
CaptionedFigure erf_figure(const std::vector<ErfModel>& models,
                           const ErfFigureOptions& options = {});

}  // namespace attnlab::viz
