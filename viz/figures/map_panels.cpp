// Attention-map panels: slices, overlays, the input picture, and their caption wording.
#include "viz/figures/map_panels.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace attnlab::viz {

MapSlice map_slice(const analysis::Array& a, int64_t k) {
  const size_t d = a.shape.size();
  if ((d != 2 && d != 3) || a.data.size() != size_t(a.numel()))
    throw std::invalid_argument("map array '" + a.name +
                                "' is not a [maps, rows, cols] or [rows, cols] array");
  const int64_t n = d == 3 ? a.shape[0] : 1;
  if (k < 0 || k >= n)
    throw std::invalid_argument("map array '" + a.name + "' has no map " + std::to_string(k));
  MapSlice s;
  s.rows = int(a.shape[d - 2]);
  s.cols = int(a.shape[d - 1]);
  s.data = a.data.data() + size_t(k) * size_t(s.rows) * size_t(s.cols);
  return s;
}

int64_t map_count(const analysis::Array& a) {
  return a.shape.size() == 3 ? a.shape[0] : 1;
}

GridCell map_cell(GridCell q, int ref_rows, int ref_cols, int rows, int cols) {
  if (ref_rows <= 0 || ref_cols <= 0) return q;
  return GridCell{std::min(rows - 1, int((q.row + 0.5) * rows / ref_rows)),
                  std::min(cols - 1, int((q.col + 0.5) * cols / ref_cols))};
}

std::shared_ptr<const RgbaImage> map_background(const RgbaImage& picture, const MapStyle& style) {
  return std::make_shared<const RgbaImage>(style.overlay.grey_background ? greyscale(picture)
                                                                         : picture);
}

Panel input_panel(const RgbaImage& picture, int rows, int cols, std::optional<GridCell> query,
                  std::string title) {
  Panel p = image_panel(picture, std::move(title));
  if (rows > 0 && cols > 0) {
    add_token_grid(p, rows, cols, Color{1, 1, 1, 0.25}, 0.3);
    if (query) add_query_marker(p, rows, cols, query->row, query->col);
  }
  return p;
}

Panel overlay_panel(std::shared_ptr<const RgbaImage> background, MapSlice map, ValueRange range,
                    const MapStyle& style, std::optional<GridCell> query, std::string title) {
  Panel p = image_panel(std::move(background), std::move(title));
  add_map_layer(p, map.data, map.rows, map.cols, range, style.overlay);
  if (style.token_grid) add_token_grid(p, map.rows, map.cols);
  if (query) add_query_marker(p, map.rows, map.cols, query->row, query->col);
  return p;
}

Panel overlay_panel(const RgbaImage& picture, MapSlice map, ValueRange range, const MapStyle& style,
                    std::optional<GridCell> query, std::string title) {
  return overlay_panel(map_background(picture, style), map, range, style, query, std::move(title));
}

ValueRange slice_range(MapSlice map, const MapStyle& style, ValueRange shared) {
  return map_range(map.data, size_t(map.rows) * size_t(map.cols), style.norm, shared);
}

std::string describe_style(const MapStyle& style) {
  char alpha[16];
  std::snprintf(alpha, sizeof alpha, "%.2g", style.overlay.alpha);
  std::string norm = style.norm == MapNormalisation::MinMax ? "min-max per map"
                     : style.norm == MapNormalisation::DivideByMax
                         ? "divided by each map's max"
                         : "one colour scale shared by all maps";
  return std::string(colormap_name(style.overlay.cmap)) + ", " +
         upsample_name(style.overlay.upsample) + " upsampling of the token grid, " + norm +
         ", alpha " + alpha + " over a " +
         (style.overlay.grey_background ? "greyscale copy of the" : "") + " input";
}

}  // namespace attnlab::viz
