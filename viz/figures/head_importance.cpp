// The head-importance figure: one layers × heads heatmap per model on a shared symmetric scale.
#include "viz/figures/head_importance.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "viz/figure_layout.h"

namespace attnlab::viz {

CaptionedFigure head_importance_figure(
    const std::vector<std::pair<std::string, analysis::Table>>& tables,
    const HeadImportanceOptions& options) {
  if (tables.empty()) throw std::invalid_argument("head importance figure: no model given");
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = std::min<int>(options.max_cols, int(tables.size()));
  double reach = 0;
  for (const auto& [name, table] : tables) {
    const Columns cols(table, "head importance figure");
    int64_t layers = 0, heads = 0;
    for (const auto& row : table.rows) {
      layers = std::max<int64_t>(layers, int64_t(cols.number(row, "layer")) + 1);
      heads = std::max<int64_t>(heads, int64_t(cols.number(row, "head")) + 1);
    }
    if (layers == 0) throw std::invalid_argument("head importance figure: " + name + " has no rows");
    HeatmapLayer h;
    h.rows = int(layers);
    h.cols = int(heads);
    h.values.assign(size_t(layers * heads), NAN);
    for (const auto& row : table.rows) {
      const double v = cols.number(row, options.column);
      h.values[size_t(int64_t(cols.number(row, "layer")) * heads + int64_t(cols.number(row, "head")))] =
          float(v);
      if (std::isfinite(v)) reach = std::max(reach, std::abs(v));
    }
    h.cmap = options.cmap;
    h.x0 = h.y0 = -0.5;
    h.x1 = double(heads) - 0.5;
    h.y1 = double(layers) - 0.5;
    Panel p;
    p.title = name;
    p.image = true;
    p.x.label = "head";
    p.y.label = "layer";
    p.x.min = p.y.min = -0.5;
    p.x.max = h.x1;
    p.y.max = h.y1;
    const auto ticks = [](Axis& axis, int64_t n) {
      const int64_t step = std::max<int64_t>(1, n / 8);
      for (int64_t i = 0; i < n; i += step) axis.ticks.push_back(double(i));
    };
    ticks(p.x, heads);
    ticks(p.y, layers);
    p.items.emplace_back(std::move(h));
    f.panels.push_back(std::move(p));
  }
  if (reach == 0) reach = 1e-6;  // every ablation changed nothing: any symmetric scale
  for (auto& p : f.panels)
    for (auto& item : p.items)
      if (auto* h = std::get_if<HeatmapLayer>(&item)) {
        h->vmin = -reach;
        h->vmax = reach;
      }
  f.colorbar = ColorbarSpec{options.cmap, -reach, reach, options.label};
  f.height_in = 2.4 * double(f.rows()) + 0.3;
  f.height_in = fitted_height_in(f);
  const std::string caption =
      "Head importance: each head switched off alone (its output channels zeroed before the "
      "layer's output projection; what the layer adds to the same channels, such as a "
      "depthwise or LePE branch, goes with it) and the images run again; the colour is the " +
      options.label + ", averaged over the images (0: the head does not matter to the "
      "prediction; negative: the model is more confident without it).";
  return {f, caption};
}

}  // namespace attnlab::viz
