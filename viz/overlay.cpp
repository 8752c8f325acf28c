// Heatmap overlays: normalisation, upsampling and blending of per-token maps.
#include "viz/overlay.h"

#include <algorithm>
#include <cmath>

namespace attnlab::viz {

const char* normalisation_name(MapNormalisation n) {
  switch (n) {
    case MapNormalisation::MinMax:
      return "min-max";
    case MapNormalisation::DivideByMax:
      return "divide-by-max";
    case MapNormalisation::Shared:
      return "shared range";
  }
  return "?";
}

ValueRange map_range(const float* values, size_t n, MapNormalisation norm, ValueRange shared) {
  if (norm == MapNormalisation::Shared) return shared;
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(values[i])) continue;
    lo = std::min(lo, double(values[i]));
    hi = std::max(hi, double(values[i]));
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) return ValueRange{0, 1};
  return norm == MapNormalisation::DivideByMax ? ValueRange{0, hi} : ValueRange{lo, hi};
}

ValueRange union_range(const std::vector<const std::vector<float>*>& maps, bool from_zero) {
  ValueRange r{INFINITY, -INFINITY};
  for (const auto* m : maps) {
    if (!m || m->empty()) continue;
    const ValueRange one = map_range(m->data(), m->size(), MapNormalisation::MinMax);
    r.lo = std::min(r.lo, one.lo);
    r.hi = std::max(r.hi, one.hi);
  }
  if (!std::isfinite(r.lo)) return ValueRange{0, 1};
  if (from_zero) r.lo = std::min(0.0, r.lo);
  return r;
}

ValueRange symmetric_if_signed(ValueRange r) {
  if (r.lo >= 0) return r;
  const double m = std::max(-r.lo, r.hi);
  return ValueRange{-m, m};
}

Colormap signed_colormap(Colormap chosen) {
  return colormap_is_diverging(chosen) ? chosen : Colormap::Coolwarm;
}

std::vector<float> upsample_map(const float* values, int rows, int cols, int out_h, int out_w,
                                Upsample mode) {
  std::vector<float> out(size_t(out_h) * size_t(out_w));
  if (rows <= 0 || cols <= 0 || out_h <= 0 || out_w <= 0) return out;
  // Per output column (and row): the two source cells and the weight of the second.
  // Nearest is the bilinear form with weight 0 on the cell containing the pixel centre.
  struct Tap {
    int i0, i1;
    float w;
  };
  const auto taps = [mode](int n_in, int n_out) {
    std::vector<Tap> t(static_cast<size_t>(n_out));
    const double scale = double(n_in) / n_out;
    for (int o = 0; o < n_out; ++o) {
      if (mode == Upsample::Nearest) {
        const int i = std::min(n_in - 1, int((o + 0.5) * scale));
        t[size_t(o)] = Tap{i, i, 0.f};
      } else {
        const double f = std::clamp((o + 0.5) * scale - 0.5, 0.0, double(n_in - 1));
        const int i0 = int(f);
        t[size_t(o)] = Tap{i0, std::min(n_in - 1, i0 + 1), float(f - i0)};
      }
    }
    return t;
  };
  const std::vector<Tap> ty = taps(rows, out_h), tx = taps(cols, out_w);
  for (int y = 0; y < out_h; ++y) {
    const Tap& r = ty[size_t(y)];
    const float* row0 = values + size_t(r.i0) * cols;
    const float* row1 = values + size_t(r.i1) * cols;
    float* o = out.data() + size_t(y) * out_w;
    for (int x = 0; x < out_w; ++x) {
      const Tap& c = tx[size_t(x)];
      const float top = row0[c.i0] + c.w * (row0[c.i1] - row0[c.i0]);
      const float bottom = row1[c.i0] + c.w * (row1[c.i1] - row1[c.i0]);
      o[x] = top + r.w * (bottom - top);
    }
  }
  return out;
}

RgbaImage scale_image_nearest(const RgbaImage& image, int scale) {
  if (scale <= 1) return image;
  RgbaImage out;
  out.width = image.width * scale;
  out.height = image.height * scale;
  out.rgba.resize(size_t(out.width) * out.height * 4);
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x)
      std::copy_n(&image.rgba[(size_t(y / scale) * image.width + x / scale) * 4], 4,
                  &out.rgba[(size_t(y) * out.width + x) * 4]);
  return out;
}

