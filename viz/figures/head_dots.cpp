// Per-head dots and per-layer mean lines against layer (see head_dots.h).
#include "viz/figures/head_dots.h"

#include "viz/figure_layout.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace attnlab::viz {

HeadDots head_dots(const std::vector<ModelTable>& models, const std::string& column,
                   const std::string& y_label, const std::string& who,
                   const std::vector<int>& colours) {
  if (models.empty()) throw std::invalid_argument(who + ": no model given");
  HeadDots out;
  Panel& p = out.panel;
  p.x.label = "layer";
  p.y.label = y_label;
  p.grid = true;
  p.legend = models.size() > 1;
  // More than a few models would hide the dots under an inside legend.
  p.legend_outside = models.size() > kMaxInsideLegend;
  std::vector<double> ys;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  const double spread = models.size() > 1 ? std::min(0.5, 0.16 * double(models.size())) : 0.0;
  for (size_t m = 0; m < models.size(); ++m) {
    const analysis::Table& t = models[m].second;
    const Columns cols(t, who + " (" + models[m].first + ")");
    for (const std::string& c : {std::string("layer"), std::string("head"), column}) cols.index(c);
    if (t.rows.empty())
      throw std::invalid_argument(who + ": table \"" + t.name + "\" of " + models[m].first +
                                  " has no rows");
    const bool has_grid = std::find(t.columns.begin(), t.columns.end(), "grid") != t.columns.end();
    const double dx =
        models.size() > 1 ? -spread / 2 + spread * double(m) / double(models.size() - 1) : 0.0;
    const Color color = cycle_color(m < colours.size() ? colours[m] : int(m));
    LineSeries dots;
    dots.width_pt = 0;
    dots.marker_pt = 3.2;
    dots.color = Color{color.r, color.g, color.b, 0.75};
    std::map<int64_t, std::pair<double, int>> sums;  // layer -> (sum, heads)
    for (const auto& row : t.rows) {
      const double layer = cols.number(row, "layer"), v = cols.number(row, column);
      if (!std::isfinite(layer) || !std::isfinite(v)) continue;
      dots.x.push_back(layer + dx);
      dots.y.push_back(v);
      ys.push_back(v);
      auto& s = sums[int64_t(std::llround(layer))];
      s.first += v;
      s.second += 1;
      if (has_grid) {
        const std::string g = cols.text(row, "grid");
        if (std::find(out.grids.begin(), out.grids.end(), g) == out.grids.end())
          out.grids.push_back(g);
      }
    }
    LineSeries mean;
    mean.color = color;
    mean.width_pt = 1.1;
    mean.label = models[m].first;
    for (const auto& [layer, s] : sums) {
      mean.x.push_back(double(layer) + dx);
      mean.y.push_back(s.first / s.second);
      lo = std::min(lo, layer);
      hi = std::max(hi, layer);
    }
    p.items.push_back(dots);
    p.items.push_back(mean);
  }
  if (lo > hi) throw std::invalid_argument(who + ": no finite " + column + " in the tables");
  p.x.min = double(lo) - 0.5;
  p.x.max = double(hi) + 0.5;
  for (int64_t l = lo; l <= hi; ++l) p.x.ticks.push_back(double(l));
  fit_axis(p.y, ys, true, 0.08);
  // Room above the data for an inside legend (one line per model).
  if (p.legend && !p.legend_outside) p.y.max *= 1.0 + 0.09 * double(models.size());
  return out;
}

Figure head_dots_figure(const HeadDots& dots, const HeadDotsFigureOptions& options) {
  Figure f;
  f.width_in = options.width_in;
  f.height_in = head_dots_height_in(dots.panel, options);
  f.font_pt = options.font_pt;
  f.panels = {dots.panel};
  return f;
}

double head_dots_height_in(const Panel& panel, const HeadDotsFigureOptions& options) {
  if (!panel.legend || !panel.legend_outside) return options.height_in;
  // The axes lose about 3.5 lines of the font to the x ticks, the x label and the margins.
  const double needed_pt = legend_box(panel, options.font_pt).h + 3.5 * 1.25 * options.font_pt;
  return std::max(options.height_in, needed_pt / 72.0);
}

std::string name_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? (i + 1 == names.size() ? " and " : ", ") : "") + names[i];
  return s;
}

}  // namespace attnlab::viz
