// Colormap lookup: each map is 33 RGB control points at t = 0, 1/32, ..., 1 with
// linear interpolation between them.
//
// Where the control points come from: viridis and magma (Nathaniel Smith and Stefan van
// der Walt, CC0) were sampled at t = k/32 from their published reference definition;
// linear interpolation between those samples stays within 2/255 of the reference on
// every channel. coolwarm (Kenneth Moreland, "Diverging Color Maps for Scientific
// Visualization", 2009) is itself defined by 33 evenly spaced points, reproduced here to
// four decimals. Interpolating in RGB between points this close is visually exact.
#include "viz/colormap.h"

#include <cmath>

namespace attnlab::viz {
namespace {

struct Rgb {
  float r, g, b;
};

constexpr int kAnchors = 33;

constexpr Rgb kViridis[kAnchors] = {
    {0.2670f, 0.0049f, 0.3294f}, {0.2770f, 0.0502f, 0.3755f}, {0.2823f, 0.0946f, 0.4170f},
    {0.2829f, 0.1354f, 0.4530f}, {0.2789f, 0.1749f, 0.4830f}, {0.2708f, 0.2133f, 0.5066f},
    {0.2593f, 0.2507f, 0.5244f}, {0.2454f, 0.2867f, 0.5370f}, {0.2302f, 0.3213f, 0.5455f},
    {0.2148f, 0.3545f, 0.5510f}, {0.2000f, 0.3864f, 0.5545f}, {0.1861f, 0.4173f, 0.5567f},
    {0.1733f, 0.4474f, 0.5579f}, {0.1613f, 0.4770f, 0.5581f}, {0.1497f, 0.5064f, 0.5573f},
    {0.1384f, 0.5358f, 0.5551f}, {0.1281f, 0.5651f, 0.5509f}, {0.1209f, 0.5945f, 0.5442f},
    {0.1203f, 0.6238f, 0.5343f}, {0.1310f, 0.6529f, 0.5208f}, {0.1554f, 0.6815f, 0.5032f},
    {0.1930f, 0.7096f, 0.4812f}, {0.2415f, 0.7366f, 0.4545f}, {0.2986f, 0.7624f, 0.4230f},
    {0.3629f, 0.7867f, 0.3866f}, {0.4330f, 0.8091f, 0.3453f}, {0.5081f, 0.8292f, 0.2992f},
    {0.5873f, 0.8470f, 0.2489f}, {0.6694f, 0.8622f, 0.1954f}, {0.7529f, 0.8751f, 0.1427f},
    {0.8359f, 0.8861f, 0.1025f}, {0.9166f, 0.8961f, 0.1008f}, {0.9932f, 0.9062f, 0.1439f},
};
constexpr Rgb kMagma[kAnchors] = {
    {0.0015f, 0.0005f, 0.0139f}, {0.0136f, 0.0117f, 0.0684f}, {0.0394f, 0.0309f, 0.1330f},
    {0.0738f, 0.0518f, 0.2018f}, {0.1124f, 0.0653f, 0.2756f}, {0.1581f, 0.0684f, 0.3512f},
    {0.2104f, 0.0622f, 0.4173f}, {0.2640f, 0.0601f, 0.4609f}, {0.3151f, 0.0712f, 0.4848f},
    {0.3643f, 0.0896f, 0.4976f}, {0.4128f, 0.1096f, 0.5045f}, {0.4614f, 0.1291f, 0.5076f},
    {0.5105f, 0.1473f, 0.5077f}, {0.5603f, 0.1645f, 0.5049f}, {0.6108f, 0.1809f, 0.4990f},
    {0.6619f, 0.1971f, 0.4895f}, {0.7132f, 0.2139f, 0.4762f}, {0.7640f, 0.2324f, 0.4590f},
    {0.8135f, 0.2542f, 0.4381f}, {0.8600f, 0.2814f, 0.4142f}, {0.9013f, 0.3165f, 0.3899f},
    {0.9348f, 0.3609f, 0.3699f}, {0.9592f, 0.4135f, 0.3599f}, {0.9755f, 0.4709f, 0.3635f},
    {0.9859f, 0.5300f, 0.3801f}, {0.9923f, 0.5891f, 0.4072f}, {0.9959f, 0.6477f, 0.4423f},
    {0.9973f, 0.7057f, 0.4835f}, {0.9970f, 0.7633f, 0.5296f}, {0.9954f, 0.8205f, 0.5798f},
    {0.9928f, 0.8776f, 0.6335f}, {0.9898f, 0.9346f, 0.6904f}, {0.9871f, 0.9914f, 0.7495f},
};
constexpr Rgb kCoolwarm[kAnchors] = {
    {0.2298f, 0.2987f, 0.7537f}, {0.2662f, 0.3531f, 0.8015f}, {0.3039f, 0.4065f, 0.8450f},
    {0.3428f, 0.4588f, 0.8837f}, {0.3830f, 0.5094f, 0.9174f}, {0.4244f, 0.5581f, 0.9456f},
    {0.4667f, 0.6046f, 0.9682f}, {0.5096f, 0.6483f, 0.9848f}, {0.5530f, 0.6889f, 0.9954f},
    {0.5963f, 0.7261f, 0.9998f}, {0.6392f, 0.7596f, 0.9982f}, {0.6813f, 0.7890f, 0.9904f},
    {0.7222f, 0.8140f, 0.9766f}, {0.7615f, 0.8343f, 0.9569f}, {0.7987f, 0.8498f, 0.9317f},
    {0.8335f, 0.8602f, 0.9011f}, {0.8654f, 0.8654f, 0.8654f}, {0.8978f, 0.8489f, 0.8209f},
    {0.9241f, 0.8274f, 0.7745f}, {0.9445f, 0.8009f, 0.7267f}, {0.9589f, 0.7698f, 0.6780f},
    {0.9673f, 0.7341f, 0.6288f}, {0.9700f, 0.6943f, 0.5794f}, {0.9668f, 0.6504f, 0.5303f},
    {0.9580f, 0.6028f, 0.4818f}, {0.9437f, 0.5518f, 0.4342f}, {0.9239f, 0.4973f, 0.3880f},
    {0.8990f, 0.4396f, 0.3432f}, {0.8692f, 0.3783f, 0.3003f}, {0.8346f, 0.3129f, 0.2593f},
    {0.7956f, 0.2413f, 0.2205f}, {0.7525f, 0.1572f, 0.1841f}, {0.7057f, 0.0156f, 0.1502f},
};

const Rgb* anchors_of(Colormap cm) {
  switch (cm) {
    case Colormap::Viridis:
      return kViridis;
    case Colormap::Magma:
      return kMagma;
    case Colormap::Coolwarm:
      return kCoolwarm;
  }
  return kViridis;  // unreachable for valid enum values; keeps -Wreturn-type quiet
}

uint8_t to_byte(float v) {
  // Anchors are in [0, 1], and so is any convex combination of them.
  return static_cast<uint8_t>(v * 255.0f + 0.5f);
}

// t must already be in [0, 1].
Rgba8 lookup(const Rgb* table, float t) {
  const float pos = t * float(kAnchors - 1);
  int i = static_cast<int>(pos);
  if (i > kAnchors - 2) i = kAnchors - 2;  // t == 1 uses the last segment's end
  const float f = pos - float(i);
  const Rgb& a = table[i];
  const Rgb& b = table[i + 1];
  return {to_byte(a.r + (b.r - a.r) * f), to_byte(a.g + (b.g - a.g) * f),
          to_byte(a.b + (b.b - a.b) * f), 255};
}

float clamp01(float t) {
  return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
}

}  // namespace

const char* colormap_name(Colormap cm) {
  switch (cm) {
    case Colormap::Viridis:
      return "viridis";
    case Colormap::Magma:
      return "magma";
    case Colormap::Coolwarm:
      return "coolwarm";
  }
  return "unknown";
}

std::optional<Colormap> colormap_from_name(std::string_view name) {
  for (Colormap cm : kAllColormaps) {
    if (name == colormap_name(cm)) return cm;
  }
  return std::nullopt;
}

Rgba8 colormap_at(Colormap cm, float t) {
  if (std::isnan(t)) return kNanColor;
  return lookup(anchors_of(cm), clamp01(t));
}

void apply_colormap(const float* values, int n, float vmin, float vmax, Colormap cm,
                    uint8_t* rgba_out) {
  if (n <= 0) return;
  const Rgb* table = anchors_of(cm);
  // The scale is computed in double: vmax - vmin can overflow float for huge ranges.
  const bool degenerate = !std::isfinite(vmin) || !std::isfinite(vmax) || !(vmax > vmin);
  const double lo = degenerate ? 0.0 : double(vmin);
  const double scale = degenerate ? 0.0 : 1.0 / (double(vmax) - double(vmin));
  for (int i = 0; i < n; ++i) {
    const float v = values[i];
    Rgba8 c = kNanColor;
    if (!std::isnan(v)) {
      const float t = degenerate ? 0.5f : clamp01(float((double(v) - lo) * scale));
      c = lookup(table, t);
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
