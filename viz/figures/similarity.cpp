// See similarity.h.
#include "viz/figures/similarity.h"

#include <algorithm>
#include <stdexcept>

#include "viz/figure_layout.h"
#include "viz/figures/map_panels.h"

namespace attnlab::viz {

CaptionedFigure similarity_figure(const RgbaImage& picture,
                                  const std::vector<SimilarityLayer>& layers, const MapQuery& query,
                                  const std::string& model, const std::string& facet) {
  if (layers.empty()) throw std::invalid_argument("similarity_figure: no layer");
  // Cosines on one fixed diverging scale, so panels and models compare; nearest
  // upsampling keeps each token's value a patch.
  MapStyle style;
  style.overlay.cmap = Colormap::Coolwarm;
  style.overlay.upsample = Upsample::Nearest;
  style.overlay.alpha = 0.7;
  const ValueRange range{-1, 1};
  Figure f;
  f.font_pt = 7;
  const MapSlice first = map_slice(*layers.front().map);
  const auto cell_on = [&](const MapSlice& s) -> std::optional<GridCell> {
    if (!query.cell) return std::nullopt;
    return map_cell(*query.cell, query.ref_rows > 0 ? query.ref_rows : first.rows,
                    query.ref_cols > 0 ? query.ref_cols : first.cols, s.rows, s.cols);
  };
  f.panels.push_back(input_panel(picture, first.rows, first.cols, cell_on(first)));
  const auto background = map_background(picture, style);
  for (const auto& l : layers) {
    if (!l.map || l.map->shape.size() != 2)
      throw std::invalid_argument("similarity_figure: " + l.label + " has no 2-D map");
    const MapSlice s = map_slice(*l.map);
    f.panels.push_back(overlay_panel(background, s, range, style, cell_on(s), l.label));
  }
  f.panels.back().colorbar = ColorbarSpec{style.overlay.cmap, -1, 1, "cosine similarity"};
  const int n = int(f.panels.size());
  f.cols = std::clamp(n, 1, 7);
  f.width_in = f.cols <= 4 ? kColumnWidthIn * f.cols / 4.0 + 0.2 : kPageWidthIn;
  f.width_in = std::min(kPageWidthIn, std::max(kColumnWidthIn, f.width_in));
  f.title = model + " \u2014 " + facet + " similarity to " + query.label;
  f.height_in = 2.0 * f.rows() + 0.6;
  f.height_in = fitted_height_in(f);
  CaptionedFigure out{std::move(f), ""};
  out.caption = "Cosine similarity of the " + facet + " of " + query.label + " of " + model +
                " with every token's, per layer, on [-1, 1] (red: alike, blue: opposite)" +
                (query.cell ? "; the red square marks the query." : ".");
  return out;
}

}  // namespace attnlab::viz
