// Figure layout: uniform margins for every panel of a grid (small multiples line up, as
// in a paper), sized from the widest tick label, the titles and the colorbars present.
#include "viz/figure_layout.h"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "viz/figure_style.h"

namespace attnlab::viz {
namespace {

std::string format_tick(double v, double step) {
  if (std::abs(v) < step * 1e-9) v = 0.0;  // no "-0" or "2.7e-17"
  const double a = std::abs(v);
  char buf[32];
  if (a != 0.0 && (a >= 1e5 || a < 1e-3)) {
    // Enough significant digits that neighbouring ticks differ (a nearly constant map's
    // colorbar spans 0.0051017 to 0.0051023).
    const int digits = step > 0 ? std::clamp(int(std::ceil(std::log10(a / step))) + 1, 3, 10) : 3;
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  } else {
    int decimals = std::max(0, int(std::ceil(-std::log10(step) - 1e-9)));
    if (std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) >
        1e-6)
      ++decimals;  // steps of 2.5
    std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 10), v);
  }
  std::string s = buf;
  if (!s.empty() && s[0] == '-') s = "\u2212" + s.substr(1);  // a real minus sign
  return s;
}

std::string superscript(int k) {
  static const char* kDigits[10] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
                                    "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
  std::string s = k < 0 ? "\u207b" : "";
  for (char c : std::to_string(std::abs(k))) s += kDigits[c - '0'];
  return s;
}

Ticks log_ticks(double lo, double hi) {
  Ticks t;
  if (!(lo > 0) || !(hi > lo)) return t;
  const int a = int(std::ceil(std::log10(lo) - 1e-9)), b = int(std::floor(std::log10(hi) + 1e-9));
  const int stride = std::max(1, (b - a + 1 + 5) / 6);
  for (int k = a; k <= b; k += stride) {
    t.at.push_back(std::pow(10.0, k));
    t.labels.push_back(k == 0 ? "1" : k == 1 ? "10" : "10" + superscript(k));
  }
  return t;
}

Ticks linear_ticks(double lo, double hi) {
  Ticks t;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return t;
  const double raw = (hi - lo) / 5.0, mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw * 0.999) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    t.at.push_back(v);
    t.labels.push_back(format_tick(v, step));
  }
  return t;
}

// A 1x1 scratch surface for text metrics; hinting off, so advances scale exactly and the
// layout is the same for every output resolution.
struct Measurer {
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t* cr = cairo_create(surface);
  Measurer() {
    cairo_font_options_t* fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_set_font_options(cr, fo);
    cairo_font_options_destroy(fo);
  }
  ~Measurer() {
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
  }
  Measurer(const Measurer&) = delete;
  Measurer& operator=(const Measurer&) = delete;
};

double max_label_width(const Ticks& t, double size_pt) {
  double w = 0;
  for (const auto& s : t.labels) w = std::max(w, text_width_pt(s, size_pt));
  return w;
}

double axis_u(const Axis& a, double v) {
  if (a.log) {
    const double lo = std::log10(a.min), hi = std::log10(a.max);
    return (std::log10(v) - lo) / (hi - lo);
  }
  return (v - a.min) / (a.max - a.min);
}

double axis_value(const Axis& a, double u) {
  if (a.log) {
    const double lo = std::log10(a.min), hi = std::log10(a.max);
    return std::pow(10.0, lo + u * (hi - lo));
  }
  return a.min + u * (a.max - a.min);
}

// Width a colorbar needs right of what it sits beside: gap, bar, ticks, labels, title.
double colorbar_room(const ColorbarSpec& cb, const style::Metrics& m) {
  Axis a;
  a.min = cb.vmin;
  a.max = cb.vmax;
  const Ticks t = axis_ticks(a);
  return m.pad + m.colorbar_w + m.tick_len + 2 + max_label_width(t, m.tick_pt) +
         (cb.label.empty() ? 0 : m.pad * 0.6 + m.line_h);
}

}  // namespace

