// attnlab's own PNG writer: the figure's pixels, losslessly, in the smallest colour type
// that holds them exactly (8-bit palette when a figure has at most 256 colours, RGB when
// it is opaque, RGBA otherwise), filtered row by row and compressed with libdeflate in
// one call. It replaced cairo's writer (libpng at zlib's default level; RGB or RGBA):
// docs/BENCHMARKS.md, "The figure path", has the measurements behind each choice.
#pragma once

#include <string>

#include "viz/rgba_image.h"

namespace attnlab::viz {

// How each row is filtered before compression (PNG filter type 0-4, or the usual
// per-row choice: the filter whose output has the smallest sum of absolute values).
enum class PngFilter { None, Sub, Up, Average, Paeth, Adaptive };

struct PngSettings {
  int level = 6;                          // libdeflate's 0 (stored) ... 12 (slowest, smallest)
  PngFilter filter = PngFilter::Adaptive;  // RGB and RGBA rows; palette rows are never filtered
  bool allow_palette = true;              // false: never an indexed image
  bool allow_rgb = true;                  // false: always RGBA
};

// The PNG file of `image` (straight RGBA), its resolution recorded as `dpi` (pHYs), the
// settings chosen by measurement unless given. Throws std::invalid_argument for an empty
// image or a non-positive dpi.
std::string encode_png(const RgbaImage& image, double dpi, const PngSettings& settings = {});

}  // namespace attnlab::viz
