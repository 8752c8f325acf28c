// Per-head attention maps of one query: the paper figure most attention papers open with.
//   head_maps_figure:    input | head 0 | head 1 | ... | head mean — one layer, one query
//                        (or one prefix token's row, e.g. CLS attention)
//   layers_heads_figure: layers x heads small multiples of the same query
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "viz/figures/captioned_figure.h"
#include "viz/figures/map_panels.h"

namespace attnlab::viz {

struct MapQuery {
  std::string label;             // "query (7, 7)" or "cls"
  std::optional<GridCell> cell;  // on `ref_rows x ref_cols`; none for a prefix token
  int ref_rows = 0, ref_cols = 0;
};

// `heads`: [heads, rows, cols] (the session's "maps__<image>__Lxx__<query>__heads" array).
// At most `max_cols` panels per row; the head mean closes the last row.
CaptionedFigure head_maps_figure(const RgbaImage& picture, const analysis::Array& heads,
                                 const MapQuery& query, const std::string& model,
                                 const std::string& layer, const MapStyle& style = {},
                                 int max_cols = 7);

struct LayerMaps {
  std::string layer;  // row label, e.g. "layer 3"
  const analysis::Array* heads = nullptr;
};
// Rows: layers; columns: heads (up to max_heads). Each map min-max scaled unless the style
// says otherwise.
CaptionedFigure layers_heads_figure(const RgbaImage& picture, const std::vector<LayerMaps>& layers,
                                    const MapQuery& query, const std::string& model,
                                    const MapStyle& style = {}, int max_heads = 12);

}  // namespace attnlab::viz
