// Channel-to-channel attention maps (XCA's d×d softmax over channels, capability "channel
// map"): one heat map per layer and head, rows = layers, columns = heads, one colour
// scale from 0 to the largest weight shown. Row c of a map is what output channel c reads
// from the value's channels; the uniform weight 1/d is stated in the caption.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct ChannelMapFigureOptions {
  std::vector<int64_t> layers;  // empty: every layer with a map for the image
  Colormap cmap = Colormap::Viridis;
  double width_in = kPageWidthIn;
  double font_pt = 7;
};

// image_arrays: the per-image arrays the analysis session hands its sink, among them
// "channel_maps__<image_tag>__L<ll>__map" (head, out_channel, in_channel). image_tag
// empty: the first image that has maps. Throws std::invalid_argument when the image or a
// requested layer has no map, or a map array is not (head, d, d).
CaptionedFigure channel_map_figure(const std::vector<analysis::Array>& image_arrays,
                                   const std::string& image_tag,
                                   const ChannelMapFigureOptions& options = {});

}  // namespace attnlab::viz
