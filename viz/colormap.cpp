// Colormap lookup: each map is matplotlib's 256-entry table, stored as the bytes
// matplotlib gives for it (viz/colormap_tables.inc, written by
// scripts/make_colormap_tables.py; the file lists where each map comes from and its
// licence). A value picks an entry exactly as matplotlib's Colormap.__call__ does for
// floats, so the colours are identical to matplotlib's, not approximations of them.
#include "viz/colormap.h"

#include <cmath>
#include <cstddef>

namespace attnlab::viz {
namespace {

#include "viz/colormap_tables.inc"

static_assert(sizeof(kViridis) / sizeof(kViridis[0]) == kColormapSize,
              "colormap_tables.inc and kColormapSize disagree");

const uint32_t* table_of(Colormap cm) {
  switch (cm) {
    case Colormap::Viridis:
      return kViridis;
    case Colormap::Magma:
      return kMagma;
    case Colormap::Inferno:
      return kInferno;
    case Colormap::Plasma:
      return kPlasma;
    case Colormap::Cividis:
      return kCividis;
    case Colormap::Turbo:
      return kTurbo;
    case Colormap::Jet:
      return kJet;
    case Colormap::Gray:
      return kGray;
    case Colormap::RdBu:
      return kRdBu;
    case Colormap::Coolwarm:
      return kCoolwarm;
  }
  return kViridis;  // unreachable for valid enum values; keeps -Wreturn-type quiet
}

Rgba8 unpack(uint32_t rgb) {
  return {uint8_t(rgb >> 16), uint8_t(rgb >> 8), uint8_t(rgb), 255};
}

// matplotlib's float lookup, for a non-NaN t: t * N truncated to an index, with t == 1
// (index N) folded onto the last entry and everything below 0 / above 1 sent to the
// under / over colours, which default to the first / last entry. t * 256 is exact in
// float and double alike, so the index is the same whichever type t arrives in.
int index_of(double t) {
  if (!(t >= 0.0)) return 0;               // t < 0, -inf
  if (t >= 1.0) return kColormapSize - 1;  // t == 1, t > 1, +inf
  return int(t * double(kColormapSize));   // exact product < N, so at most N - 1
}

char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

}  // namespace

const char* colormap_name(Colormap cm) {
  switch (cm) {
    case Colormap::Viridis:
      return "viridis";
    case Colormap::Magma:
      return "magma";
    case Colormap::Inferno:
      return "inferno";
    case Colormap::Plasma:
      return "plasma";
    case Colormap::Cividis:
      return "cividis";
    case Colormap::Turbo:
      return "turbo";
    case Colormap::Jet:
      return "jet";
    case Colormap::Gray:
      return "gray";
    case Colormap::RdBu:
      return "RdBu";
    case Colormap::Coolwarm:
      return "coolwarm";
  }
  return "unknown";
}

std::optional<Colormap> colormap_from_name(std::string_view name) {
  for (Colormap cm : kAllColormaps) {
    if (equal_ignoring_case(name, colormap_name(cm))) return cm;
  }
  return std::nullopt;
}

bool colormap_is_diverging(Colormap cm) {
  return cm == Colormap::RdBu || cm == Colormap::Coolwarm;
}

Rgba8 colormap_entry(Colormap cm, int index) {
  if (index < 0) index = 0;
  if (index > kColormapSize - 1) index = kColormapSize - 1;
  return unpack(table_of(cm)[index]);
}

Rgba8 colormap_at(Colormap cm, float t) {
  if (std::isnan(t)) return kNanColor;
  return unpack(table_of(cm)[index_of(double(t))]);
}

void apply_colormap(const float* values, int n, float vmin, float vmax, Colormap cm,
                    uint8_t* rgba_out) {
  if (n <= 0) return;
  const uint32_t* table = table_of(cm);
  // In double, as matplotlib's Normalize does for float64 data: vmax - vmin can overflow
  // float for huge ranges.
  const bool degenerate = !std::isfinite(vmin) || !std::isfinite(vmax) || !(vmax > vmin);
  const double lo = double(vmin);
  const double range = double(vmax) - double(vmin);
  const Rgba8 middle = colormap_at(cm, 0.5f);
  for (int i = 0; i < n; ++i) {
    const float v = values[i];
    Rgba8 c = kNanColor;
    if (!std::isnan(v)) {
      c = degenerate ? middle : unpack(table[index_of((double(v) - lo) / range)]);
    }
    uint8_t* px = rgba_out + size_t(i) * 4;
    px[0] = c.r;
    px[1] = c.g;
    px[2] = c.b;
    px[3] = c.a;
  }
}

RgbaImage colormap_image(const float* values, int width, int height, float vmin, float vmax,
                         Colormap cm) {
  RgbaImage img;
  if (width <= 0 || height <= 0) return img;
  img.width = width;
  img.height = height;
  img.rgba.resize(img.pixel_count() * 4);
  apply_colormap(values, width * height, vmin, vmax, cm, img.rgba.data());
  return img;
}

}  // namespace attnlab::viz
