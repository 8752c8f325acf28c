// Drawing a Figure with cairo (figure_drawing.h). Raster and vector targets differ only
// where they must: coarse heatmaps are replicated to blocks before embedding in vector
// files (so viewers cannot smooth them), and the SVG collects its invisible text layer.
#include "viz/figure_drawing.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "viz/figure_layout.h"
#include "viz/figure_style.h"
#include "viz/overlay.h"

namespace attnlab::viz {
namespace {

void set_color(cairo_t* cr, const Color& c) {
  cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a);
}

void set_font(cairo_t* cr, double size, bool bold = false) {
  cairo_select_font_face(cr, style::kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

// Text with its anchor point: hx 0/0.5/1 = left/centre/right; vy: baseline offset as a
// fraction of the font size (0.35 centres digits vertically). vertical: rotated -90 deg.
void draw_text(DrawTarget& t, const std::string& s, double x, double y, double size, double hx,
               double vy, bool bold = false, bool vertical = false, Color color = kBlack) {
  if (s.empty()) return;
  cairo_t* cr = t.cr;
  set_font(cr, size, bold);
  set_color(cr, color);
  const double w = text_width_pt(s, size, bold);
  cairo_save(cr);
  cairo_translate(cr, x, y);
  if (vertical) cairo_rotate(cr, -M_PI / 2);
  cairo_move_to(cr, -hx * w, vy * size);
  cairo_show_text(cr, s.c_str());
  cairo_restore(cr);
  if (t.texts) {
    const char* anchor = hx == 0 ? "start" : hx == 1 ? "end" : "middle";
    if (vertical)
      t.texts->push_back({x + vy * size, y, size, s, anchor, true});
    else
      t.texts->push_back({x, y + vy * size, size, s, anchor, false});
  }
}

// The font size at which `text` fits `width` points: `size`, or smaller (never below 60%,
// where text stops being readable; a longer text then overflows rather than vanishes).
double fitting_size(const std::string& text, double size, double width, bool bold = false) {
  const double w = text_width_pt(text, size, bold);
  return w <= width || w <= 0 ? size : std::max(size * 0.6, size * width / w);
}

// A panel's title over its axes: one line, or lines split at '\n' with the later ones
// (e.g. a map's value range) in the tick font. Each line is shrunk to fit the panel's cell
// and kept inside it: centred over the axes, shifted when the cell's colorbar side or the
// figure's edge would cut it.
void draw_panel_title(DrawTarget& t, const style::Metrics& m, const std::string& title,
                      const PanelLayout& box) {
  std::vector<std::string> lines;
  for (size_t start = 0;;) {
    const size_t end = title.find('\n', start);
    lines.push_back(title.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  const Rect& r = box.plot;
  const double room = std::max(r.w, box.cell.w - m.pad);
  for (size_t i = 0; i < lines.size(); ++i) {
    const double base = i == 0 ? m.title_pt : m.tick_pt;
    const double size = fitting_size(lines[i], base, room);
    const double w = text_width_pt(lines[i], size);
    const double lo = box.cell.x + m.pad * 0.25, hi = box.cell.x + box.cell.w - m.pad * 0.25;
    double x = r.x + r.w / 2;
    if (x + w / 2 > hi) x = hi - w / 2;
    if (x - w / 2 < lo) x = lo + w / 2;
    const double y = r.y - m.pad * 0.5 - double(lines.size() - 1 - i) * m.line_h * 0.95;
    draw_text(t, lines[i], x, y, size, 0.5, 0);
  }
}

void line(cairo_t* cr, double x0, double y0, double x1, double y1) {
  cairo_move_to(cr, x0, y0);
  cairo_line_to(cr, x1, y1);
}

// ARGB32 premultiplied surface from straight RGBA.
cairo_surface_t* surface_from_rgba(const RgbaImage& img) {
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, img.width, img.height);
  cairo_surface_flush(s);
  unsigned char* data = cairo_image_surface_get_data(s);
  const int stride = cairo_image_surface_get_stride(s);
  for (int y = 0; y < img.height; ++y) {
    auto* row = reinterpret_cast<uint32_t*>(data + size_t(y) * stride);
    for (int x = 0; x < img.width; ++x) {
      const uint8_t* p = &img.rgba[(size_t(y) * img.width + x) * 4];
      const uint32_t a = p[3];
      if (a == 255) {
        row[x] = 0xFF000000u | (uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | p[2];
        continue;
      }
      const auto pm = [a](uint32_t c) { return (c * a + 127) / 255; };
      row[x] = (a << 24) | (pm(p[0]) << 16) | (pm(p[1]) << 8) | pm(p[2]);
    }
  }
  cairo_surface_mark_dirty(s);
  return s;
}

// Paints an image surface of w x h pixels into the rectangle (already in points) with the
// given filter; alpha < 1 blends it over what is there.
void paint_surface(DrawTarget& t, cairo_surface_t* s, int w, int h, double x0, double y0,
                   double x1, double y1, cairo_filter_t filter, double alpha) {
  cairo_t* cr = t.cr;
  cairo_save(cr);
  cairo_translate(cr, std::min(x0, x1), std::min(y0, y1));
  cairo_scale(cr, std::abs(x1 - x0) / w, std::abs(y1 - y0) / h);
  cairo_set_source_surface(cr, s, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), filter);
  // Raster: edge pixels extend outward, so a smoothed edge does not fade to transparent.
  // Vector: no extension, which the PDF backend would emulate with a padded copy of the
  // image per paint (and a picture under 72 panels would be embedded 72 times).
  cairo_pattern_set_extend(cairo_get_source(cr), t.vector ? CAIRO_EXTEND_NONE : CAIRO_EXTEND_PAD);
  cairo_rectangle(cr, 0, 0, w, h);
  if (alpha >= 1) {
    cairo_fill(cr);
  } else {
    cairo_clip(cr);
    cairo_paint_with_alpha(cr, std::max(0.0, alpha));
  }
  cairo_restore(cr);
}

// Paints `img` (a temporary: a colormapped heatmap, a colorbar) into the rectangle.
// Nearest: blocks stay sharp.
void paint_image(DrawTarget& t, const RgbaImage& img, double x0, double y0, double x1, double y1,
                 bool smooth, double alpha = 1) {
  if (img.empty()) return;
  cairo_surface_t* s = surface_from_rgba(img);
  paint_surface(t, s, img.width, img.height, x0, y0, x1, y1,
                smooth ? CAIRO_FILTER_BILINEAR : CAIRO_FILTER_NEAREST, alpha);
  cairo_surface_destroy(s);
}

// Paints a figure's picture, converted once per drawing when the target keeps surfaces.
void paint_picture(DrawTarget& t, const RgbaImage& img, double x0, double y0, double x1, double y1,
                   bool smooth) {
  if (img.empty()) return;
  if (!t.images) return paint_image(t, img, x0, y0, x1, y1, smooth);
  paint_surface(t, t.images->surface_for(img), img.width, img.height, x0, y0, x1, y1,
                smooth ? CAIRO_FILTER_BILINEAR : CAIRO_FILTER_NEAREST, 1);
}

void draw_heatmap(DrawTarget& t, const Panel& p, const PanelLayout& box, const HeatmapLayer& h) {
  if (h.rows <= 0 || h.cols <= 0 || h.values.size() != size_t(h.rows) * h.cols) return;
  const PointXY a = data_to_points(p, box, h.x0, h.y0), b = data_to_points(p, box, h.x1, h.y1);
  int out_h = h.rows, out_w = h.cols;
  bool smooth = false;
  if (h.upsample == Upsample::Bilinear) {
    // Raster: to the device resolution of the rectangle. Vector: to about one pixel per
    // point (72 per inch), with the viewer's interpolation smoothing between them, which
    // looks the same as a finer sampling at any zoom and keeps a 72-panel figure small.
    const double scale = t.vector ? 1.0 : t.px_per_pt;
    out_w = std::clamp(int(std::ceil(std::abs(b.x - a.x) * scale)), h.cols, 2048);
    out_h = std::clamp(int(std::ceil(std::abs(b.y - a.y) * scale)), h.rows, 2048);
    smooth = t.vector;
  } else if (t.vector) {  // blocks of k x k pixels: sharp in every viewer
    const int k = std::clamp(512 / std::max(h.rows, h.cols), 1, 64);
    out_w = h.cols * k;
    out_h = h.rows * k;
  }
  const std::vector<float> v =
      (out_h == h.rows && out_w == h.cols)
          ? h.values
          : upsample_map(h.values.data(), h.rows, h.cols, out_h, out_w, h.upsample);
  const RgbaImage img =
      colormap_image(v.data(), out_w, out_h, float(h.vmin), float(h.vmax), h.cmap);
  // Row 0 is at y0: flip when y0 is drawn below y1 (a non-image panel, y up).
  if (a.y > b.y) {
    RgbaImage flipped = img;
    for (int y = 0; y < img.height; ++y)
      std::copy_n(&img.rgba[size_t(img.height - 1 - y) * img.width * 4], size_t(img.width) * 4,
                  &flipped.rgba[size_t(y) * img.width * 4]);
    paint_image(t, flipped, a.x, a.y, b.x, b.y, smooth, h.alpha);
  } else {
    paint_image(t, img, a.x, a.y, b.x, b.y, smooth, h.alpha);
  }
}

void draw_item(DrawTarget& t, const Figure& f, const Panel& p, const PanelLayout& box,
               const PlotItem& item) {
  cairo_t* cr = t.cr;
  const auto pt = [&](double x, double y) { return data_to_points(p, box, x, y); };
  if (const auto* s = std::get_if<LineSeries>(&item)) {
    const size_t n = std::min(s->x.size(), s->y.size());
    if (s->width_pt > 0 && n > 1) {
      bool pen = false;
      for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(s->y[i]) || (p.y.log && s->y[i] <= 0)) {
          pen = false;
          continue;
        }
        const PointXY q = pt(s->x[i], s->y[i]);
        if (pen)
          cairo_line_to(cr, q.x, q.y);
        else
          cairo_move_to(cr, q.x, q.y);
        pen = true;
      }
      set_color(cr, s->color);
      cairo_set_line_width(cr, s->width_pt);
      cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
      const double dash[2] = {3.7, 1.6};
      cairo_set_dash(cr, dash, s->dashed ? 2 : 0, 0);
      cairo_stroke(cr);
      cairo_set_dash(cr, nullptr, 0, 0);
    }
    if (s->markers || s->width_pt <= 0) {
      set_color(cr, s->color);
      for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(s->y[i]) || (p.y.log && s->y[i] <= 0)) continue;
        const PointXY q = pt(s->x[i], s->y[i]);
        cairo_new_sub_path(cr);
        cairo_arc(cr, q.x, q.y, s->marker_pt / 2, 0, 2 * M_PI);
      }
      cairo_fill(cr);
    }
  } else if (const auto* b = std::get_if<BarSeries>(&item)) {
    set_color(cr, b->color);
    const double base = p.y.log ? p.y.min : 0.0;
    for (size_t i = 0; i < std::min(b->x.size(), b->height.size()); ++i) {
      if (!std::isfinite(b->height[i])) continue;
      const PointXY q0 = pt(b->x[i] - b->width / 2, base),
                    q1 = pt(b->x[i] + b->width / 2, b->height[i]);
      cairo_rectangle(cr, std::min(q0.x, q1.x), std::min(q0.y, q1.y), std::abs(q1.x - q0.x),
                      std::abs(q1.y - q0.y));
    }
    cairo_fill(cr);
  } else if (const auto* h = std::get_if<HeatmapLayer>(&item)) {
    draw_heatmap(t, p, box, *h);
  } else if (const auto* im = std::get_if<ImageLayer>(&item)) {
    if (!im->image) return;
    const PointXY a = pt(im->x0, im->y0), c = pt(im->x1, im->y1);
    const bool downscale = std::abs(c.x - a.x) * t.px_per_pt < im->image->width;
    paint_picture(t, *im->image, a.x, a.y, c.x, c.y, downscale && !t.vector);
  } else if (const auto* g = std::get_if<GridLines>(&item)) {
    for (int c = 1; c < g->cols; ++c) {
      const double x = g->x0 + (g->x1 - g->x0) * c / g->cols;
      const PointXY a = pt(x, g->y0), e = pt(x, g->y1);
      line(cr, a.x, a.y, e.x, e.y);
    }
    for (int r = 1; r < g->rows; ++r) {
      const double y = g->y0 + (g->y1 - g->y0) * r / g->rows;
      const PointXY a = pt(g->x0, y), e = pt(g->x1, y);
      line(cr, a.x, a.y, e.x, e.y);
    }
    set_color(cr, g->color);
    cairo_set_line_width(cr, g->width_pt);
    cairo_stroke(cr);
  } else if (const auto* r = std::get_if<RectOutline>(&item)) {
    const PointXY a = pt(r->x0, r->y0), e = pt(r->x1, r->y1);
    cairo_rectangle(cr, std::min(a.x, e.x), std::min(a.y, e.y), std::abs(e.x - a.x),
                    std::abs(e.y - a.y));
    set_color(cr, r->color);
    cairo_set_line_width(cr, r->width_pt);
    cairo_stroke(cr);
  } else if (const auto* m = std::get_if<Marker>(&item)) {
    const PointXY q = pt(m->x, m->y);
    const double hs = m->size_pt / 2;
    if (m->shape == Marker::Shape::Circle)
      cairo_arc(cr, q.x, q.y, hs, 0, 2 * M_PI);
    else if (m->shape == Marker::Shape::Square)
      cairo_rectangle(cr, q.x - hs, q.y - hs, 2 * hs, 2 * hs);
    if (m->shape == Marker::Shape::Cross) {
      line(cr, q.x - hs, q.y - hs, q.x + hs, q.y + hs);
      line(cr, q.x - hs, q.y + hs, q.x + hs, q.y - hs);
      set_color(cr, m->outline);
      cairo_set_line_width(cr, 2.6);
      cairo_stroke_preserve(cr);
      set_color(cr, m->color);
      cairo_set_line_width(cr, 1.2);
      cairo_stroke(cr);
    } else {
      set_color(cr, m->color);
      cairo_fill_preserve(cr);
      set_color(cr, m->outline);
      cairo_set_line_width(cr, 0.8);
      cairo_stroke(cr);
    }
  } else if (const auto* l = std::get_if<TextLabel>(&item)) {
    const PointXY q = pt(l->x, l->y);
    const double hx = l->anchor == TextLabel::Anchor::Left    ? 0
                      : l->anchor == TextLabel::Anchor::Right ? 1
                                                              : 0.5;
    draw_text(t, l->text, q.x, q.y, l->size_pt > 0 ? l->size_pt : f.font_pt, hx, 0.35, false, false,
              l->color);
  }
}

