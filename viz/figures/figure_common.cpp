// Helpers shared by the paper figures: look-ups by name with errors that say what is
// missing, layer tags, number text, error bars, and the height of mixed image/plot grids.
#include "viz/figures/figure_common.h"

#include "core/analysis/result_key.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "core/io/text.h"
#include "viz/figure_layout.h"
#include "viz/figure_style.h"

namespace attnlab::viz {
namespace {

bool name_matches(const std::string& have, const std::string& want) {
  if (have == want) return true;
  const std::string suffix = "__" + want;
  return have.size() > suffix.size() &&
         have.compare(have.size() - suffix.size(), suffix.size(), suffix) == 0;
}

template <typename T>
std::string names_of(const std::vector<T>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 12; ++i) s += (i ? ", " : "") + v[i].name;
  if (v.size() > 12) s += ", ... (" + std::to_string(v.size()) + " in all)";
  return s.empty() ? "none" : s;
}

}  // namespace

const analysis::Table* find_table_or_null(const std::vector<analysis::Table>& tables,
                                          const std::string& name) {
  for (const auto& t : tables)
    if (name_matches(t.name, name)) return &t;
  return nullptr;
}

const analysis::Table& find_table(const std::vector<analysis::Table>& tables,
                                  const std::string& name, const std::string& who) {
  if (const auto* t = find_table_or_null(tables, name)) return *t;
  throw std::invalid_argument(who + ": no table \"" + name +
                              "\" among the results (tables: " + names_of(tables) + ")");
}

const analysis::Array* find_array_or_null(const std::vector<analysis::Array>& arrays,
                                          const std::string& name) {
  for (const auto& a : arrays)
    if (name_matches(a.name, name)) return &a;
  return nullptr;
}

const analysis::Array& find_array(const std::vector<analysis::Array>& arrays,
                                  const std::string& name, const std::string& who) {
  if (const auto* a = find_array_or_null(arrays, name)) return *a;
  throw std::invalid_argument(who + ": no array \"" + name +
                              "\" among the results (arrays: " + names_of(arrays) + ")");
}

void require_axes(const analysis::Array& a, const std::vector<std::string>& axes,
                  const std::string& who) {
  bool ok = a.shape.size() == axes.size() && a.numel() == int64_t(a.data.size());
  for (size_t i = 0; ok && i < axes.size() && i < a.axes.size(); ++i) ok = a.axes[i] == axes[i];
  for (int64_t d : a.shape) ok = ok && d > 0;
  if (ok) return;
  std::string want, have;
  for (size_t i = 0; i < axes.size(); ++i) want += (i ? ", " : "") + axes[i];
  for (size_t i = 0; i < a.shape.size(); ++i)
    have +=
        (i ? ", " : "") + (i < a.axes.size() ? a.axes[i] + "=" : "") + std::to_string(a.shape[i]);
  throw std::invalid_argument(who + ": array \"" + a.name + "\" should have axes (" + want +
                              "), non-empty, with data for every element; it has (" + have +
                              ") and " + std::to_string(a.data.size()) + " values");
}

size_t Columns::index(const std::string& column) const {
  for (size_t i = 0; i < table_.columns.size(); ++i)
    if (table_.columns[i] == column) return i;
  std::string have;
  for (size_t i = 0; i < table_.columns.size(); ++i) have += (i ? ", " : "") + table_.columns[i];
  throw std::invalid_argument(who_ + ": table \"" + table_.name + "\" has no column \"" + column +
                              "\" (columns: " + (have.empty() ? "none" : have) + ")");
}

double Columns::number(const std::vector<analysis::Cell>& row, const std::string& column) const {
  const size_t i = index(column);
  if (i >= row.size()) return NAN;
  const analysis::Cell& c = row[i];
  if (c.numeric()) return c.number();
  char* end = nullptr;
  const double v = std::strtod(c.t.c_str(), &end);
  return (end && *end == '\0' && !c.t.empty()) ? v : std::nan("");
}

