// What the per-query views of mechanism internals share (Agent attention's agents, BiFormer's
// routing, DAT's sampling: viz/figures/agents.h, routing.h, sampling.h): an analysis's arrays
// of one image grouped by layer, the layer shown, and the query cell on that layer's grid.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figure.h"
#include "viz/figures/attention_maps.h"
#include "viz/figures/map_panels.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

// One layer's arrays of an analysis for one image, by part ("maps", "weights", ...).
struct ViewLayer {
  int64_t layer = 0;
  std::map<std::string, const analysis::Array*> parts;
  const analysis::Array& part(const std::string& name, const char* who) const;
};

// The layer to show among `analysis`'s arrays "<analysis>__<tag>__L<ll>__<part>" (tag empty:
// the first image that has them): `layer` itself, or the last one when `layer` < 0 or it
// has none. Throws std::invalid_argument naming what is missing.
ViewLayer view_layer(const std::vector<analysis::Array>& arrays, const std::string& analysis,
                     std::string* tag, int64_t layer, const char* who);

// The query cell on a rows x cols grid: `query`'s cell (given on its ref grid, 0: this one)
// mapped there by area and clamped into it, or the grid's centre when none is given (no
// query, or a prefix token's).
GridCell view_query(const std::optional<MapQuery>& query, int rows, int cols);

// The picture scaled for display (nearest, at least 224 px a side) as an image panel.
Panel view_picture(const RgbaImage& picture, const std::string& title);

// The centre of grid cell (row, col) of a rows x cols grid over a panel's picture, in
// its data coordinates (pixels): {x, y}.
std::pair<double, double> cell_centre(const Panel& panel, int rows, int cols, double row,
                                      double col);

}  // namespace attnlab::viz
