// The scaling figure: cost against tokens, one line per series, log-log.
#include "viz/figures/scaling.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnlab::viz {

CaptionedFigure scaling_figure(const analysis::Table& table, const std::string& series_column,
                               const std::string& x_column, const std::string& y_column,
                               const std::string& x_label, const std::string& y_label,
                               const std::string& what, const ScalingFigureOptions& options) {
  const std::string who = "scaling figure";
  const Columns cols(table, who);
  for (const auto& c : {series_column, x_column, y_column}) cols.index(c);
  std::vector<std::string> names;
  std::vector<LineSeries> lines;
  std::vector<double> xs, ys;
  for (const auto& row : table.rows) {
    const double x = cols.number(row, x_column), y = cols.number(row, y_column);
    if (!(x > 0) || !(y > 0) || !std::isfinite(x) || !std::isfinite(y)) continue;
    const std::string name = cols.text(row, series_column);
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      names.push_back(name);
      LineSeries line;
      line.color = cycle_color(int(lines.size()));
      line.markers = true;
      line.marker_pt = 3;
      line.width_pt = 1.1;
      line.label = name;
      lines.push_back(line);
      it = names.end() - 1;
    }
    LineSeries& line = lines[size_t(it - names.begin())];
    line.x.push_back(x);
    line.y.push_back(y);
    xs.push_back(x);
    ys.push_back(y);
  }
  if (lines.empty())
    throw std::invalid_argument(who + ": no positive values of " + y_column + " in \"" +
                                table.name + "\"");
  Panel p;
  p.x.label = x_label;
  p.y.label = y_label;
  p.x.log = p.y.log = true;
  p.grid = true;
  p.legend = lines.size() > 1;
  const auto [x_lo, x_hi] = std::minmax_element(xs.begin(), xs.end());
  const auto [y_lo, y_hi] = std::minmax_element(ys.begin(), ys.end());
  p.x.min = *x_lo / 1.25, p.x.max = *x_hi * 1.25;
  // Room above the lines for the legend (one line per series).
  p.y.min = *y_lo / 1.5, p.y.max = *y_hi * std::pow(1.9, 1.0 + 0.35 * double(lines.size()));
  // A handful of sizes (a sweep, a bench's sides): ticks at exactly those, so the reader
  // reads N or the input side off the axis; otherwise 1-2-5 steps.
  std::vector<double> distinct = xs;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.size() <= 6) {
    p.x.ticks = distinct;
    for (const double x : distinct) p.x.tick_labels.push_back(format_number(x, 6));
  } else {
    log_ticks_125(p.x);
  }
  log_ticks_125(p.y);
  for (auto& line : lines) p.items.push_back(line);

  Figure f;
  f.width_in = options.width_in;
  f.height_in = options.height_in;
  f.font_pt = options.font_pt;
  f.panels = {p};
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i ? (i + 1 == names.size() ? " and " : ", ") : "") + names[i];
  return {f, what + " against " + x_label + " for " + list + " (log-log axes)."};
}

}  // namespace attnlab::viz
