// Shared pieces of the per-query mechanism views (declared in query_views.h).
#include "viz/figures/query_views.h"

#include <algorithm>
#include <stdexcept>

#include "core/analysis/result_key.h"
#include "viz/figures/figure_common.h"
#include "viz/overlay.h"

namespace attnlab::viz {

const analysis::Array& ViewLayer::part(const std::string& name, const char* who) const {
  const auto it = parts.find(name);
  if (it == parts.end())
    throw std::invalid_argument(std::string(who) + ": layer " + std::to_string(layer) +
                                " has no array \"" + name + "\"");
  return *it->second;
}

ViewLayer view_layer(const std::vector<analysis::Array>& arrays, const std::string& analysis,
                     std::string* tag, int64_t layer, const char* who) {
  std::map<int64_t, ViewLayer> found;
  for (const auto& a : arrays) {
    const auto key = analysis::parse_result_key(a.name);
    if (!key || key->analysis != analysis) continue;
    if (tag->empty()) *tag = key->image;
    if (key->image != *tag) continue;
    ViewLayer& v = found[key->layer];
    v.layer = key->layer;
    v.parts[key->part] = &a;
  }
  if (found.empty())
    throw std::invalid_argument(std::string(who) + ": no array \"" + analysis + "__" +
                                (tag->empty() ? "<image>" : *tag) + "__L<ll>__...\" (the " +
                                analysis + " analysis did not run, or no layer offers it)");
  const auto it = found.find(layer);
  return it != found.end() ? it->second : found.rbegin()->second;
}

GridCell view_query(const std::optional<MapQuery>& query, int rows, int cols) {
  if (!query || !query->cell) return {rows / 2, cols / 2};
  const GridCell c = query->ref_rows > 0 && query->ref_cols > 0
                         ? map_cell(*query->cell, query->ref_rows, query->ref_cols, rows, cols)
                         : *query->cell;
  return {std::clamp(c.row, 0, std::max(rows - 1, 0)), std::clamp(c.col, 0, std::max(cols - 1, 0))};
}

Panel view_picture(const RgbaImage& picture, const std::string& title) {
  if (picture.empty() || picture.rgba.size() != picture.pixel_count() * 4)
    throw std::invalid_argument("the image is empty or its buffer does not match its size");
  return image_panel(scale_image_nearest(picture, upscale_factor(picture, 224)), title);
}

std::pair<double, double> cell_centre(const Panel& panel, int rows, int cols, double row,
                                      double col) {
  return {(col + 0.5) * panel.x.max / cols, (row + 0.5) * panel.y.max / rows};
}

}  // namespace attnlab::viz
