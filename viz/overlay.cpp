// Heatmap overlays: normalisation, upsampling and blending of per-token maps.
#include "viz/overlay.h"

#include <algorithm>
#include <cmath>

namespace attnlab::viz {

const char* normalisation_name(MapNormalisation n) {
  switch (n) {
    case MapNormalisation::MinMax: return "min-max";
    case MapNormalisation::DivideByMax: return "divide-by-max";
    case MapNormalisation::Shared: return "shared range";
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

std::vector<float> upsample_map(const float* values, int rows, int cols, int out_h, int out_w,
                                Upsample mode) {
  std::vector<float> out(size_t(out_h) * size_t(out_w));
  const double sy = double(rows) / out_h, sx = double(cols) / out_w;
  for (int y = 0; y < out_h; ++y) {
    for (int x = 0; x < out_w; ++x) {
      float v;
      if (mode == Upsample::Nearest) {
        const int r = std::min(rows - 1, int((y + 0.5) * sy)), c = std::min(cols - 1, int((x + 0.5) * sx));
        v = values[size_t(r) * cols + c];
      } else {
        const double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, double(rows - 1));
        const double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, double(cols - 1));
        const int r0 = int(fy), c0 = int(fx);
        const int r1 = std::min(rows - 1, r0 + 1), c1 = std::min(cols - 1, c0 + 1);
        const double wy = fy - r0, wx = fx - c0;
        const auto at = [&](int r, int c) { return double(values[size_t(r) * cols + c]); };
        v = float((1 - wy) * ((1 - wx) * at(r0, c0) + wx * at(r0, c1)) +
                  wy * ((1 - wx) * at(r1, c0) + wx * at(r1, c1)));
      }
      out[size_t(y) * out_w + x] = v;
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
    const auto l = uint8_t(std::lround(0.299 * out.rgba[i] + 0.587 * out.rgba[i + 1] +
                                       0.114 * out.rgba[i + 2]));
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
  const std::vector<float> up = upsample_map(map, rows, cols, out.height, out.width, style.upsample);
  std::vector<uint8_t> colours(up.size() * 4);
  apply_colormap(up.data(), int(up.size()), float(range.lo), float(range.hi), style.cmap,
                 colours.data());
  const double a = std::clamp(style.alpha, 0.0, 1.0);
  for (size_t i = 0; i < up.size(); ++i) {
    const double ai = a * colours[i * 4 + 3] / 255.0;  // NaN cells are transparent
    for (int ch = 0; ch < 3; ++ch) {
      const double v = (1 - ai) * out.rgba[i * 4 + ch] + ai * colours[i * 4 + ch];
      out.rgba[i * 4 + ch] = uint8_t(std::lround(v));
    }
    out.rgba[i * 4 + 3] = 255;
  }
  return out;
}

Panel image_panel(RgbaImage picture, std::string title) {
  Panel p;
  p.image = true;
  p.title = std::move(title);
  p.x.show = p.y.show = false;
  p.x.min = p.y.min = 0;
  p.x.max = picture.width;
  p.y.max = picture.height;
  ImageLayer layer;
  layer.x1 = picture.width;
  layer.y1 = picture.height;
  layer.image = std::move(picture);
  p.items.emplace_back(std::move(layer));
  return p;
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
