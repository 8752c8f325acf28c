// DAT's deformable sampling for one query (the sampling analysis): per offset group, a line
// from each reference point to where its key was sampled, and the sample as a dot sized and
// coloured by the query's weight on it, over the picture.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/attention_maps.h"
#include "viz/figures/captioned_figure.h"
#include "viz/figures/figure_common.h"
#include "viz/figures/map_panels.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

struct SamplingFigureOptions {
  int64_t layer = -1;             // traced layer; -1 (or one without sampling): the last
  std::optional<MapQuery> query;  // on the layer's grid; none: its centre
  double width_in = kPageWidthIn;
  double font_pt = 7;
};

// image_arrays: "sampling__<tag>__L<ll>__points" (group, sample, coord: ref_y, ref_x, pos_y,
// pos_x in grid cells) and "...__weights" (group, y, x, sample). Throws
// std::invalid_argument when they are missing or malformed.
CaptionedFigure sampling_figure(const std::vector<analysis::Array>& image_arrays,
                                const std::string& image_tag, const RgbaImage& image,
                                const SamplingFigureOptions& options = {});

}  // namespace attnlab::viz
