// Image loading for attnlab (OpenCV underneath): any format OpenCV decodes, returned as
// 8-bit RGB. Corrupt, unreadable or absurdly large images raise IoError with a message
// that names the file — never a crash, never an empty image returned as if valid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::io {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // height * width * 3, row-major, R G B
};

struct ImageLimits {
  int64_t max_pixels = int64_t(16384) * 16384;  // refuse larger images before decoding
};

RgbImage load_rgb_image(const std::string& path, const ImageLimits& limits = {});

// Writes `pixels` (height rows of width·channels bytes, top row first; channels 1 = grey or
// 3 = R G B) as a PNG, atomically: encoded in memory first, so a failure leaves no file.
// Throws IoError naming the file.
void save_png(const std::string& path, int width, int height, int channels, const uint8_t* pixels);

}  // namespace attnlab::io
