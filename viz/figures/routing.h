// BiFormer's routing for one query (the routing analysis): the query's region and the k
// regions its queries attend to, numbered in routing order, over the picture; beside it how
// many regions route to each region (the popular ones).
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

struct RoutingFigureOptions {
  int64_t layer = -1;             // traced layer; -1 (or one without routing): the last
  std::optional<MapQuery> query;  // on the layer's grid; none: its centre
  double width_in = kPageWidthIn;
  double font_pt = 7;
};

// image_arrays: "routing__<tag>__L<ll>__region" (y, x) and "...__route" (region, rank).
// Throws std::invalid_argument when they are missing or malformed.
CaptionedFigure routing_figure(const std::vector<analysis::Array>& image_arrays,
                               const std::string& image_tag, const RgbaImage& image,
                               const RoutingFigureOptions& options = {});

}  // namespace attnlab::viz