double text_width_pt(const std::string& text, double size_pt, bool bold) {
  thread_local Measurer m;
  cairo_select_font_face(m.cr, style::kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(m.cr, size_pt);
  cairo_text_extents_t e;
  cairo_text_extents(m.cr, text.c_str(), &e);
  return e.x_advance;
}

LegendBox legend_box(const Panel& panel, double figure_font_pt) {
  const style::Metrics m(figure_font_pt);
  LegendBox box;
  box.font_pt = m.tick_pt * 0.95;
  box.row_pt = box.font_pt * 1.3;
  box.sample_pt = box.font_pt * 1.8;
  double widest = 0;
  size_t rows = 0;
  for (const auto& item : panel.items) {
    const std::string* label = nullptr;
    if (const auto* s = std::get_if<LineSeries>(&item)) label = &s->label;
    if (const auto* b = std::get_if<BarSeries>(&item)) label = &b->label;
    if (!label || label->empty()) continue;
    widest = std::max(widest, text_width_pt(*label, box.font_pt));
    ++rows;
  }
  if (rows == 0) return box;
  box.w = m.pad + box.sample_pt + m.pad * 0.6 + widest + m.pad;
  box.h = box.row_pt * double(rows) + m.pad;
  return box;
}

Ticks axis_ticks(const Axis& axis) {
  Ticks t;
  if (!axis.ticks.empty()) {
    const double lo = std::min(axis.min, axis.max), hi = std::max(axis.min, axis.max);
    const double span = hi - lo;
    double step = span > 0 ? span : 1.0;  // label precision from the tick spacing
    for (size_t i = 1; i < axis.ticks.size(); ++i) {
      const double d = std::abs(axis.ticks[i] - axis.ticks[i - 1]);
      if (d > 0) step = std::min(step, d);
    }
    for (size_t i = 0; i < axis.ticks.size(); ++i) {
      const double v = axis.ticks[i];
      if (v < lo - span * 1e-9 || v > hi + span * 1e-9) continue;
      t.at.push_back(v);
      t.labels.push_back(i < axis.tick_labels.size() ? axis.tick_labels[i] : format_tick(v, step));
    }
    return t;
  }
  return axis.log ? log_ticks(axis.min, axis.max)
                  : linear_ticks(std::min(axis.min, axis.max), std::max(axis.min, axis.max));
}

double fitted_height_in(const Figure& figure) {
  const FigureLayout L = layout_figure(figure);
  const int rows = figure.rows();
  if (rows == 0) return figure.height_in;
  // Rows share one height, so all of them shrink by the smallest slack below an image
  // panel's picture; a panel of plots has no slack (it would be squeezed).
  const style::Metrics m(figure.font_pt);
  double slack = INFINITY;
  for (size_t i = 0; i < figure.panels.size(); ++i) {
    if (!figure.panels[i].image) return figure.height_in;
    const PanelLayout& b = L.panels[i];
    const double below = b.cell.y + b.cell.h - (b.plot.y + b.plot.h);
    const double need = figure.panels[i].x.show ? below : m.pad * 0.6;
    slack = std::min(slack, std::max(0.0, below - need));
  }
  const double slack_total = std::isfinite(slack) ? slack * rows : 0.0;
  return std::max(0.5, figure.height_in - slack_total / 72.0);
}

FigureLayout layout_figure(const Figure& figure) {
  const style::Metrics m(figure.font_pt);
  FigureLayout L;
  L.width_pt = figure.width_in * 72.0;
  L.height_pt = figure.height_in * 72.0;
  const int rows = figure.rows(), cols = std::max(1, figure.cols);
  const size_t n = figure.panels.size();
  L.panels.resize(n);

  // Uniform panel margins: the largest any panel needs.
  bool any_title = false, any_xshow = false, any_xlabel = false, any_yshow = false,
       any_ylabel = false;
  int title_lines = 1;  // a panel title may have a second line ("model\n[lo, hi]")
  double ytick_w = 0, panel_cb = 0, legend_w = 0;
  for (size_t i = 0; i < n; ++i) {
    const Panel& p = figure.panels[i];
    L.panels[i].xticks = p.x.show ? axis_ticks(p.x) : Ticks{};
    L.panels[i].yticks = p.y.show ? axis_ticks(p.y) : Ticks{};
    any_title |= !p.title.empty();
    title_lines = std::max(title_lines, 1 + int(std::count(p.title.begin(), p.title.end(), '\n')));
    any_xshow |= p.x.show;
    any_yshow |= p.y.show;
    any_xlabel |= p.x.show && !p.x.label.empty();
    any_ylabel |= p.y.show && !p.y.label.empty();
    ytick_w = std::max(ytick_w, max_label_width(L.panels[i].yticks, m.tick_pt));
    if (p.colorbar) panel_cb = std::max(panel_cb, colorbar_room(*p.colorbar, m));
    if (p.legend && p.legend_outside)
      legend_w = std::max(legend_w, legend_box(p, figure.font_pt).w + m.pad);
  }
  const double p_top =
      any_title ? m.line_h * 1.1 + (title_lines - 1) * m.line_h * 0.95 + m.pad * 0.4 : m.pad * 0.6;
  const double p_left = m.pad * 0.6 + (any_yshow ? m.tick_len + 2 + ytick_w : 0) +
                        (any_ylabel ? m.line_h + m.pad * 0.3 : 0);
  const double p_bottom = (any_xshow ? m.tick_len + 2 + m.line_h : m.pad * 0.6) +
                          (any_xlabel ? m.line_h + m.pad * 0.2 : 0);
  const double p_right = (panel_cb > 0 ? panel_cb + m.pad * 0.6 : m.pad * 0.6) + legend_w;

  double top = m.pad * 0.5, left = m.pad * 0.5, right = m.pad * 0.5;
  if (!figure.title.empty()) {
    L.title = Rect{0, top, L.width_pt, m.line_h * 1.25};
    top += L.title.h + m.pad * 0.3;
  }
  bool any_col_label = false, any_row_label = false;
  for (const auto& s : figure.col_labels) any_col_label |= !s.empty();
  for (const auto& s : figure.row_labels) any_row_label |= !s.empty();
  if (any_col_label) top += m.line_h * 1.1;
  if (any_row_label) left += m.line_h * 1.2;
  if (figure.colorbar) right += colorbar_room(*figure.colorbar, m);
  const double bottom = m.pad * 0.5;

  const double cell_w = std::max(1.0, (L.width_pt - left - right) / cols);
  const double cell_h = std::max(1.0, (L.height_pt - top - bottom) / std::max(1, rows));
  double grid_top = INFINITY, grid_bottom = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    const Panel& p = figure.panels[i];
    const int r = int(i) / cols, c = int(i) % cols;
    PanelLayout& box = L.panels[i];
    box.cell = Rect{left + c * cell_w, top + r * cell_h, cell_w, cell_h};
    Rect plot{box.cell.x + p_left, box.cell.y + p_top, std::max(1.0, cell_w - p_left - p_right),
              std::max(1.0, cell_h - p_top - p_bottom)};
    if (p.image) {  // equal aspect, centred horizontally, at the top vertically
      const double dw = std::abs(p.x.max - p.x.min), dh = std::abs(p.y.max - p.y.min);
      if (dw > 0 && dh > 0) {
        const double s = std::min(plot.w / dw, plot.h / dh);
        const double w = dw * s, h = dh * s;
        plot.x += (plot.w - w) / 2;
        plot.w = w;
        plot.h = h;
      }
    }
    box.plot = plot;
    grid_top = std::min(grid_top, plot.y);
    grid_bottom = std::max(grid_bottom, plot.y + plot.h);
  }
  if (figure.colorbar && n > 0) {
    L.colorbar = Rect{L.width_pt - right + m.pad, grid_top, m.colorbar_w,
                      std::max(1.0, grid_bottom - grid_top)};
  }
  return L;
}

