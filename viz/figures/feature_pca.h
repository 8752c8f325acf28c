// Feature PCA figure (DINOv2, Oquab et al. 2023; the `feature_pca` analysis): per image
// the picture the model saw, its grid tokens' first three principal components as red,
// green and blue (each token a block of pixels, background black), and the foreground the
// first component selects (the rest darkened, its border outlined).
#pragma once

#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

// A report figure shows at most this many images (the report splits the rest into more).
inline constexpr int kFeaturePcaImagesPerFigure = 8;

// One image of the figure: its tag and the picture the model saw (not owned).
struct FeaturePcaRow {
  std::string tag;
  const RgbaImage* picture = nullptr;
  std::string label = {};  // the picture's title ("": the tag; the GUI's tab says "input")
};

struct FeaturePcaFigureOptions {
  double width_in = kPageWidthIn;
  double font_pt = 7;
};

// arrays: among them "feature_pca__<tag>__rgb" (y, x, rgb) in [0, 1] and
// "feature_pca__<tag>__foreground" (y, x) 0/1 for each image; an image without them is
// left out. tables: the "feature_pca" table (optional: the caption's threshold, token
// source and explained variance). Three panels per image, two images side by side from
// four images on. Throws std::invalid_argument when no image has its arrays.
CaptionedFigure feature_pca_figure(const std::vector<analysis::Array>& arrays,
                                   const std::vector<FeaturePcaRow>& images,
                                   const std::vector<analysis::Table>& tables,
                                   const std::string& model,
                                   const FeaturePcaFigureOptions& options = {});

}  // namespace attnlab::viz
