// The multi-model comparison figure: one row (wrapped past eight panels), a shared colour
// scale and colorbar.
#include "viz/figures/model_compare.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "viz/figure_layout.h"

namespace attnlab::viz {

CaptionedFigure model_compare_figure(const RgbaImage& picture, const std::vector<ModelMap>& maps,
                                     const MapQuery& query, const std::string& what,
                                     const MapStyle& style) {
  if (maps.empty()) throw std::invalid_argument("model comparison: no maps");
  std::vector<MapSlice> slices;
  ValueRange shared{double(INFINITY), -double(INFINITY)};
  for (const auto& m : maps) {
    if (!m.map) throw std::invalid_argument("model comparison: no map for " + m.model);
    slices.push_back(map_slice(*m.map, m.index));
    const ValueRange r =
        map_range(slices.back().data, size_t(slices.back().rows) * slices.back().cols,
                  MapNormalisation::MinMax);
    shared.lo = std::min(shared.lo, r.lo);
    shared.hi = std::max(shared.hi, r.hi);
  }
  MapStyle st = style;
  st.norm = MapNormalisation::Shared;
  // Implicit attention can be signed (Castling's linear-angular kernel): then a diverging
  // map centred on 0, as for any signed quantity, so that negative weight reads as such.
  const bool signed_maps = shared.lo < 0;
  if (signed_maps) {
    shared = symmetric_if_signed(shared);
    st.overlay.cmap = signed_colormap(st.overlay.cmap);
  }
  Figure f;
  f.font_pt = 7;
  // One row up to eight panels; more (the whole zoo) wrap into rows of equal length.
  const int panels = int(maps.size()) + 1, rows = (panels + 7) / 8;
  f.cols = (panels + rows - 1) / rows;
  f.width_in = std::min(kPageWidthIn, 0.6 + 1.05 * f.cols);
  f.title = what;
  const MapSlice& s0 = slices.front();
  std::optional<GridCell> cell0;
  if (query.cell) cell0 = map_cell(*query.cell, query.ref_rows, query.ref_cols, s0.rows, s0.cols);
  f.panels.push_back(input_panel(picture, st, s0.rows, s0.cols, cell0));
  for (size_t i = 0; i < maps.size(); ++i) {
    std::optional<GridCell> cell;
    if (query.cell)
      cell = map_cell(*query.cell, query.ref_rows, query.ref_cols, slices[i].rows, slices[i].cols);
    f.panels.push_back(overlay_panel(picture, slices[i], shared, st, cell, maps[i].model));
  }
  f.colorbar = ColorbarSpec{st.overlay.cmap, shared.lo, shared.hi, "attention weight"};
  f.height_in = 2.0 * rows;
  f.height_in = fitted_height_in(f);
  CaptionedFigure out{std::move(f), ""};
  out.caption =
      what + ", for " + std::to_string(maps.size()) + " models side by side on one colour scale (" +
      describe_style(st) + ")" +
      (signed_maps ? "; some weights are negative, so the scale is symmetric about 0" : "") +
      (query.cell ? "; the red square marks the query." : ".");
  return out;
}

}  // namespace attnlab::viz
