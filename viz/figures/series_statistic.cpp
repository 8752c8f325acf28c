// A per-layer statistic against the training step (see series_statistic.h).
#include "viz/figures/series_statistic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace attnlab::viz {

CaptionedFigure series_statistic_figure(const std::vector<analysis::Table>& tables,
                                        const SeriesStatistic& statistic,
                                        const SeriesStatisticOptions& options) {
  const std::string who = "series figure of " + statistic.column;
  const analysis::Table& t = find_table(tables, statistic.table, who);
  const Columns cols(t, who);
  for (const std::string& c : {options.x_column, std::string("layer"), statistic.column})
    cols.index(c);
  if (!statistic.split_by.empty()) cols.index(statistic.split_by);
  // (layer, split value) -> step -> (sum, count): the mean over a line's rows at each step.
  std::map<std::pair<int64_t, std::string>, std::map<double, std::pair<double, int>>> lines;
  std::vector<double> ys, steps;
  for (const auto& row : t.rows) {
    const double layer = cols.number(row, "layer"), step = cols.number(row, options.x_column);
    const double v = cols.number(row, statistic.column);
    if (!std::isfinite(layer) || !std::isfinite(step) || !std::isfinite(v)) continue;
    const std::string part = statistic.split_by.empty() ? "" : cols.text(row, statistic.split_by);
    auto& cell = lines[{int64_t(std::llround(layer)), part}][step];
    cell.first += v;
    cell.second += 1;
  }
  if (lines.empty())
    throw std::invalid_argument(who + ": table \"" + t.name + "\" has no finite " +
                                statistic.column);
  Panel p;
  p.x.label = options.x_label;
  p.y.label = statistic.y_label;
  p.grid = true;
  p.legend = lines.size() > 1;
  p.legend_outside = lines.size() > 6;
  int i = 0;
  for (const auto& [line, by_step] : lines) {
    LineSeries s;
    s.color = cycle_color(i++);
    s.markers = true;
    s.marker_pt = 2.6;
    s.label = "layer " + std::to_string(line.first) + (line.second.empty() ? "" : " " + line.second);
    for (const auto& [step, sum] : by_step) {  // std::map: in step order
      s.x.push_back(step);
      s.y.push_back(sum.first / sum.second);
      ys.push_back(s.y.back());
      steps.push_back(step);
    }
    p.items.push_back(s);
  }
  fit_axis(p.x, steps, false, 0.04);
  fit_axis(p.y, ys, false, 0.08);
  if (p.legend && !p.legend_outside) p.y.max += (p.y.max - p.y.min) * 0.1 * double(lines.size());
  Figure f;
  f.width_in = options.width_in;
  f.height_in = options.height_in;
  f.font_pt = options.font_pt;
  f.panels = {p};
  const std::string caption = statistic.what + " per layer against the " + options.x_label + ", mean "
                              "over the analysed images (and over the heads or matrices a "
                              "layer has), from " + t.name + ".";
  return {f, caption};
}

}  // namespace attnlab::viz
