// Several models side by side on one image and one query: the report's "compare" figure
// and the GUI's compare view (the same function draws both, so the screen and the file
// are one drawing).
//
// Scales. A model's attention can be orders of magnitude flatter than another's, and
// some are signed (Castling's kernel), so one colour scale shared by all maps flattens
// most of them. The default is therefore a scale per panel (its own colorbar, diverging
// and symmetric about 0 when the map is signed); the shared scale stays available. Either
// tops out at a percentile of |w| (of the panel's map, or of all maps), so that a few
// large cells (a query's weight on itself: Castling's 0.5·v_i term) do not flatten the
// rest; the caption says so and how many cells show the end colour. Every panel's header
// names the map's own, unclipped, value range.
//
// Panels, in order: the input (when asked), one per model, then the difference A − B
// (when asked), on a diverging scale of its own.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "viz/figures/attention_maps.h"

namespace attnlab::viz {

struct ModelMap {
  std::string model;
  const analysis::Array* map = nullptr;  // [rows, cols] or [n, rows, cols] (slice `index`)
  int64_t index = 0;                     // e.g. 0 = head mean of a "__fused" array
  const RgbaImage* picture = nullptr;    // this model's input; nullptr: the figure's picture
  int window = 0;                        // local-attention windows to outline, in cells (0: none)
  int window_shift = 0;                  // their tiling's offset in cells (shifted windows)
  int window_w = 0;  // their width in cells when not square (Swin's Wh×Ww: window = Wh); 0: window
};

enum class CompareScale { PerPanel, Shared };
const char* compare_scale_name(CompareScale s);  // "per-panel", "shared"
std::optional<CompareScale> compare_scale_from_name(std::string_view name);

struct CompareOptions {
  CompareScale scale = CompareScale::PerPanel;
  // A scale's top: this percentile of |w| over the cells it covers (the panel's, or all).
  double clip_percentile = 98.0;
  std::optional<std::pair<int, int>> difference;  // A − B, indices into the maps
  bool input_panel = true;
  int max_cols = 0;  // panels per row (0: up to 5, or 4 with per-panel colorbars)
  // The part of every picture shown (the GUI's zoom), as fractions of its width and
  // height: [x0, x1] x [y0, y1]; the whole picture by default.
  double view_x0 = 0, view_y0 = 0, view_x1 = 1, view_y1 = 1;
};

// The scale of `maps` (each `n` values): [min, P] with P the (nearest-rank) percentile of
// |w|, or [−P, P] when any value is negative. *clipped: how many cells lie outside it.
ValueRange clipped_range(const std::vector<std::pair<const float*, size_t>>& maps,
                               double percentile, size_t* clipped = nullptr);

// `what` names the map, e.g. "head-mean attention of query (7, 7), last layer".
CaptionedFigure model_compare_figure(const RgbaImage& picture, const std::vector<ModelMap>& maps,
                                     const MapQuery& query, const std::string& what,
                                     const MapStyle& style = {},
                                     const CompareOptions& options = {});

}  // namespace attnlab::viz
