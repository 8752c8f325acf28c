// Small, fixed figures that exercise every kind of figure item: the renderer tests draw
// them to every format, and the golden-image tests compare them with stored PNGs.
#pragma once

#include <cmath>

#include "viz/figure.h"
#include "viz/figure_layout.h"
#include "viz/overlay.h"

namespace attnlab::viz::testing {

// Two line series with markers and a legend, and a bar panel: text, ticks, legends.
inline Figure sample_plot_figure() {
  Figure f;
  f.width_in = kColumnWidthIn;
  f.height_in = 1.8;
  f.cols = 2;
  f.title = "Sample plot";
  Panel lines;
  lines.title = "rank per layer";
  lines.x.label = "layer";
  lines.y.label = "rank";
  lines.x.min = -0.3, lines.x.max = 3.3, lines.y.min = 0, lines.y.max = 70;
  lines.x.ticks = {0, 1, 2, 3};
  LineSeries a;
  a.x = {0, 1, 2, 3};
  a.y = {12, 30, 41, 64};
  a.markers = true;
  a.label = "KV buffer";
  LineSeries b = a;
  b.y = {64, 64, 60, 58};
  b.color = cycle_color(1);
  b.dashed = true;
  b.label = "output";
  lines.items = {a, b};
  lines.legend = true;
  lines.grid = true;
  Panel bars;
  bars.title = "usage";
  bars.x.label = "anchor";
  bars.y.label = "share";
  bars.x.min = -0.6, bars.x.max = 5.6, bars.y.min = 0, bars.y.max = 0.5;
  BarSeries s;
  s.x = {0, 1, 2, 3, 4, 5};
  s.height = {0.1, 0.4, 0.05, 0.2, 0.15, 0.1};
  bars.items = {s};
  f.panels = {lines, bars};
  return f;
}

// A smooth synthetic "image", a 7x7 token map over it (bilinear), the token grid and a
// query marker, next to a plain nearest heatmap with its own colorbar.
inline Figure sample_map_figure() {
  RgbaImage img;
  img.width = img.height = 56;
  img.rgba.resize(56 * 56 * 4);
  for (int y = 0; y < 56; ++y)
    for (int x = 0; x < 56; ++x) {
      uint8_t* p = &img.rgba[size_t(y * 56 + x) * 4];
      p[0] = uint8_t(4 * x);
      p[1] = uint8_t(4 * y);
      p[2] = uint8_t(128 + 100 * std::sin(x * 0.2));
      p[3] = 255;
    }
  std::vector<float> map(49);
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 7; ++c)
      map[size_t(r * 7 + c)] = float(std::exp(-((r - 2) * (r - 2) + (c - 4) * (c - 4)) / 4.0));
  Figure f;
  f.width_in = kColumnWidthIn;
  f.height_in = 1.7;
  f.cols = 2;
  OverlayStyle st;
  const ValueRange range = map_range(map.data(), map.size(), MapNormalisation::MinMax);
  Panel over =
      image_panel(overlay_map(scale_image_nearest(img, 2), map.data(), 7, 7, range, st), "overlay");
  add_token_grid(over, 7, 7);
  add_query_marker(over, 7, 7, 2, 4);
  Panel heat;
  heat.title = "map";
  heat.image = true;
  heat.x.show = heat.y.show = false;
  heat.x.max = 7;
  heat.y.max = 7;
  HeatmapLayer h;
  h.rows = h.cols = 7;
  h.values = map;
  h.cmap = Colormap::Magma;
  h.x1 = 7;
  h.y1 = 7;
  heat.items = {h};
  heat.colorbar = ColorbarSpec{Colormap::Magma, 0, 1, "weight"};
  f.panels = {over, heat};
  f.height_in = fitted_height_in(f);
  return f;
}

}  // namespace attnlab::viz::testing
