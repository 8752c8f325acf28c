// The locality figure: mean attention distance per head and layer, several models.
#include "viz/figures/locality.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace attnlab::viz {

CaptionedFigure locality_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                                const LocalityFigureOptions& options) {
  const std::string who = "locality figure";
  if (models.empty()) throw std::invalid_argument(who + ": no model given");
  Panel p;
  p.x.label = "layer";
  p.y.label = "mean attention distance (patches)";
  p.grid = true;
  p.legend = models.size() > 1;
  std::vector<double> ys;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  std::vector<std::string> grids, negative;
  const double spread = models.size() > 1 ? std::min(0.5, 0.16 * double(models.size())) : 0.0;
  // Signed attention rows (Castling's linear-angular kernel) make Σ a_ij·d_ij a signed
  // number, not a distance: such models are left out (and named) when others remain, so
  // that their hundreds of "patches" do not flatten everyone else's curves.
  std::vector<bool> signed_rows(models.size(), false);
  for (size_t m = 0; m < models.size(); ++m) {
    const analysis::Table& t = models[m].second;
    const auto it = std::find(t.columns.begin(), t.columns.end(), "mean_distance_mean");
    if (it == t.columns.end()) continue;  // reported below
    const size_t c = size_t(it - t.columns.begin());
    for (const auto& row : t.rows)
      if (c < row.size() && row[c].numeric() && row[c].number() < 0) signed_rows[m] = true;
  }
  const bool leave_out = std::count(signed_rows.begin(), signed_rows.end(), false) > 0;
  std::vector<std::string> left_out;
  for (size_t m = 0; m < models.size(); ++m) {
    if (leave_out && signed_rows[m]) {
      left_out.push_back(models[m].first);
      continue;
    }
    const analysis::Table& t = models[m].second;
    const Columns cols(t, who + " (" + models[m].first + ")");
    for (const char* c : {"layer", "head", "mean_distance_mean"}) cols.index(c);
    if (t.rows.empty())
      throw std::invalid_argument(who + ": table \"" + t.name + "\" of " + models[m].first +
                                  " has no rows");
    const bool has_grid = std::find(t.columns.begin(), t.columns.end(), "grid") != t.columns.end();
    const double dx =
        models.size() > 1 ? -spread / 2 + spread * double(m) / double(models.size() - 1) : 0.0;
    const Color color = cycle_color(int(m));
    LineSeries dots;
    dots.width_pt = 0;
    dots.marker_pt = 3.2;
    dots.color = Color{color.r, color.g, color.b, 0.75};
    std::map<int64_t, std::pair<double, int>> sums;  // layer -> (sum, heads)
    for (const auto& row : t.rows) {
      const double layer = cols.number(row, "layer"), d = cols.number(row, "mean_distance_mean");
      if (!std::isfinite(layer) || !std::isfinite(d)) continue;
      if (d < 0 && (negative.empty() || negative.back() != models[m].first))
        negative.push_back(models[m].first);
      dots.x.push_back(layer + dx);
      dots.y.push_back(d);
      ys.push_back(d);
      auto& s = sums[int64_t(std::llround(layer))];
      s.first += d;
      s.second += 1;
      if (has_grid) {
        const std::string g = cols.text(row, "grid");
        if (std::find(grids.begin(), grids.end(), g) == grids.end()) grids.push_back(g);
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
  if (lo > hi) throw std::invalid_argument(who + ": no finite distances in the tables");
  p.x.min = double(lo) - 0.5;
  p.x.max = double(hi) + 0.5;
  for (int64_t l = lo; l <= hi; ++l) p.x.ticks.push_back(double(l));
  fit_axis(p.y, ys, true, 0.08);
  // Room above the data for the legend (one line per model).
  if (p.legend) p.y.max *= 1.0 + 0.09 * double(models.size());

  Figure f;
  f.width_in = options.width_in;
  f.height_in = options.height_in;
  f.font_pt = options.font_pt;
  f.panels = {p};
  std::vector<std::string> shown;
  for (size_t m = 0; m < models.size(); ++m)
    if (!(leave_out && signed_rows[m])) shown.push_back(models[m].first);
  std::string names;
  for (size_t m = 0; m < shown.size(); ++m)
    names += (m ? (m + 1 == shown.size() ? " and " : ", ") : "") + shown[m];
  std::string grid_text;
  for (size_t i = 0; i < grids.size(); ++i) grid_text += (i ? ", " : "") + grids[i];
  std::string caption =
      "Mean attention distance Σ_j a_ij·‖pos_i − pos_j‖ per head (dots, mean over images) and "
      "its mean over heads (line) against layer, for " +
      names +
      (grid_text.empty() ? std::string(", in patches")
                         : ", in patches of the " + grid_text + " token grid") +
      (models.size() > 1 ? "; models are offset slightly along x within a layer" : "");
  if (!negative.empty()) {
    caption += "; negative distances (";
    for (size_t i = 0; i < negative.size(); ++i) caption += (i ? ", " : "") + negative[i];
    caption += ") mean that mechanism's attention rows are not probability distributions";
  }
  if (!left_out.empty()) {
    caption += "; left out: ";
    for (size_t i = 0; i < left_out.size(); ++i) caption += (i ? ", " : "") + left_out[i];
    caption +=
        " (signed attention rows, so the weighted distance is not a distance; the "
        "values are in the statistics tables)";
  }
  caption += ".";
  return {f, caption};
}

}  // namespace attnlab::viz
