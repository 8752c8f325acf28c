// The multi-model comparison figure; see model_compare.h.
#include "viz/figures/model_compare.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "viz/figure_layout.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {
namespace {

// "[0, 0.031]": a map's own range, in its panel's header.
std::string range_text(ValueRange r) {
  return "[" + format_number(r.lo, 2) + ", " + format_number(r.hi, 2) + "]";
}

ValueRange data_range(const MapSlice& s) {
  return map_range(s.data, size_t(s.rows) * size_t(s.cols), MapNormalisation::MinMax);
}

// Orange outlines of local-attention windows (HiLo's Hi-Fi windows, Swin's windows),
// window_h rows × window_w columns, tiled from (shift, shift) when shifted; the picture's
// border cuts the wrapped ones. An axis whose windows are one cell wide gets no lines (a
// line between every cell outlines nothing).
void add_window_lines(Panel& p, int rows, int cols, int window_h, int window_w, int shift) {
  if (window_h <= 0) return;  // no windows
  const double cw = (p.x.max - p.x.min) / cols, ch = (p.y.max - p.y.min) / rows;
  const Color edge{1.0, 0.67, 0.16, 0.6};
  const auto line = [&](double x0, double y0, double x1, double y1) {
    LineSeries l;
    l.x = {x0, x1};
    l.y = {y0, y1};
    l.color = edge;
    l.width_pt = 0.8;
    p.items.emplace_back(std::move(l));
  };
  if (window_w > 1)
    for (int c = shift > 0 ? shift : window_w; c < cols; c += window_w)
      line(c * cw, p.y.min, c * cw, p.y.max);
  if (window_h > 1)
    for (int r = shift > 0 ? shift : window_h; r < rows; r += window_h)
      line(p.x.min, r * ch, p.x.max, r * ch);
}

// A panel with a sentence instead of a map (a difference that cannot be taken).
Panel note_panel(std::string title, std::string note) {
  Panel p;
  p.title = std::move(title);
  p.x.show = p.y.show = false;
  TextLabel t;
  t.x = t.y = 0.5;
  t.text = std::move(note);
  t.color = Color{0.3, 0.3, 0.3, 1};
  p.items.emplace_back(std::move(t));
  return p;
}

}  // namespace

const char* compare_scale_name(CompareScale s) {
  return s == CompareScale::Shared ? "shared" : "per-panel";
}

std::optional<CompareScale> compare_scale_from_name(std::string_view name) {
  if (name == "per-panel") return CompareScale::PerPanel;
  if (name == "shared") return CompareScale::Shared;
  return std::nullopt;
}

ValueRange clipped_range(const std::vector<std::pair<const float*, size_t>>& maps,
                               double percentile, size_t* clipped) {
  std::vector<float> mags;
  double lo = INFINITY;
  for (const auto& [data, n] : maps)
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(data[i])) continue;
      mags.push_back(std::abs(data[i]));
      lo = std::min(lo, double(data[i]));
    }
  if (mags.empty()) return {};
  // The nearest-rank percentile: the smallest |w| with at least p% of the cells at or below.
  const double p = std::clamp(percentile, 0.0, 100.0) / 100.0;
  const size_t k = std::min(mags.size() - 1, size_t(std::ceil(p * double(mags.size()))) -
                                                 (p > 0 ? 1 : 0));
  std::nth_element(mags.begin(), mags.begin() + long(k), mags.end());
  double top = mags[k];
  if (top <= 0) top = *std::max_element(mags.begin(), mags.end());
  if (top <= 0) top = 1;
  const ValueRange r = lo < 0 ? ValueRange{-top, top} : ValueRange{std::min(lo, top), top};
  if (clipped) {
    *clipped = 0;
    for (const auto& [data, n] : maps)
      for (size_t i = 0; i < n; ++i)
        if (std::isfinite(data[i]) && (double(data[i]) > r.hi || double(data[i]) < r.lo))
          ++*clipped;
  }
  return r;
}

