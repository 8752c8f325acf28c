// The attention-rollout figure.
#include "viz/figures/rollout.h"

#include "viz/figure_layout.h"

namespace attnlab::viz {

CaptionedFigure rollout_figure(const RgbaImage& picture, const analysis::Array& rollout,
                               const MapQuery& query, const std::string& model,
                               const std::string& switches, const MapStyle& style) {
  const MapSlice m = map_slice(rollout, 0);
  const ValueRange range = slice_range(m, style);
  std::optional<GridCell> cell;
  if (query.cell) cell = map_cell(*query.cell, query.ref_rows, query.ref_cols, m.rows, m.cols);
  Figure f;
  f.font_pt = 7;
  f.cols = 3;
  f.width_in = kColumnWidthIn + 0.4;
  f.title = model + " \u2014 rollout of " + query.label;
  f.panels.push_back(input_panel(picture, m.rows, m.cols, cell));
  f.panels.push_back(overlay_panel(picture, m, range, style, cell, "rollout"));
  Panel heat;
  heat.title = "map";
  heat.image = true;
  heat.x.show = heat.y.show = false;
  heat.x.max = m.cols;
  heat.y.max = m.rows;
  HeatmapLayer h;
  h.rows = m.rows;
  h.cols = m.cols;
  h.values.assign(m.data, m.data + size_t(m.rows) * size_t(m.cols));
  h.cmap = style.overlay.cmap;
  h.vmin = range.lo;
  h.vmax = range.hi;
  h.x1 = m.cols;
  h.y1 = m.rows;
  heat.items.emplace_back(std::move(h));
  f.panels.push_back(std::move(heat));
  f.colorbar = ColorbarSpec{style.overlay.cmap, range.lo, range.hi, "rollout weight"};
  f.height_in = 2.0;
  f.height_in = fitted_height_in(f);
  CaptionedFigure out{std::move(f), ""};
  out.caption = "Attention rollout of " + query.label + " through every layer of " + model + " (" +
                switches + ") over the first layer's " + std::to_string(m.rows) + "\u00d7" +
                std::to_string(m.cols) + " grid; overlay: " + describe_style(style) +
                "; right: the map itself, token by token (nearest).";
  return out;
}

}  // namespace attnlab::viz
