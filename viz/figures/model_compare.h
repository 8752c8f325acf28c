// Several models side by side on one image and one query, on one shared colour scale, so
// that a brighter map means more weight, not a different normalisation.
#pragma once

#include <string>
#include <vector>

#include "viz/figures/attention_maps.h"

namespace attnlab::viz {

struct ModelMap {
  std::string model;
  const analysis::Array* map = nullptr;  // [rows, cols] or [n, rows, cols] (slice `index`)
  int64_t index = 0;                     // e.g. 0 = head mean of a "__fused" array
};

// `what` names the map, e.g. "head-mean attention of query (7, 7), last layer".
CaptionedFigure model_compare_figure(const RgbaImage& picture, const std::vector<ModelMap>& maps,
                                     const MapQuery& query, const std::string& what,
                                     const MapStyle& style = {});

}  // namespace attnlab::viz