PointXY data_to_points(const Panel& panel, const PanelLayout& box, double x, double y) {
  const double u = axis_u(panel.x, x), v = axis_u(panel.y, y);
  return PointXY{box.plot.x + u * box.plot.w,
                 panel.image ? box.plot.y + v * box.plot.h : box.plot.y + (1 - v) * box.plot.h};
}

PointXY points_to_data(const Panel& panel, const PanelLayout& box, double px, double py) {
  const double u = (px - box.plot.x) / box.plot.w;
  const double v =
      panel.image ? (py - box.plot.y) / box.plot.h : 1 - (py - box.plot.y) / box.plot.h;
  return PointXY{axis_value(panel.x, u), axis_value(panel.y, v)};
}

std::optional<FigureHit> hit_test(const Figure& figure, const FigureLayout& layout, double pixel_x,
                                  double pixel_y, double dpi) {
  const double px = pixel_x * 72.0 / dpi, py = pixel_y * 72.0 / dpi;
  for (size_t i = 0; i < layout.panels.size() && i < figure.panels.size(); ++i) {
    if (!layout.panels[i].plot.contains(px, py)) continue;
    const PointXY d = points_to_data(figure.panels[i], layout.panels[i], px, py);
    return FigureHit{int(i), d.x, d.y};
  }
  return std::nullopt;
}

FigureGeometry figure_geometry(const Figure& figure, double dpi) {
  FigureGeometry g;
  g.layout = layout_figure(figure);
  g.dpi = dpi;
  g.figure = figure;
  for (Panel& p : g.figure.panels)
    for (PlotItem& item : p.items)
      if (auto* im = std::get_if<ImageLayer>(&item)) im->image.reset();
  return g;
}

}  // namespace attnlab::viz
