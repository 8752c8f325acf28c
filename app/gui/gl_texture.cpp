// GL texture upload for images shown in the GUI; see gl_texture.h.
#include "app/gui/gl_texture.h"

#include <GL/gl.h>
#include <GL/glext.h>

#include <utility>

namespace attnlab::gui {

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
  // Magnify with NEAREST so that upscaled pixels (and ViT patch boundaries) stay crisp
  // (figures, already at screen resolution, magnify smoothly); minify through mipmaps so
  // that fine stripes do not alias into moire when shrunk.
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, smooth ? GL_LINEAR : GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  // RGB rows are width * 3 bytes: not 4-byte aligned in general, so say so.
  GLint old_alignment = 4;
  glGetIntegerv(GL_UNPACK_ALIGNMENT, &old_alignment);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, alpha ? GL_RGBA8 : GL_RGB8, width, height, 0,
               alpha ? GL_RGBA : GL_RGB, GL_UNSIGNED_BYTE, pixels);
  glPixelStorei(GL_UNPACK_ALIGNMENT, old_alignment);
  glGenerateMipmap(GL_TEXTURE_2D);
  glBindTexture(GL_TEXTURE_2D, 0);
  return true;
}

}  // namespace attnlab::gui
