// GlTexture: owns one OpenGL 2D texture holding an 8-bit RGB(A) image, for ImGui::Image.
// Main thread only, with the GL context current (it is created, filled and deleted
// there); the pixels it is filled from are decoded on a worker thread.
#pragma once

#include <cstdint>
#include <string>

namespace attnlab::gui {

class GlTexture {
 public:
  GlTexture() = default;
  ~GlTexture();
  GlTexture(GlTexture&& other) noexcept;
  GlTexture& operator=(GlTexture&& other) noexcept;
  GlTexture(const GlTexture&) = delete;
  GlTexture& operator=(const GlTexture&) = delete;

  // Replaces the contents with width x height RGB pixels (rows top first, no padding).
  // Returns false, with the reason in *error, if the GPU cannot hold an image that big.
  bool upload_rgb(const uint8_t* rgb, int width, int height, std::string* error);
  // The same for RGBA pixels (figures, overlays), magnified smoothly and
  // without mipmaps when `smooth` (figures drawn at the size they are shown).
  bool upload_rgba(const uint8_t* rgba, int width, int height, std::string* error,
                   bool smooth = false);
  void reset();  // deletes the texture

  bool valid() const { return id_ != 0; }
  uintptr_t handle() const { return id_; }  // GL texture name, as ImTextureID wants it
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  bool upload(const uint8_t* pixels, int width, int height, bool alpha, bool smooth,
              std::string* error);
  unsigned id_ = 0;
  int width_ = 0;
  int height_ = 0;
};

}  // namespace attnlab::gui
