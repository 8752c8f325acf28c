// AnchorFormer anchor assignments over an image: every token coloured by its hard anchor
// (argmax of the soft assignment A, qualitative palette) and blended over the picture,
// one panel per layer, above bars (beside them for a single layer) of the share of the image's
// tokens held by each anchor (with the mean soft usage Δ_m/N over the image set and the uniform
// share 1/M for reference). Shows whether anchors behave as representatives of image regions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

struct AnchorFigureOptions {
  std::vector<int64_t> layers;  // empty: every layer with a hard map for the image
  int head = -1;                // -1: the head-mean of A (the maps' last head slot)
  double alpha = 0.6;           // palette opacity over the (lightened) greyscale picture
  double width_in = kPageWidthIn;
  double font_pt = 7;
};

// image_arrays: the per-image arrays the analysis session hands its sink, among them
// "anchors__<image_tag>__L<ll>__hard" (head, y, x; the last head slot is the head-mean)
// and optionally "...__soft" (head, token, anchor), which gives the anchor count M.
// image: the picture the model saw (after preprocessing), upscaled here for display.
// tables: when they hold "anchors_usage" (columns layer, head, anchor, usage_mean), its
// mean soft usage is drawn over the bars; without it, the bars alone.
// image_tag empty: the first image that has hard maps. Throws std::invalid_argument for
// an empty image, no hard map for the image/layer, a head out of range or missing columns.
CaptionedFigure anchor_figure(const std::vector<analysis::Array>& image_arrays,
                              const std::string& image_tag, const RgbaImage& image,
                              const std::vector<analysis::Table>& tables,
                              const AnchorFigureOptions& options = {});

// Colour of anchor m out of M: tab10 for M <= 9, tab20 for more (cycling beyond 18),
// both without their greys.
Color anchor_color(int m, int anchors);

}  // namespace attnlab::viz
