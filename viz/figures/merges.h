// Token merging's groups over the picture (ToMe's own figure): after each merging block,
// every merged token's patches painted with their mean colour in the picture and outlined,
// one panel per layer, so the picture turns into fewer, larger pieces block by block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/captioned_figure.h"
#include "viz/figures/figure_common.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

struct MergeFigureOptions {
  std::vector<int64_t> layers;  // empty: every layer with a group map for the image
  int cols = 6;                 // panels per row (the input first)
  double width_in = kPageWidthIn;
  double font_pt = 7;
};

// image_arrays: the per-image arrays of the merges analysis, "merges__<image_tag>__L<ll>__group"
// (y, x: the merged token of every grid patch); image: the picture the model saw (after
// preprocessing). image_tag empty: the first image that has group maps. Throws
// std::invalid_argument for an empty image, no group map for the image or a layer.
CaptionedFigure merge_figure(const std::vector<analysis::Array>& image_arrays,
                             const std::string& image_tag, const RgbaImage& image,
                             const MergeFigureOptions& options = {});

// The picture painted by group: each pixel takes the mean colour of the pixels of its
// patch's group, and pixels whose neighbour (right or below) lies in another group are
// drawn dark, outlining the groups. groups: (h, w) labels of the patches, row-major.
RgbaImage paint_groups(const RgbaImage& picture, const std::vector<float>& groups, int64_t h,
                       int64_t w);

}  // namespace attnlab::viz
