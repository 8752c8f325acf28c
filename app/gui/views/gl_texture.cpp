// GL texture upload for images shown in the GUI; see gl_texture.h.
#include "app/gui/views/gl_texture.h"

#include <GL/gl.h>
#include <GL/glext.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace attnlab::gui {

namespace {

// The next mip level of a `channels`-byte-per-pixel image: each pixel the mean of a 2x2
// block (edge pixels repeat on odd sizes).
std::vector<uint8_t> half_size(const uint8_t* src, int w, int h, int channels, int* out_w,
                               int* out_h) {
  const int nw = std::max(1, w / 2), nh = std::max(1, h / 2);
  std::vector<uint8_t> dst(size_t(nw) * nh * channels);
  for (int y = 0; y < nh; ++y) {
    const uint8_t* r0 = src + size_t(std::min(2 * y, h - 1)) * w * channels;
    const uint8_t* r1 = src + size_t(std::min(2 * y + 1, h - 1)) * w * channels;
    uint8_t* out = dst.data() + size_t(y) * nw * channels;
    for (int x = 0; x < nw; ++x) {
      const int x0 = std::min(2 * x, w - 1) * channels, x1 = std::min(2 * x + 1, w - 1) * channels;
      for (int c = 0; c < channels; ++c)
        out[x * channels + c] =
            uint8_t((r0[x0 + c] + r0[x1 + c] + r1[x0 + c] + r1[x1 + c] + 2) / 4);
    }
  }
  *out_w = nw;
  *out_h = nh;
  return dst;
}

}  // namespace

GlTexture::~GlTexture() {
  reset();
}

GlTexture::GlTexture(GlTexture&& other) noexcept
    : id_(std::exchange(other.id_, 0u)),
      width_(std::exchange(other.width_, 0)),
      height_(std::exchange(other.height_, 0)) {}

GlTexture& GlTexture::operator=(GlTexture&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, 0u);
    width_ = std::exchange(other.width_, 0);
    height_ = std::exchange(other.height_, 0);
  }
  return *this;
}

void GlTexture::reset() {
  if (id_ != 0) {
    const GLuint name = id_;
    glDeleteTextures(1, &name);
  }
  id_ = 0;
  width_ = height_ = 0;
}

bool GlTexture::upload_rgb(const uint8_t* rgb, int width, int height, std::string* error) {
  return upload(rgb, width, height, false, false, error);
}

bool GlTexture::upload_rgba(const uint8_t* rgba, int width, int height, std::string* error,
                            bool smooth) {
  return upload(rgba, width, height, true, smooth, error);
}

bool GlTexture::upload(const uint8_t* pixels, int width, int height, bool alpha, bool smooth,
                       std::string* error) {
  GLint max_size = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
  if (width <= 0 || height <= 0 || width > max_size || height > max_size) {
    if (error != nullptr) {
      *error = "cannot display a " + std::to_string(width) + " x " + std::to_string(height) +
               " image: this GPU's textures are limited to " + std::to_string(max_size) +
               " px per side";
    }
    return false;
  }
  reset();
  GLuint name = 0;
  glGenTextures(1, &name);
  id_ = name;
  width_ = width;
  height_ = height;
  glBindTexture(GL_TEXTURE_2D, name);
  // Pictures: magnify with NEAREST so that upscaled pixels (and ViT patch boundaries) stay
  // crisp, minify through mipmaps so that fine stripes do not alias into moire when
  // shrunk. Smooth textures are figures rendered at the size they are shown: plain
  // LINEAR, and no mipmaps (building them is the slowest part of an upload under
  // software GL).
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, smooth ? GL_LINEAR : GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER,
                  smooth ? GL_LINEAR : GL_LINEAR_MIPMAP_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  // RGB rows are width * 3 bytes: not 4-byte aligned in general, so say so.
  GLint old_alignment = 4;
  glGetIntegerv(GL_UNPACK_ALIGNMENT, &old_alignment);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  const GLint internal = alpha ? GL_RGBA8 : GL_RGB8;
  const GLenum format = alpha ? GL_RGBA : GL_RGB;
  glTexImage2D(GL_TEXTURE_2D, 0, internal, width, height, 0, format, GL_UNSIGNED_BYTE, pixels);
  if (!smooth) {
    // The mip chain is made here rather than by glGenerateMipmap, whose first use under
    // software GL compiles code for 50-90 ms (and again for each new texture shape).
    std::vector<uint8_t> level;
    const uint8_t* src = pixels;
    int w = width, h = height;
    for (int k = 1; w > 1 || h > 1; ++k) {
      level = half_size(src, w, h, alpha ? 4 : 3, &w, &h);
      glTexImage2D(GL_TEXTURE_2D, k, internal, w, h, 0, format, GL_UNSIGNED_BYTE, level.data());
      src = level.data();
    }
  }
  glPixelStorei(GL_UNPACK_ALIGNMENT, old_alignment);
  glBindTexture(GL_TEXTURE_2D, 0);
  return true;
}

}  // namespace attnlab::gui
