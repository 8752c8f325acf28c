// Building blocks of the attention-map figures: a slice of a map array, an overlay panel
// (the map blended over the picture the model saw, with the token grid and the query),
// and the sentence that states the drawing settings in a caption.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/analysis/table.h"
#include "viz/figure.h"
#include "viz/overlay.h"

namespace attnlab::viz {

struct MapStyle {
  OverlayStyle overlay;  // viridis, alpha 0.6, bilinear, over greyscale
  MapNormalisation norm = MapNormalisation::MinMax;
  bool token_grid = false;  // outline every token (useful for coarse grids)
};

// One rows x cols map: slice k of a [n, rows, cols] array, or a [rows, cols] array (k = 0).
struct MapSlice {
  int rows = 0, cols = 0;
  const float* data = nullptr;
};
// Throws std::invalid_argument naming the array when its shape does not fit.
MapSlice map_slice(const analysis::Array& a, int64_t k = 0);
int64_t map_count(const analysis::Array& a);  // n of [n, rows, cols]; 1 for [rows, cols]

struct GridCell {
  int row = 0, col = 0;
};
// The query cell (given on a ref_rows x ref_cols grid) on a rows x cols grid, by area.
GridCell map_cell(GridCell q, int ref_rows, int ref_cols, int rows, int cols);

// The picture alone (drawn as it is: its pixels stay blocks when enlarged), with the
// rows x cols token grid and the query cell outlined when given.
Panel input_panel(const RgbaImage& picture, int rows, int cols, std::optional<GridCell> query,
                  std::string title = "input");
// What maps are drawn over under the style: the picture, or its greyscale copy. Build it
// once per figure and give it to every overlay panel: the file then embeds it once.
std::shared_ptr<const RgbaImage> map_background(const RgbaImage& picture, const MapStyle& style);
// The map over the background (a layer blended when drawn: the picture stays one shared
// image, the map stays at token resolution), drawn with `range`; the query outlined when
// given.
Panel overlay_panel(std::shared_ptr<const RgbaImage> background, MapSlice map, ValueRange range,
                    const MapStyle& style, std::optional<GridCell> query, std::string title);
// The same over map_background(picture, style), for a figure with one map.
Panel overlay_panel(const RgbaImage& picture, MapSlice map, ValueRange range, const MapStyle& style,
                    std::optional<GridCell> query, std::string title);
// The range a map is drawn with under the style's normalisation (`shared` for Shared).
ValueRange slice_range(MapSlice map, const MapStyle& style, ValueRange shared = {});

// "viridis, bilinear upsampling, min-max per map, alpha 0.6 over a greyscale copy"
std::string describe_style(const MapStyle& style);

}  // namespace attnlab::viz