// A vertical colorbar in `bar` (points) with ticks and labels to its right.
void draw_colorbar(DrawTarget& t, const style::Metrics& m, const ColorbarSpec& cb,
                   const Rect& bar) {
  constexpr int kSteps = 256;
  std::vector<float> ramp(kSteps);
  for (int i = 0; i < kSteps; ++i)
    ramp[size_t(i)] = float(cb.vmax - (cb.vmax - cb.vmin) * (i + 0.5) / kSteps);  // top = vmax
  const RgbaImage img =
      colormap_image(ramp.data(), 1, kSteps, float(cb.vmin), float(cb.vmax), cb.cmap);
  paint_image(t, img, bar.x, bar.y, bar.x + bar.w, bar.y + bar.h, false);
  cairo_t* cr = t.cr;
  cairo_rectangle(cr, bar.x, bar.y, bar.w, bar.h);
  set_color(cr, kBlack);
  cairo_set_line_width(cr, style::kSpineWidth * 0.75);
  cairo_stroke(cr);
  Axis a;
  a.min = cb.vmin;
  a.max = cb.vmax;
  const Ticks ticks = axis_ticks(a);
  double label_w = 0;
  for (size_t i = 0; i < ticks.at.size(); ++i) {
    const double u = cb.vmax == cb.vmin ? 0.5 : (ticks.at[i] - cb.vmin) / (cb.vmax - cb.vmin);
    const double y = bar.y + (1 - u) * bar.h;
    line(cr, bar.x + bar.w, y, bar.x + bar.w + m.tick_len, y);
    draw_text(t, ticks.labels[i], bar.x + bar.w + m.tick_len + 2, y, m.tick_pt, 0, 0.35);
    label_w = std::max(label_w, text_width_pt(ticks.labels[i], m.tick_pt));
  }
  set_color(cr, kBlack);
  cairo_set_line_width(cr, style::kTickWidth * 0.75);
  cairo_stroke(cr);
  draw_text(t, cb.label, bar.x + bar.w + m.tick_len + 2 + label_w + m.pad * 0.6 + m.line_h * 0.5,
            bar.y + bar.h / 2, m.label_pt, 0.5, 0.35, false, true);
}