CaptionedFigure model_compare_figure(const RgbaImage& picture, const std::vector<ModelMap>& maps,
                                     const MapQuery& query, const std::string& what,
                                     const MapStyle& style, const CompareOptions& options) {
  if (maps.empty()) throw std::invalid_argument("model comparison: no maps");
  std::vector<MapSlice> slices;
  std::vector<std::pair<const float*, size_t>> cells;
  for (const auto& m : maps) {
    if (!m.map) throw std::invalid_argument("model comparison: no map for " + m.model);
    slices.push_back(map_slice(*m.map, m.index));
    cells.emplace_back(slices.back().data, size_t(slices.back().rows) * slices.back().cols);
  }
  const bool per_panel = options.scale == CompareScale::PerPanel;
  MapStyle st = style;
  size_t clipped = 0;
  ValueRange shared;
  if (!per_panel) {
    st.norm = MapNormalisation::Shared;
    shared = clipped_range(cells, options.clip_percentile, &clipped);
    if (style.norm == MapNormalisation::DivideByMax && shared.lo > 0) shared.lo = 0;
    // Implicit attention can be signed (Castling's linear-angular kernel): then a diverging
    // map centred on 0, as for any signed quantity, so that negative weight reads as such.
    if (shared.lo < 0) st.overlay.cmap = signed_colormap(st.overlay.cmap);
  }
  const auto picture_of = [&](size_t i) -> const RgbaImage& {
    return maps[i].picture ? *maps[i].picture : picture;
  };
  const auto query_on = [&](const MapSlice& s) -> std::optional<GridCell> {
    if (!query.cell) return std::nullopt;
    return map_cell(*query.cell, query.ref_rows, query.ref_cols, s.rows, s.cols);
  };

  Figure f;
  f.font_pt = 7;
  f.title = what;
  if (options.input_panel)
    f.panels.push_back(input_panel(picture_of(0), slices[0].rows, slices[0].cols,
                                   query_on(slices[0])));
  bool any_signed = false;
  for (size_t i = 0; i < maps.size(); ++i) {
    const ValueRange data = data_range(slices[i]);
    MapStyle ps = st;
    ValueRange range = shared;
    if (per_panel) {
      size_t n = 0;
      range = clipped_range({cells[i]}, options.clip_percentile, &n);
      clipped += n;
      if (style.norm == MapNormalisation::DivideByMax && range.lo > 0) range.lo = 0;
      if (range.lo < 0) ps.overlay.cmap = signed_colormap(style.overlay.cmap), any_signed = true;
    }
    Panel p = overlay_panel(picture_of(i), slices[i], range, ps, query_on(slices[i]),
                            maps[i].model + "\n" + range_text(data));
    add_window_lines(p, slices[i].rows, slices[i].cols, maps[i].window,
                     maps[i].window_w > 0 ? maps[i].window_w : maps[i].window,
                     maps[i].window_shift);
    if (per_panel) p.colorbar = ColorbarSpec{ps.overlay.cmap, range.lo, range.hi, ""};
    f.panels.push_back(std::move(p));
  }
  std::string diff_note;
  if (options.difference) {
    const auto [a, b] = *options.difference;
    if (a < 0 || b < 0 || a >= int(maps.size()) || b >= int(maps.size()))
      throw std::invalid_argument("model comparison: no such model for the difference");
    const MapSlice &sa = slices[size_t(a)], &sb = slices[size_t(b)];
    const std::string title = maps[size_t(a)].model + " − " + maps[size_t(b)].model;
    if (sa.rows != sb.rows || sa.cols != sb.cols) {
      f.panels.push_back(note_panel(title, "grids differ: " + std::to_string(sa.rows) + "×" +
                                               std::to_string(sa.cols) + " vs " +
                                               std::to_string(sb.rows) + "×" +
                                               std::to_string(sb.cols)));
      diff_note = "; " + title + " is not drawn: the two maps have different token grids";
    } else {
      std::vector<float> d(size_t(sa.rows) * size_t(sa.cols));
      for (size_t i = 0; i < d.size(); ++i) d[i] = sa.data[i] - sb.data[i];
      MapStyle ds = style;
      ds.overlay.cmap = signed_colormap(style.overlay.cmap);
      // Symmetric about 0 and topped like the maps (a query's own cell would set it).
      const ValueRange top = clipped_range({{d.data(), d.size()}}, options.clip_percentile);
      const double mx = std::max(std::abs(top.lo), std::abs(top.hi));
      const ValueRange dr{-mx, mx};
      MapSlice slice{sa.rows, sa.cols, d.data()};
      Panel p = overlay_panel(picture_of(size_t(a)), slice, dr, ds, query_on(sa),
                              title + "\n" + range_text(data_range(slice)));
      p.colorbar = ColorbarSpec{ds.overlay.cmap, dr.lo, dr.hi, ""};
      f.panels.push_back(std::move(p));
      diff_note = "; " + title + " on a diverging scale symmetric about 0, topped at the same percentile (above 0: " +
                  maps[size_t(a)].model + " gives more weight)";
    }
  }
  // The zoom: every image panel's axes cover the chosen part of its picture (the renderer
  // clips to the axes).
  if (options.view_x0 > 0 || options.view_y0 > 0 || options.view_x1 < 1 || options.view_y1 < 1)
    for (Panel& p : f.panels) {
      if (!p.image) continue;
      const double w = p.x.max, h = p.y.max;
      p.x.min = options.view_x0 * w;
      p.x.max = options.view_x1 * w;
      p.y.min = options.view_y0 * h;
      p.y.max = options.view_y1 * h;
    }
  // Rows of up to four panels with a colorbar each (five without) at the page's width, so
  // the maps stay large enough to read in print; more wrap into rows of equal length.
  const int panels = int(f.panels.size());
  const int per_row = options.max_cols > 0 ? options.max_cols : (per_panel ? 4 : 5);
  const int rows = (panels + per_row - 1) / per_row;
  f.cols = (panels + rows - 1) / rows;
  // One panel alone (the GUI's single view, the report's "map") fills a column.
  f.width_in = panels == 1 ? kColumnWidthIn
                           : std::min(kPageWidthIn, 0.6 + (per_panel ? 1.65 : 1.35) * f.cols);
  if (!per_panel) f.colorbar = ColorbarSpec{st.overlay.cmap, shared.lo, shared.hi, "attention weight"};
  f.height_in = 2.2 * rows;
  f.height_in = fitted_height_in(f);

  CaptionedFigure out{std::move(f), ""};
  std::string scale;
  if (per_panel) {
    MapStyle described = style;
    described.norm = style.norm == MapNormalisation::DivideByMax ? MapNormalisation::DivideByMax
                                                                 : MapNormalisation::MinMax;
    scale = "each map on its own colour scale (" + describe_style(described) + ", topped at its " +
            format_number(options.clip_percentile, 3) + "th percentile of |w|, so " +
            std::to_string(clipped) + " cells in all show the end colour)" +
            (any_signed ? "; signed maps on a diverging scale symmetric about 0" : "");
  } else {
    MapStyle described = st;
    described.norm = MapNormalisation::Shared;
    scale = "one colour scale (" + describe_style(described) + ") from " +
            format_number(shared.lo, 3) + " to " + format_number(shared.hi, 3) +
            ", the " + format_number(options.clip_percentile, 3) +
            "th percentile of |w| over all maps, so " + std::to_string(clipped) +
            " cells beyond it show the end colour" +
            (shared.lo < 0 ? "; some weights are negative, so the scale is symmetric about 0"
                           : "");
  }
  out.caption = what + ", for " + std::to_string(maps.size()) + " models side by side; " + scale +
                "; each header gives the map's own range" + diff_note +
                (query.cell ? "; the red square marks the query." : ".");
  return out;
}

}  // namespace attnlab::viz
