// Perceptual colormaps for attention maps, saliency and spectra: viridis and magma
// (sequential, perceptually uniform, readable in greyscale and by most colour-blind
// viewers) and coolwarm (diverging, for signed data such as attention differences).
// Values in, RGBA out; NaN gets its own colour so "no data" never looks like a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "viz/rgba_image.h"

namespace attnlab::viz {

enum class Colormap { Viridis, Magma, Coolwarm };

inline constexpr Colormap kAllColormaps[] = {Colormap::Viridis, Colormap::Magma,
                                             Colormap::Coolwarm};

// Lower-case names ("viridis", "magma", "coolwarm"), as used on the command line.
const char* colormap_name(Colormap cm);
std::optional<Colormap> colormap_from_name(std::string_view name);

struct Rgba8 {
  uint8_t r, g, b, a;
};

// NaN: mid grey, fully transparent. Overlays show the image underneath; viewers that
// ignore alpha show neutral grey, which none of the maps above produce exactly.
inline constexpr Rgba8 kNanColor{128, 128, 128, 0};

// Colour at position t of the map: t is clamped to [0, 1]; NaN gives kNanColor.
Rgba8 colormap_at(Colormap cm, float t);

// Maps values[0..n) linearly from [vmin, vmax] onto the map and writes n RGBA pixels
// (4 * n bytes) to rgba_out. Values outside the range clamp to the ends (infinities
// included); NaN becomes kNanColor; all other pixels are opaque. A degenerate range
// (vmax <= vmin, or a non-finite bound) maps every non-NaN value to the middle of the map.
// For the diverging map pass a range symmetric about the neutral value, e.g. [-m, m].
void apply_colormap(const float* values, int n, float vmin, float vmax, Colormap cm,
                    uint8_t* rgba_out);

// The same for a width x height map (row-major, top row first).
RgbaImage colormap_image(const float* values, int width, int height, float vmin, float vmax,
                         Colormap cm);

}  // namespace attnlab::viz
