// What the figure tests share: PNG decoding (through cairo, which wrote it), a pixel
// difference metric, temporary folders and running the command-line checkers.
#pragma once

#include <cairo.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"
#include "viz/rgba_image.h"

namespace attnlab::viz::testing {

// Decodes a PNG file; alpha is un-premultiplied exactly as the renderer does.
inline RgbaImage read_png(const std::string& path) {
  RgbaImage img;
  cairo_surface_t* s = cairo_image_surface_create_from_png(path.c_str());
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(s);
    return img;
  }
  cairo_surface_t* argb = cairo_image_surface_create(
      CAIRO_FORMAT_ARGB32, cairo_image_surface_get_width(s), cairo_image_surface_get_height(s));
  cairo_t* cr = cairo_create(argb);
  cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
  cairo_set_source_surface(cr, s, 0, 0);
  cairo_paint(cr);
  cairo_destroy(cr);
  cairo_surface_flush(argb);
  img.width = cairo_image_surface_get_width(argb);
  img.height = cairo_image_surface_get_height(argb);
  img.rgba.resize(size_t(img.width) * img.height * 4);
  const unsigned char* data = cairo_image_surface_get_data(argb);
  const int stride = cairo_image_surface_get_stride(argb);
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      const uint32_t p = reinterpret_cast<const uint32_t*>(data + size_t(y) * stride)[x];
      const uint32_t a = p >> 24;
      const auto un = [a](uint32_t c) { return a == 0 ? 0u : (c * 255 + a / 2) / a; };
      uint8_t* o = &img.rgba[(size_t(y) * img.width + x) * 4];
      o[0] = uint8_t(un((p >> 16) & 0xFF));
      o[1] = uint8_t(un((p >> 8) & 0xFF));
      o[2] = uint8_t(un(p & 0xFF));
      o[3] = uint8_t(a);
    }
  cairo_surface_destroy(argb);
  cairo_surface_destroy(s);
  return img;
}

struct PixelDifference {
  double mean_abs = 0;     // mean |a - b| over all channels, in 0..255 levels
  double share_large = 0;  // share of pixels with a channel differing by more than 64
};
inline PixelDifference compare_images(const RgbaImage& a, const RgbaImage& b) {
  PixelDifference d;
  if (a.width != b.width || a.height != b.height) return PixelDifference{255, 1};
  double sum = 0;
  size_t large = 0;
  for (size_t i = 0; i < a.pixel_count(); ++i) {
    int worst = 0;
    for (int c = 0; c < 4; ++c) {
      const int diff = std::abs(int(a.rgba[i * 4 + c]) - int(b.rgba[i * 4 + c]));
      sum += diff;
      worst = std::max(worst, diff);
    }
    large += worst > 64;
  }
  d.mean_abs = sum / (4.0 * double(a.pixel_count()));
  d.share_large = double(large) / double(a.pixel_count());
  return d;
}

// The shared helper (tests/support/temp_path.h): unique to the process and the test.
inline std::filesystem::path temp_dir(const std::string& name) {
  return attnlab::testing::fresh_temp_dir(name);
}

// Runs a shell command and returns its standard output (empty on failure).
inline std::string run_output(const std::string& command, int* status = nullptr) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = ::pclose(p);
  if (status) *status = st;
  return out;
}

using attnlab::testing::read_text;

inline bool have_program(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace attnlab::viz::testing
