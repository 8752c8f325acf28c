// GL textures made from figures and overlays. Each place on screen (a "slot": the single
// map view, head 3 of the grid, the Rank tab) holds one texture and the key naming its
// content; the texture is rebuilt only when the key changes, and at most one texture is
// built per frame, so a burst of new results never makes one long frame.
// Main thread only (GL).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "app/gui/gl_texture.h"
#include "viz/figures/captioned_figure.h"
#include "viz/rgba_image.h"

namespace attnlab::gui {

class TextureCache {
 public:
  void new_frame() { builds_ = 0; }
  // The slot's texture when it shows `key`; nullptr when it is not built (yet).
  const GlTexture* find(const std::string& slot, const std::string& key) const;
  // Why building `key` failed, or nullptr.
  const std::string* error(const std::string& slot, const std::string& key) const;
  // True when this frame may build one more texture (and counts the build).
  bool claim_build();
  // Uploads `image` as the slot's texture for `key`; nullptr (with the error kept) when
  // the GPU refuses it.
  const GlTexture* store(const std::string& slot, const std::string& key,
                         const viz::RgbaImage& image, bool smooth);
  void store_error(const std::string& slot, const std::string& key, std::string message);

 private:
  struct Entry {
    std::string key;
    GlTexture texture;
    std::string error;
  };
  std::map<std::string, Entry> slots_;
  int builds_ = 0;
};

// A figure drawn as the slot's texture, fitted into width x height pixels: built by
// `make` when the key changes and the frame may build; nullptr until then or when `make`
// gives no figure (error() then holds its reason).
using FigureMaker = std::function<std::optional<viz::CaptionedFigure>(std::string* why)>;
const GlTexture* figure_texture(TextureCache& cache, const std::string& slot,
                                const std::string& key, const FigureMaker& make, int width,
                                int height);

}  // namespace attnlab::gui
