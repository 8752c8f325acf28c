// glReadPixels -> flipped BGR cv::Mat -> PNG bytes -> io::write_file_atomic; see screenshot.h.
#include "app/gui/screenshot.h"

#include <GL/gl.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <exception>
#include <vector>

#include "core/io/file_bytes.h"

namespace attnlab::gui {

bool save_framebuffer_png(int width, int height, const std::string& path, std::string* error) {
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

  // GL's rows run bottom-up and OpenCV wants BGR: flip and swap in one pass.
  cv::Mat bgr(height, width, CV_8UC3);
  for (int y = 0; y < height; ++y) {
    const uint8_t* src = rgb.data() + size_t(height - 1 - y) * row;
    uint8_t* dst = bgr.ptr<uint8_t>(y);
    for (int x = 0; x < width; ++x) {
      dst[3 * x + 0] = src[3 * x + 2];
      dst[3 * x + 1] = src[3 * x + 1];
      dst[3 * x + 2] = src[3 * x + 0];
    }
  }

  // Encode in memory, then core's atomic writer: no partial PNG under `path`, ever.
  std::vector<uint8_t> png;
  try {
    if (!cv::imencode(".png", bgr, png)) {
      *error = "cannot encode the screenshot as PNG";
      return false;
    }
    io::write_file_atomic(path, [&](const io::ByteSink& sink) { sink(png.data(), png.size()); });
  } catch (const std::exception& e) {
    *error = std::string("cannot write the screenshot: ") + e.what();
    return false;
  }
  return true;
}

}  // namespace attnlab::gui