void draw_legend(DrawTarget& t, const style::Metrics& m, const Panel& p, const PanelLayout& box) {
  struct Entry {
    std::string label;
    Color color;
    bool bar, dashed;
    bool line = true, marker = false;  // a scatter series (width 0) shows its marker alone
    double marker_pt = 0;
  };
  std::vector<Entry> entries;
  for (const auto& item : p.items) {
    if (const auto* s = std::get_if<LineSeries>(&item); s && !s->label.empty())
      entries.push_back({s->label, s->color, false, s->dashed, s->width_pt > 0,
                         s->markers || s->width_pt <= 0, s->marker_pt});
    if (const auto* b = std::get_if<BarSeries>(&item); b && !b->label.empty())
      entries.push_back({b->label, b->color, true, false});
  }
  if (entries.empty()) return;
  const LegendBox lb = legend_box(p, m.tick_pt);  // tick_pt is the figure font
  const double fs = lb.font_pt, row = lb.row_pt, sample = lb.sample_pt;
  const double bw = lb.w, bh = lb.h;
  // Outside: right of the axes, at their top (the layout left room for it). Inside:
  // matplotlib's loc="best", reduced to the four corners: the one covering fewest points.
  double x = box.plot.x + box.plot.w + m.pad * 1.5, y = box.plot.y;
  size_t best = SIZE_MAX;
  for (int corner = 0; corner < (p.legend_outside ? 0 : 4); ++corner) {
    const double cx =
        corner % 2 == 0 ? box.plot.x + box.plot.w - bw - m.pad * 0.5 : box.plot.x + m.pad * 0.5;
    const double cy =
        corner < 2 ? box.plot.y + m.pad * 0.5 : box.plot.y + box.plot.h - bh - m.pad * 0.5;
    const Rect r{cx - m.pad, cy - m.pad, bw + 2 * m.pad, bh + 2 * m.pad};
    size_t covered = 0;
    for (const auto& item : p.items) {
      if (const auto* s = std::get_if<LineSeries>(&item)) {
        for (size_t i = 0; i < std::min(s->x.size(), s->y.size()); ++i) {
          if (!std::isfinite(s->y[i]) || (p.y.log && s->y[i] <= 0)) continue;
          const PointXY q = data_to_points(p, box, s->x[i], s->y[i]);
          covered += r.contains(q.x, q.y);
          // Segments matter too: sample the midpoint to the next point.
          if (i + 1 < s->x.size() && std::isfinite(s->y[i + 1]) && !(p.y.log && s->y[i + 1] <= 0)) {
            const PointXY q2 = data_to_points(p, box, s->x[i + 1], s->y[i + 1]);
            covered += r.contains((q.x + q2.x) / 2, (q.y + q2.y) / 2);
          }
        }
      } else if (const auto* b = std::get_if<BarSeries>(&item)) {
        for (size_t i = 0; i < std::min(b->x.size(), b->height.size()); ++i) {
          const PointXY q = data_to_points(p, box, b->x[i], b->height[i]);
          const PointXY q0 = data_to_points(p, box, b->x[i], p.y.log ? p.y.min : 0.0);
          covered += r.contains(q.x, q.y) || r.contains(q.x, (q.y + q0.y) / 2) ? 4 : 0;
        }
      }
    }
    if (covered < best) {
      best = covered;
      x = cx;
      y = cy;
    }
  }
  cairo_t* cr = t.cr;
  cairo_rectangle(cr, x, y, bw, bh);
  set_color(cr, Color{1, 1, 1, 0.85});
  cairo_fill_preserve(cr);
  set_color(cr, Color{0.8, 0.8, 0.8, 1});
  cairo_set_line_width(cr, 0.6);
  cairo_stroke(cr);
  for (size_t i = 0; i < entries.size(); ++i) {
    const double cy = y + m.pad * 0.5 + row * (i + 0.5);
    const double sx = x + m.pad;
    set_color(cr, entries[i].color);
    if (entries[i].bar) {
      cairo_rectangle(cr, sx, cy - fs * 0.35, sample, fs * 0.7);
      cairo_fill(cr);
    } else {
      if (entries[i].line) {
        const double dash[2] = {3.7, 1.6};
        cairo_set_dash(cr, dash, entries[i].dashed ? 2 : 0, 0);
        line(cr, sx, cy, sx + sample, cy);
        cairo_set_line_width(cr, 1.25);
        cairo_stroke(cr);
        cairo_set_dash(cr, nullptr, 0, 0);
      }
      if (entries[i].marker) {
        cairo_new_sub_path(cr);
        cairo_arc(cr, sx + sample / 2, cy, entries[i].marker_pt / 2, 0, 2 * M_PI);
        cairo_fill(cr);
      }
    }
    draw_text(t, entries[i].label, sx + sample + m.pad * 0.6, cy, fs, 0, 0.35);
  }
}

