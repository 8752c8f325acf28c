// The effective-receptive-field figure: log-scale maps with radii, and the cumulative share.
#include "viz/figures/erf.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "viz/figure_layout.h"
#include "viz/figures/head_dots.h"  // kMaxInsideLegend

namespace attnlab::viz {
namespace {

LineSeries circle(double cy, double cx, double r, Color color) {
  LineSeries c;
  for (int i = 0; i <= 96; ++i) {
    const double t = 2 * M_PI * i / 96;
    c.x.push_back(cx + r * std::cos(t));
    c.y.push_back(cy + r * std::sin(t));
  }
  c.color = color;
  c.width_pt = 0.8;
  c.dashed = true;
  return c;
}

Panel map_panel(const ErfModel& m, const ErfFigureOptions& options) {
  require_axes(m.map, {"y", "x"}, "erf figure");
  const int rows = int(m.map.shape[0]), cols = int(m.map.shape[1]);
  const float peak = *std::max_element(m.map.data.begin(), m.map.data.end());
  HeatmapLayer h;
  h.rows = rows;
  h.cols = cols;
  h.cmap = options.cmap;
  h.vmin = -options.decades;
  h.vmax = 0;
  h.values.reserve(m.map.data.size());
  for (const float v : m.map.data)  // log10 of the share over the peak, floored at vmin
    h.values.push_back(peak > 0 && v > 0 ? std::max(float(h.vmin), std::log10(v / peak))
                                         : float(h.vmin));
  h.x0 = h.y0 = -0.5;
  h.x1 = cols - 0.5;
  h.y1 = rows - 0.5;
  Panel p;
  p.title = m.name;
  p.image = true;
  p.x.min = p.y.min = -0.5;
  p.x.max = cols - 0.5;
  p.y.max = rows - 0.5;
  p.x.show = p.y.show = false;
  p.items.emplace_back(std::move(h));
  for (size_t i = 0; i < m.radii.size(); ++i)
    p.items.emplace_back(circle(m.centre_y, m.centre_x, std::max(0.5, m.radii[i].second),
                                cycle_color(int(i) + 2)));
  Marker token;
  token.x = m.centre_x;
  token.y = m.centre_y;
  token.shape = Marker::Shape::Cross;
  token.size_pt = 5;
  p.items.emplace_back(token);
  return p;
}

Panel cumulative_panel(const std::vector<ErfModel>& models, const std::vector<double>& percents) {
  Panel p;
  p.title = "share within radius";
  p.x.label = "radius (pixels)";
  p.y.label = "share of the contribution";
  p.y.min = 0;
  p.y.max = 1.02;
  double reach = 1;
  for (size_t i = 0; i < models.size(); ++i) {
    LineSeries s;
    for (size_t r = 0; r < models[i].cumulative.size(); ++r) {
      s.x.push_back(double(r));
      s.y.push_back(models[i].cumulative[r]);
    }
    reach = std::max(reach, double(models[i].cumulative.size()));
    s.color = cycle_color(int(i));
    s.label = models[i].name;
    p.items.emplace_back(std::move(s));
  }
  p.x.min = 0;
  p.x.max = reach;
  for (size_t i = 0; i < percents.size(); ++i) {
    LineSeries level;
    level.x = {0, reach};
    level.y = {percents[i] / 100, percents[i] / 100};
    level.color = cycle_color(int(i) + 2);
    level.width_pt = 0.6;
    level.dashed = true;
    p.items.emplace_back(std::move(level));
    TextLabel text;  // the share beside its line, the circles' colour (not in the legend)
    text.x = reach;
    text.y = percents[i] / 100;
    text.text = format_number(percents[i]) + " % ";
    text.anchor = TextLabel::Anchor::Right;
    text.color = cycle_color(int(i) + 2);
    p.items.emplace_back(std::move(text));
  }
  p.legend = models.size() > 1;
  p.legend_outside = models.size() > kMaxInsideLegend;
  p.grid = true;
  return p;
}

}  // namespace

CaptionedFigure erf_figure(const std::vector<ErfModel>& models, const ErfFigureOptions& options) {
  if (models.empty()) throw std::invalid_argument("erf figure: no model given");
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = std::min<int>(options.max_cols, int(models.size()) + 1);
  std::vector<double> percents;
  for (const auto& r : models.front().radii) percents.push_back(r.first);
  for (const auto& m : models) f.panels.push_back(map_panel(m, options));
  f.panels.push_back(cumulative_panel(models, percents));
  f.colorbar = ColorbarSpec{options.cmap, -options.decades, 0, "log10 contribution / max"};
  f.height_in = 2.6 * double(f.rows()) + 0.3;
  fit_height_to_images(f);  // map rows without blank space; the plot's row keeps its height
  std::string shares;
  for (const double p : percents) shares += (shares.empty() ? "" : ", ") + format_number(p);
  const std::string caption =
      "Effective receptive field (Luo et al. 2016) of one output token (cross) of the last "
      "block or stage: sum over RGB of |gradient| of the token's summed features with respect "
      "to each input pixel, each image's map normalised to sum 1 and averaged over the images, "
      "on a log scale over " + format_number(options.decades) + " decades. Dashed circles: "
      "the smallest discs around the token holding " + shares +
      " % of the contribution; right: the share within each radius.";
  return {f, caption};
}

}  // namespace attnlab::viz
