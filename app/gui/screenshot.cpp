// glReadPixels -> flipped BGR cv::Mat -> PNG via a temp file and rename; see screenshot.h.
#include "app/gui/screenshot.h"

#include <GL/gl.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

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

  // The temp name keeps a .png extension: OpenCV picks the encoder by extension.
  const std::string tmp = path + ".tmp.png";
  try {
    if (!cv::imwrite(tmp, bgr)) {
      *error = "cannot write " + tmp;
      std::remove(tmp.c_str());
      return false;
    }
  } catch (const cv::Exception& e) {
    *error = "cannot write " + tmp + ": " + e.what();
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace attnlab::gui