void draw_panel(DrawTarget& t, const Figure& f, const style::Metrics& m, const Panel& p,
                const PanelLayout& box) {
  cairo_t* cr = t.cr;
  const Rect& r = box.plot;
  // Grid lines under the data.
  if (p.grid) {
    for (double v : box.xticks.at) {
      const PointXY q = data_to_points(p, box, v, p.y.min);
      line(cr, q.x, r.y, q.x, r.y + r.h);
    }
    for (double v : box.yticks.at) {
      const PointXY q = data_to_points(p, box, p.x.min, v);
      line(cr, r.x, q.y, r.x + r.w, q.y);
    }
    set_color(cr, Color{0.88, 0.88, 0.88, 1});
    cairo_set_line_width(cr, 0.5);
    cairo_stroke(cr);
  }
  cairo_save(cr);
  cairo_rectangle(cr, r.x, r.y, r.w, r.h);
  cairo_clip(cr);
  for (const auto& item : p.items) draw_item(t, f, p, box, item);
  cairo_restore(cr);
  // Frame and ticks (matplotlib's classic look: all four spines, ticks outside).
  if (!p.image || p.x.show || p.y.show) {
    cairo_rectangle(cr, r.x, r.y, r.w, r.h);
    set_color(cr, kBlack);
    cairo_set_line_width(cr, style::kSpineWidth);
    cairo_stroke(cr);
  }
  for (size_t i = 0; i < box.xticks.at.size(); ++i) {
    const double x = data_to_points(p, box, box.xticks.at[i], p.y.min).x;
    line(cr, x, r.y + r.h, x, r.y + r.h + m.tick_len);
    draw_text(t, box.xticks.labels[i], x, r.y + r.h + m.tick_len + 2 + m.tick_pt * 0.8, m.tick_pt,
              0.5, 0);
  }
  for (size_t i = 0; i < box.yticks.at.size(); ++i) {
    const double y = data_to_points(p, box, p.x.min, box.yticks.at[i]).y;
    line(cr, r.x - m.tick_len, y, r.x, y);
    draw_text(t, box.yticks.labels[i], r.x - m.tick_len - 2, y, m.tick_pt, 1, 0.35);
  }
  set_color(cr, kBlack);
  cairo_set_line_width(cr, style::kTickWidth);
  cairo_stroke(cr);
  if (p.x.show)
    draw_text(t, p.x.label, r.x + r.w / 2,
              r.y + r.h + m.tick_len + 2 + m.line_h + m.label_pt * 0.85, m.label_pt, 0.5, 0);
  if (p.y.show)
    draw_text(t, p.y.label, box.cell.x + m.pad * 0.6 + m.line_h * 0.5, r.y + r.h / 2, m.label_pt,
              0.5, 0.35, false, true);
  if (!p.title.empty()) draw_panel_title(t, m, p.title, box);
  if (p.legend) draw_legend(t, m, p, box);
  if (p.colorbar) draw_colorbar(t, m, *p.colorbar, Rect{r.x + r.w + m.pad, r.y, m.colorbar_w, r.h});
}

}  // namespace

