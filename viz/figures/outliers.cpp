// Outlier-token figures: per-layer statistics of several models, and one image's token
// norms over the picture.
#include "viz/figures/outliers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "core/analysis/result_key.h"
#include "viz/figure_layout.h"
#include "viz/figures/head_dots.h"
#include "viz/figures/map_panels.h"

namespace attnlab::viz {

CaptionedFigure outliers_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                                const OutliersFigureOptions& options) {
  const std::string who = "outliers figure";
  if (models.empty()) throw std::invalid_argument(who + ": no model given");
  Panel ratio, mass;
  ratio.x.label = mass.x.label = "layer";
  ratio.y.label = "max norm / median";
  ratio.y.log = true;
  mass.y.label = "attention received";
  ratio.grid = mass.grid = true;
  std::vector<double> ratios, masses;
  double factor = NAN, lo = INFINITY, hi = -INFINITY;
  std::vector<std::string> names;
  bool any_prefix = false;
  for (size_t m = 0; m < models.size(); ++m) {
    const auto& [name, table] = models[m];
    const Columns cols(table, who + " (" + name + ")");
    for (const char* c : {"layer", "factor_mean", "max_over_median_mean", "outlier_mass_mean",
                          "prefix_mass_mean", "outlier_share_mean"})
      cols.index(c);
    if (table.rows.empty())
      throw std::invalid_argument(who + ": table \"" + table.name + "\" of " + name +
                                  " has no rows");
    names.push_back(name);
    const Color color = cycle_color(int(m));
    LineSeries r = layer_series(cols, "max_over_median_mean", color);
    r.label = name;
    LineSeries on_outliers = layer_series(cols, "outlier_mass_mean", color);
    on_outliers.label = name;
    LineSeries on_prefix = layer_series(cols, "prefix_mass_mean", color);
    on_prefix.dashed = true;
    for (const auto& row : table.rows) {
      factor = cols.number(row, "factor_mean");
      const double layer = cols.number(row, "layer");
      lo = std::min(lo, layer), hi = std::max(hi, layer);
    }
    ratios.insert(ratios.end(), r.y.begin(), r.y.end());
    masses.insert(masses.end(), on_outliers.y.begin(), on_outliers.y.end());
    masses.insert(masses.end(), on_prefix.y.begin(), on_prefix.y.end());
    any_prefix |= !on_prefix.y.empty();
    ratio.items.push_back(r);
    mass.items.push_back(on_outliers);
    if (!on_prefix.y.empty()) mass.items.push_back(on_prefix);
  }
  if (ratios.empty() || !(lo <= hi))
    throw std::invalid_argument(who + ": no finite max_over_median_mean in the tables");
  // The threshold: a token above it is an outlier.
  if (std::isfinite(factor)) {
    LineSeries t;
    t.x = {lo - 0.5, hi + 0.5};
    t.y = {factor, factor};
    t.color = Color{0.4, 0.4, 0.4, 1};
    t.width_pt = 0.8;
    t.dashed = true;
    ratio.items.push_back(t);
    ratios.push_back(factor);
  }
  for (Panel* p : {&ratio, &mass}) {
    p->x.min = lo - 0.5;
    p->x.max = hi + 0.5;
    for (double l = lo; l <= hi; l += 1) p->x.ticks.push_back(l);
  }
  fit_axis(ratio.y, ratios, false, 0.08);
  ratio.y.min = std::max(1.0, ratio.y.min * 0.8);  // ratios are >= 1 (max >= median)
  ratio.y.max = std::max(ratio.y.max * 1.3, ratio.y.min * 2);
  // A share of attention: from 0, and a visible range even when nothing is received.
  double top_mass = 0.0;
  for (double v : masses) top_mass = std::max(top_mass, v);
  mass.y.min = 0.0;
  mass.y.max = std::max(top_mass * 1.12, 0.1);
  mass.legend = models.size() > 1;
  mass.legend_outside = models.size() > kMaxInsideLegend;

  Figure f;
  f.width_in = options.width_in;
  f.height_in = options.height_in;
  f.font_pt = options.font_pt;
  f.cols = 2;
  f.panels = {ratio, mass};
  std::string caption =
      "Outlier tokens per layer for " + name_list(names) +
      ". Left: the largest token norm of the block's output divided by the median norm (log "
      "scale); tokens above " +
      (std::isfinite(factor) ? format_number(factor) : std::string("K")) +
      "× the median (dashed) are outliers. Right, in the same colours: the attention they receive in that layer "
      "(solid: mean over heads of the summed column means of A, their share of all attention "
      "when rows sum to 1)";
  if (any_prefix) caption += " and the attention the prefix tokens receive (dashed)";
  caption += "; means over the images. Where no token crosses the threshold the outlier mass "
             "is 0. Counts and shares per layer are in the statistics tables.";
  return {f, caption};
}

CaptionedFigure outlier_positions_figure(const std::vector<analysis::Array>& image_arrays,
                                         const std::string& image_tag, const RgbaImage& image,
                                         const std::vector<analysis::Table>& tables,
                                         const OutlierPositionsOptions& options) {
  const std::string who = "outlier positions figure";
  if (image.width <= 0 || image.height <= 0) throw std::invalid_argument(who + ": no picture");
  std::map<int64_t, const analysis::Array*> by_layer;
  for (const auto& a : image_arrays) {
    const auto key = analysis::parse_result_key(a.name);
    if (key && key->analysis == "outliers" && key->image == image_tag && key->part == "norm")
      by_layer[key->layer] = &a;
  }
  if (by_layer.empty())
    throw std::invalid_argument(who + ": no outliers__" + image_tag + "__L..__norm array");
  double top = 0;
  for (const auto& [layer, a] : by_layer)
    for (float v : a->data)
      if (std::isfinite(v)) top = std::max(top, double(v));
  // The factor from the table when there is one (the threshold named in titles).
  double factor = NAN;
  for (const auto& t : tables)
    if (t.name == "outliers_layers" && !t.rows.empty()) {
      const Columns cols(t, who);
      factor = cols.number(t.rows.front(), "factor_mean");
    }
  MapStyle style;
  style.overlay.cmap = Colormap::Magma;
  style.norm = MapNormalisation::Shared;
  const auto background = map_background(image, style);
  const ValueRange range{0.0, std::max(top, 1.0)};
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = std::min<int>(options.max_cols, int(by_layer.size()));
  for (const auto& [layer, a] : by_layer) {
    const MapSlice s = map_slice(*a);
    int above = 0;
    double peak = 0;
    for (int i = 0; i < s.rows * s.cols; ++i) {
      peak = std::max(peak, double(s.data[i]));
      above += std::isfinite(factor) && double(s.data[i]) > factor;
    }
    std::string title = "layer " + std::to_string(layer) + "\nmax " + format_number(peak, 2) + "×";
    if (std::isfinite(factor)) title += ", " + std::to_string(above) + " > " + format_number(factor) + "×";
    f.panels.push_back(overlay_panel(background, s, range, style, std::nullopt, title));
  }
  f.colorbar = ColorbarSpec{style.overlay.cmap, range.lo, range.hi, "norm / median"};
  f.height_in = fitted_height_in(f);
  std::string caption =
      "Token norms of each block's output over the picture (" + image_tag +
      "), divided by the layer's median norm, one shared scale from 0 to the largest ratio; " +
      (std::isfinite(factor) ? "tokens above " + format_number(factor) + "× are outliers (counted in "
                                                                "each title); "
                             : std::string()) +
      "prefix tokens are not on the grid (their norms are in the statistics tables). " +
      describe_style(style) + ".";
  return {f, caption};
}

}  // namespace attnlab::viz
