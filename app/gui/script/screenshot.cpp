// glReadPixels -> rows flipped top-down -> io::save_png (atomic); see screenshot.h.
#include "app/gui/script/screenshot.h"

#include <GL/gl.h>

#include <algorithm>
#include <exception>
#include <vector>

#include "core/io/image_io.h"

namespace attnlab::gui {

bool save_framebuffer_png(int width, int height, const std::string& path, std::string* error,
                          const PixelRect* crop) {
  if (width <= 0 || height <= 0) {
    *error =
        "the framebuffer is empty (" + std::to_string(width) + " x " + std::to_string(height) + ")";
    return false;
  }
  const size_t row = size_t(width) * 3;
  std::vector<uint8_t> rgb(row * size_t(height));
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);  // rows of width * 3 bytes, no padding
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, rgb.data());
  if (const GLenum gl_error = glGetError(); gl_error != GL_NO_ERROR) {
    *error = "glReadPixels failed (GL error " + std::to_string(gl_error) + ")";
    return false;
  }

  // GL's rows run bottom-up: flip, then core's PNG writer (atomic: no partial file).
  std::vector<uint8_t> top_down(rgb.size());
  for (int y = 0; y < height; ++y)
    std::copy_n(rgb.data() + size_t(height - 1 - y) * row, row, top_down.data() + size_t(y) * row);
  if (crop) {
    const int x0 = std::clamp(crop->x, 0, width), y0 = std::clamp(crop->y, 0, height);
    const int w = std::clamp(crop->w, 0, width - x0), h = std::clamp(crop->h, 0, height - y0);
    if (w <= 0 || h <= 0) {
      *error = "the region to save lies outside the window";
      return false;
    }
    std::vector<uint8_t> part(size_t(w) * 3 * size_t(h));
    for (int y = 0; y < h; ++y)
      std::copy_n(top_down.data() + size_t(y0 + y) * row + size_t(x0) * 3, size_t(w) * 3,
                  part.data() + size_t(y) * size_t(w) * 3);
    top_down = std::move(part);
    width = w;
    height = h;
  }
  try {
    io::save_png(path, width, height, 3, top_down.data());
  } catch (const std::exception& e) {
    *error = std::string("cannot write the screenshot: ") + e.what();
    return false;
  }
  return true;
}

}  // namespace attnlab::gui