ImageSurfaces::~ImageSurfaces() {
  for (const Entry& e : entries_) cairo_surface_destroy(e.surface);
}

cairo_surface_t* ImageSurfaces::surface_for(const RgbaImage& image) {
  for (const Entry& e : entries_)  // the same picture object (shared by panels)
    if (e.image == &image) return e.surface;
  // FNV-1a over the size and pixels: equal pictures (the same photo under every panel)
  // find one surface; a hash match is confirmed byte for byte.
  uint64_t hash = 1469598103934665603ull;
  const auto mix = [&hash](uint64_t v) { hash = (hash ^ v) * 1099511628211ull; };
  mix(uint64_t(image.width));
  mix(uint64_t(image.height));
  const size_t n = image.rgba.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, image.rgba.data() + i, 8);
    mix(word);
  }
  for (; i < n; ++i) mix(image.rgba[i]);
  for (const Entry& e : entries_)
    if (e.hash == hash && e.image->width == image.width && e.image->height == image.height &&
        e.image->rgba == image.rgba)
      return e.surface;
  entries_.push_back({hash, &image, surface_from_rgba(image)});
  return entries_.back().surface;
}

void draw_figure(DrawTarget& t, const Figure& f) {
  const FigureLayout L = layout_figure(f);
  const style::Metrics m(f.font_pt);
  cairo_t* cr = t.cr;
  cairo_font_options_t* fo = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
  cairo_set_font_options(cr, fo);
  cairo_font_options_destroy(fo);
  if (!f.transparent) {
    // The whole surface, not width x height points: a raster's last row and column,
    // partly covered when the size in pixels is rounded up, are white too (the screen
    // shows the texture over the window's background).
    set_color(cr, kWhite);
    cairo_paint(cr);
  }
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
  if (L.title.h > 0)
    draw_text(t, f.title, L.width_pt / 2, L.title.y + m.figure_title_pt,
              fitting_size(f.title, m.figure_title_pt, L.width_pt - 2 * m.pad, true), 0.5, 0, true);
  const int cols = std::max(1, f.cols);
  for (size_t i = 0; i < f.panels.size(); ++i) {
    const PanelLayout& box = L.panels[i];
    const int r = int(i) / cols, c = int(i) % cols;
    if (r == 0 && size_t(c) < f.col_labels.size()) {
      const double y = box.cell.y - m.line_h * 0.35;
      draw_text(t, f.col_labels[size_t(c)], box.plot.x + box.plot.w / 2, y,
                fitting_size(f.col_labels[size_t(c)], m.header_pt, box.cell.w - m.pad, true), 0.5,
                0, true);
    }
    if (c == 0 && size_t(r) < f.row_labels.size())
      draw_text(t, f.row_labels[size_t(r)], box.cell.x - m.line_h * 0.55,
                box.plot.y + box.plot.h / 2, m.header_pt, 0.5, 0.35, true, true);
    draw_panel(t, f, m, f.panels[i], box);
  }
  if (f.colorbar && L.colorbar.w > 0) draw_colorbar(t, m, *f.colorbar, L.colorbar);
}

}  // namespace attnlab::viz