RgbaImage greyscale(const RgbaImage& image) {
  RgbaImage out = image;
  for (size_t i = 0; i + 3 < out.rgba.size(); i += 4) {
    // ITU-R BT.601 luma in fixed point (weights * 1000), rounded.
    const auto l = uint8_t(
        (299u * out.rgba[i] + 587u * out.rgba[i + 1] + 114u * out.rgba[i + 2] + 500u) / 1000u);
    out.rgba[i] = out.rgba[i + 1] = out.rgba[i + 2] = l;
  }
  return out;
}

int upscale_factor(const RgbaImage& image, int min_side) {
  const int side = std::max(1, std::max(image.width, image.height));
  return std::max(1, (min_side + side - 1) / side);
}

RgbaImage overlay_map(const RgbaImage& image, const float* map, int rows, int cols,
                      ValueRange range, const OverlayStyle& style) {
  RgbaImage out = style.grey_background ? greyscale(image) : image;
  if (out.empty() || rows <= 0 || cols <= 0) return out;
  const std::vector<float> up =
      upsample_map(map, rows, cols, out.height, out.width, style.upsample);
  std::vector<uint8_t> colours(up.size() * 4);
  apply_colormap(up.data(), int(up.size()), float(range.lo), float(range.hi), style.cmap,
                 colours.data());
  const float a = float(std::clamp(style.alpha, 0.0, 1.0));
  for (size_t i = 0; i < up.size(); ++i) {
    const float ai = a * float(colours[i * 4 + 3]) / 255.f;  // NaN cells are transparent
    for (size_t ch = 0; ch < 3; ++ch) {
      const float v = (1 - ai) * float(out.rgba[i * 4 + ch]) + ai * float(colours[i * 4 + ch]);
      out.rgba[i * 4 + ch] = uint8_t(v + 0.5f);  // v is in [0, 255]: rounds to nearest
    }
    out.rgba[i * 4 + 3] = 255;
  }
  return out;
}

Panel image_panel(RgbaImage picture, std::string title) {
  return image_panel(std::make_shared<const RgbaImage>(std::move(picture)), std::move(title));
}

Panel image_panel(std::shared_ptr<const RgbaImage> picture, std::string title) {
  Panel p;
  p.image = true;
  p.title = std::move(title);
  p.x.show = p.y.show = false;
  p.x.min = p.y.min = 0;
  p.x.max = picture ? picture->width : 0;
  p.y.max = picture ? picture->height : 0;
  ImageLayer layer;
  layer.x1 = p.x.max;
  layer.y1 = p.y.max;
  layer.image = std::move(picture);
  p.items.emplace_back(std::move(layer));
  return p;
}

void add_map_layer(Panel& panel, const float* map, int rows, int cols, ValueRange range,
                   const OverlayStyle& style) {
  HeatmapLayer h;
  h.rows = rows;
  h.cols = cols;
  h.values.assign(map, map + size_t(rows) * size_t(cols));
  h.cmap = style.cmap;
  h.vmin = range.lo;
  h.vmax = range.hi;
  h.upsample = style.upsample;
  h.x0 = panel.x.min;
  h.x1 = panel.x.max;
  h.y0 = panel.y.min;
  h.y1 = panel.y.max;
  h.alpha = std::clamp(style.alpha, 0.0, 1.0);
  panel.items.emplace_back(std::move(h));
}

void add_token_grid(Panel& panel, int rows, int cols, Color color, double width_pt) {
  GridLines g;
  g.x0 = panel.x.min;
  g.x1 = panel.x.max;
  g.y0 = panel.y.min;
  g.y1 = panel.y.max;
  g.rows = rows;
  g.cols = cols;
  g.color = color;
  g.width_pt = width_pt;
  panel.items.emplace_back(g);
}

void add_query_marker(Panel& panel, int rows, int cols, int row, int col) {
  const double cw = (panel.x.max - panel.x.min) / cols, ch = (panel.y.max - panel.y.min) / rows;
  RectOutline r;
  r.x0 = panel.x.min + col * cw;
  r.x1 = r.x0 + cw;
  r.y0 = panel.y.min + row * ch;
  r.y1 = r.y0 + ch;
  r.color = Color{1.0, 0.1, 0.1, 1};
  r.width_pt = 1.2;
  panel.items.emplace_back(r);
}

}  // namespace attnlab::viz
