// Per-head attention-map figures (one layer; layers x heads).
#include "viz/figures/attention_maps.h"

#include <algorithm>
#include <stdexcept>

#include "viz/figure_layout.h"

namespace attnlab::viz {
namespace {

std::optional<GridCell> cell_on(const MapQuery& q, MapSlice m) {
  if (!q.cell) return std::nullopt;
  return map_cell(*q.cell, q.ref_rows, q.ref_cols, m.rows, m.cols);
}

// Mean over heads of a [heads, rows, cols] array.
std::vector<float> head_mean(const analysis::Array& heads) {
  const MapSlice first = map_slice(heads, 0);
  const size_t n = size_t(first.rows) * size_t(first.cols);
  std::vector<float> mean(n, 0.f);
  const int64_t h = map_count(heads);
  for (int64_t k = 0; k < h; ++k) {
    const MapSlice s = map_slice(heads, k);
    for (size_t i = 0; i < n; ++i) mean[i] += s.data[i] / float(h);
  }
  return mean;
}

}  // namespace

CaptionedFigure head_maps_figure(const RgbaImage& picture, const analysis::Array& heads,
                                 const MapQuery& query, const std::string& model,
                                 const std::string& layer, const MapStyle& style, int max_cols) {
  const int64_t h = map_count(heads);
  const MapSlice first = map_slice(heads, 0);
  const std::vector<float> mean = head_mean(heads);
  const MapSlice mean_slice{first.rows, first.cols, mean.data()};
  // A shared range over every head (and the mean) when asked for.
  ValueRange shared{0, 1};
  if (style.norm == MapNormalisation::Shared) {
    std::vector<float> all(heads.data);
    shared = map_range(all.data(), all.size(), MapNormalisation::MinMax);
  }
  Figure f;
  f.font_pt = 7;
  f.panels.push_back(input_panel(picture, first.rows, first.cols, cell_on(query, first)));
  const auto background = map_background(picture, style);  // one picture for every panel
  for (int64_t k = 0; k < h; ++k) {
    const MapSlice s = map_slice(heads, k);
    f.panels.push_back(overlay_panel(background, s, slice_range(s, style, shared), style,
                                     cell_on(query, s), "head " + std::to_string(k)));
  }
  f.panels.push_back(overlay_panel(background, mean_slice,
                                   slice_range(mean_slice, style, shared), style,
                                   cell_on(query, mean_slice), "mean of heads"));
  const int n = int(f.panels.size());
  f.cols = std::clamp(n, 1, std::max(1, max_cols));
  f.width_in = f.cols <= 4 ? kColumnWidthIn * f.cols / 4.0 + 0.2 : kPageWidthIn;
  f.width_in = std::min(kPageWidthIn, std::max(kColumnWidthIn, f.width_in));
  f.title = model + " \u2014 " + layer + ", " + query.label;
  if (style.norm == MapNormalisation::Shared)
    f.colorbar = ColorbarSpec{style.overlay.cmap, shared.lo, shared.hi, "attention weight"};
  f.height_in = 2.0 * f.rows() + 0.6;
  f.height_in = fitted_height_in(f);
  CaptionedFigure out{std::move(f), ""};
  out.caption = "Attention of " + query.label + " in " + layer + " of " + model + ", per head (" +
                std::to_string(h) + " heads) and their mean, over the " +
                std::to_string(first.rows) + "\u00d7" + std::to_string(first.cols) +
                " token grid; " + describe_style(style) +
                (query.cell ? ". The red square marks the query." : ".");
  return out;
}

CaptionedFigure layers_heads_figure(const RgbaImage& picture, const std::vector<LayerMaps>& layers,
                                    const MapQuery& query, const std::string& model,
                                    const MapStyle& style, int max_heads) {
  if (layers.empty()) throw std::invalid_argument("layers x heads figure: no layer maps");
  int64_t heads = 0;
  for (const auto& l : layers) {
    if (!l.heads) throw std::invalid_argument("layers x heads figure: " + l.layer + " has no maps");
    heads = std::max(heads, map_count(*l.heads));
  }
  const int cols = int(std::min<int64_t>(heads, std::max(1, max_heads)));
  Figure f;
  f.font_pt = 7;
  f.cols = cols;
  for (int c = 0; c < cols; ++c) f.col_labels.push_back("head " + std::to_string(c));
  int rows_grid = 0, cols_grid = 0;
  const auto background = map_background(picture, style);  // one picture for all panels
  for (const auto& l : layers) {
    f.row_labels.push_back(l.layer);
    for (int c = 0; c < cols; ++c) {
      if (c >= map_count(*l.heads)) {  // fewer heads in this layer (hierarchical models)
        Panel empty;
        empty.image = true;
        empty.x.show = empty.y.show = false;
        f.panels.push_back(empty);
        continue;
      }
      const MapSlice s = map_slice(*l.heads, c);
      rows_grid = s.rows;
      cols_grid = s.cols;
      f.panels.push_back(overlay_panel(
          background, s, slice_range(s, style), style,
          query.cell ? std::optional<GridCell>(
                           map_cell(*query.cell, query.ref_rows, query.ref_cols, s.rows, s.cols))
                     : std::nullopt,
          ""));
    }
  }
  f.width_in = std::min(kPageWidthIn, 0.35 + 0.95 * cols);
  f.title = model + " \u2014 " + query.label;
  f.height_in = 1.2 * double(layers.size()) + 0.6;
  f.height_in = fitted_height_in(f);
  CaptionedFigure out{std::move(f), ""};
  out.caption = "Attention of " + query.label + " in every layer (rows) and head (columns) of " +
                model + " over the " + std::to_string(rows_grid) + "\u00d7" +
                std::to_string(cols_grid) + " token grid; " + describe_style(style) +
                (query.cell ? "; the red square marks the query." : ".");
  return out;
}

}  // namespace attnlab::viz
