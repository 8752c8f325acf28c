// Values under the mouse; see figure_hover.h.
#include "viz/figure_hover.h"

#include <cmath>
#include <limits>
#include <variant>

#include "core/io/text.h"

namespace attnlab::viz {
namespace {

std::string number(double v) {
  return text::format_g(v, 4);
}

// How an axis names the position v: the label of the nearest tick when the axis has
// named ticks (layers, heads, models), else the number.
std::string axis_text(const Axis& axis, double v) {
  if (!axis.tick_labels.empty() && axis.tick_labels.size() == axis.ticks.size()) {
    size_t best = 0;
    for (size_t i = 1; i < axis.ticks.size(); ++i)
      if (std::abs(axis.ticks[i] - v) < std::abs(axis.ticks[best] - v)) best = i;
    return axis.tick_labels[best];
  }
  return number(v);
}

std::string named(const Axis& axis, const std::string& what) {
  return axis.label.empty() ? what : axis.label + " " + what;
}

void add_line(PointValue& out, const std::string& line, double value) {
  out.text += (out.text.empty() ? "" : "\n") + line;
  if (out.value.empty()) out.value = number(value);
}

}  // namespace

PointValue value_at(const Panel& panel, double x, double y) {
  // Series with a legend label speak for the panel; unlabelled ones (reference lines,
  // per-head scatter behind a mean) only when no labelled one has a value there.
  PointValue labelled, unlabelled;
  for (const PlotItem& item : panel.items) {
    const auto* l = std::get_if<LineSeries>(&item);
    const auto* b = std::get_if<BarSeries>(&item);
    PointValue& out = (l && l->label.empty()) || (b && b->label.empty()) ? unlabelled : labelled;
    if (const auto* h = std::get_if<HeatmapLayer>(&item)) {
      if (h->rows <= 0 || h->cols <= 0 || h->x1 == h->x0 || h->y1 == h->y0) continue;
      const double u = (x - h->x0) / (h->x1 - h->x0), w = (y - h->y0) / (h->y1 - h->y0);
      if (u < 0 || u >= 1 || w < 0 || w >= 1) continue;
      const int col = int(u * h->cols), row = int(w * h->rows);
      const float v = h->values[size_t(row) * size_t(h->cols) + size_t(col)];
      if (!std::isfinite(v)) continue;
      // Cell centres in data coordinates, named as the axes name them.
      const double cx = h->x0 + (col + 0.5) * (h->x1 - h->x0) / h->cols;
      const double cy = h->y0 + (row + 0.5) * (h->y1 - h->y0) / h->rows;
      add_line(out,
               named(panel.y, axis_text(panel.y, cy)) + " · " +
                   named(panel.x, axis_text(panel.x, cx)) + ": " + number(v),
               v);
    } else if (l) {
      // The point nearest in x, if the mouse is within half a step of it.
      size_t best = std::numeric_limits<size_t>::max();
      double best_d = INFINITY, step = INFINITY;
      for (size_t i = 0; i < l->x.size() && i < l->y.size(); ++i) {
        if (!std::isfinite(l->y[i])) continue;
        const double d = std::abs(l->x[i] - x);
        if (d < best_d) best_d = d, best = i;
        if (i > 0) step = std::min(step, std::abs(l->x[i] - l->x[i - 1]));
      }
      if (best == std::numeric_limits<size_t>::max()) continue;
      const double reach = std::isfinite(step) && step > 0
                               ? step / 2
                               : std::abs(panel.x.max - panel.x.min) * 0.02;
      if (best_d > reach) continue;
      add_line(out,
               (l->label.empty() ? "" : l->label + ": ") +
                   named(panel.x, axis_text(panel.x, l->x[best])) + " → " + number(l->y[best]),
               l->y[best]);
    } else if (b) {
      for (size_t i = 0; i < b->x.size() && i < b->height.size(); ++i) {
        if (std::abs(x - b->x[i]) > b->width / 2) continue;
        add_line(out,
                 (b->label.empty() ? "" : b->label + ": ") +
                     named(panel.x, axis_text(panel.x, b->x[i])) + " → " + number(b->height[i]),
                 b->height[i]);
      }
    }
  }
  return labelled.text.empty() ? unlabelled : labelled;
}

}  // namespace attnlab::viz
