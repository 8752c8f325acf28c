// RgbaImage: the pixel buffer viz hands to its users (GUI textures, PNG export).
// 8-bit RGBA with straight (not premultiplied) alpha, so an overlay can be blended over
// an image by whoever draws it, and transparent pixels (e.g. NaN in a colormapped map)
// keep a meaningful colour when alpha is ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnlab::viz {

struct RgbaImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;  // height * width * 4, row-major, top row first, R G B A

  bool empty() const { return width <= 0 || height <= 0; }
  size_t pixel_count() const { return empty() ? 0 : size_t(width) * size_t(height); }
};

}  // namespace attnlab::viz