std::string Columns::text(const std::vector<analysis::Cell>& row, const std::string& column) const {
  const size_t i = index(column);
  return i < row.size() ? row[i].str() : std::string();
}

LineSeries layer_series(const Columns& cols, const std::string& column, Color color) {
  LineSeries s;
  s.color = color;
  s.markers = true;
  s.marker_pt = 2.6;
  for (const auto& row : cols.table().rows) {
    const double layer = cols.number(row, "layer"), v = cols.number(row, column);
    if (!std::isfinite(layer) || !std::isfinite(v)) continue;
    s.x.push_back(layer);
    s.y.push_back(v);
  }
  return s;
}

std::string layer_tag(int64_t layer) {
  return analysis::layer_tag(layer);
}

std::vector<int64_t> distinct_layers(const Columns& cols, const std::string& column) {
  std::vector<int64_t> out;
  for (const auto& row : cols.table().rows) {
    const double v = cols.number(row, column);
    if (!std::isfinite(v)) continue;
    const auto l = int64_t(std::llround(v));
    if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string format_number(double v, int significant) {
  return text::format_g(v, significant);
}

void add_error_bars(Panel& panel, const std::vector<double>& x, const std::vector<double>& y,
                    const std::vector<double>& err, Color color, double cap_halfwidth) {
  for (size_t i = 0; i < x.size() && i < y.size() && i < err.size(); ++i) {
    if (!std::isfinite(y[i]) || !std::isfinite(err[i]) || err[i] <= 0) continue;
    const double lo = y[i] - err[i], hi = y[i] + err[i];
    LineSeries bar;
    bar.color = color;
    bar.width_pt = 0.8;
    bar.x = {x[i], x[i]};
    bar.y = {lo, hi};
    panel.items.push_back(bar);
    for (double at : {lo, hi}) {
      LineSeries cap = bar;
      cap.x = {x[i] - cap_halfwidth, x[i] + cap_halfwidth};
      cap.y = {at, at};
      panel.items.push_back(cap);
    }
  }
}

void log_ticks_125(Axis& axis) {
  if (!axis.log || !(axis.min > 0) || !(axis.max > axis.min)) return;
  if (std::log10(axis.max / axis.min) > 2.5) return;  // decades are enough
  axis.ticks.clear();
  axis.tick_labels.clear();
  for (int e = int(std::floor(std::log10(axis.min))); e <= int(std::ceil(std::log10(axis.max)));
       ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (v < axis.min || v > axis.max) continue;
      axis.ticks.push_back(v);
      axis.tick_labels.push_back(format_number(v, 3));
    }
}

void fit_height_to_images(Figure& figure) {
  const FigureLayout L = layout_figure(figure);
  const int rows = figure.rows();
  double slack = INFINITY;
  for (size_t i = 0; i < figure.panels.size(); ++i) {
    if (!figure.panels[i].image) continue;
    const Rect& cell = L.panels[i].cell;
    const Rect& plot = L.panels[i].plot;
    // Room the layout keeps below every panel (tick labels of the plot panels).
    const double below = cell.y + cell.h - (plot.y + plot.h);
    slack = std::min(slack, below);
  }
  if (!std::isfinite(slack) || rows == 0) return;
  // Keep what the plot panels need below their axes: the uniform bottom margin.
  double need = style::Metrics(figure.font_pt).pad * 0.6;
  for (size_t i = 0; i < figure.panels.size(); ++i) {
    if (figure.panels[i].image) continue;
    const Rect& cell = L.panels[i].cell;
    const Rect& plot = L.panels[i].plot;
    need = std::max(need, cell.y + cell.h - (plot.y + plot.h));
  }
  const double cut = std::max(0.0, slack - need) * rows;
  figure.height_in = std::max(0.5, figure.height_in - cut / 72.0);
}

}  // namespace attnlab::viz
