// Colormaps for attention maps, saliency and spectra, identical to matplotlib's.
//
// Sequential, perceptually uniform, readable in greyscale and by most colour-blind viewers:
// viridis, magma, inferno, plasma and cividis (cividis is tuned for colour-vision
// deficiency). gray is the plain black-to-white ramp. Diverging, for signed data such as
// attention differences: RdBu (red for low, blue for high, as in matplotlib) and coolwarm
// (blue for low, red for high). turbo and jet are rainbow maps, kept for comparing with
// figures made elsewhere; their lightness is not monotonic, so they can invent features.
//
// Each map is matplotlib's 256-entry table (see viz/colormap_tables.inc and
// scripts/make_colormap_tables.py), stored as the bytes matplotlib itself gives: for every
// float x, colormap_at(cm, x) has the RGBA of `matplotlib.colormaps[name](x, bytes=True)`,
// except NaN, which gets kNanColor here. No interpolation: entry int(x * 256) is taken.
// Values in, RGBA out; NaN gets its own colour so "no data" never looks like a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "viz/rgba_image.h"

namespace attnlab::viz {

enum class Colormap { Viridis, Magma, Inferno, Plasma, Cividis, Turbo, Jet, Gray, RdBu, Coolwarm };

inline constexpr Colormap kAllColormaps[] = {
    Colormap::Viridis, Colormap::Magma, Colormap::Inferno, Colormap::Plasma, Colormap::Cividis,
    Colormap::Turbo,   Colormap::Jet,   Colormap::Gray,    Colormap::RdBu,   Colormap::Coolwarm};

// Entries per map (matplotlib's default, rcParams["image.lut"]).
inline constexpr int kColormapSize = 256;

// matplotlib's names, as used on the command line: "viridis", "magma", "inferno",
// "plasma", "cividis", "turbo", "jet", "gray", "RdBu", "coolwarm".
const char* colormap_name(Colormap cm);
// The map named `name`, ignoring ASCII case ("RdBu", "rdbu" and "RDBU" all work).
std::optional<Colormap> colormap_from_name(std::string_view name);

// True for the maps with a neutral middle (RdBu, coolwarm): give them a value range
// symmetric about the neutral value, e.g. [-m, m].
bool colormap_is_diverging(Colormap cm);

struct Rgba8 {
  uint8_t r, g, b, a;
};

// NaN: mid grey, fully transparent. Overlays show the image underneath; viewers that
// ignore alpha show neutral grey (the gray map's middle entry is the same grey, but opaque).
// matplotlib's own "bad" colour is transparent black; this one is ours.
inline constexpr Rgba8 kNanColor{128, 128, 128, 0};

// Entry `index` of the map's table, index clamped to [0, kColormapSize); opaque.
// E.g. for drawing a colour bar one entry per pixel.
Rgba8 colormap_entry(Colormap cm, int index);

// Colour at position t of the map, exactly as matplotlib's Colormap.__call__ picks it for a
// float: entry int(t * 256) for t in [0, 1), the last entry for t == 1, and matplotlib's
// default under/over colours (the end entries) for t < 0 and t > 1, infinities included.
// NaN gives kNanColor. Opaque otherwise.
Rgba8 colormap_at(Colormap cm, float t);

// Maps values[0..n) linearly from [vmin, vmax] onto the map and writes n RGBA pixels
// (4 * n bytes) to rgba_out: pixel i is colormap_at of (values[i] - vmin) / (vmax - vmin),
// with that fraction computed (and looked up) in double, like matplotlib's Normalize for
// float64 data followed by the map. Values outside the range clamp to the ends (infinities
// included); NaN becomes kNanColor; all other pixels are opaque. A degenerate range
// (vmax <= vmin, or a non-finite bound) maps every non-NaN value to the middle of the map,
// colormap_at(cm, 0.5). For diverging maps pass a range symmetric about the neutral value.
void apply_colormap(const float* values, int n, float vmin, float vmax, Colormap cm,
                    uint8_t* rgba_out);

// The same for a width x height map (row-major, top row first).
RgbaImage colormap_image(const float* values, int width, int height, float vmin, float vmax,
                         Colormap cm);

}  // namespace attnlab::viz
