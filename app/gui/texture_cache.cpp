// The GUI's texture cache; see texture_cache.h.
#include "app/gui/texture_cache.h"

#include <algorithm>

#include "viz/render.h"

namespace attnlab::gui {

namespace {
constexpr int kBuildsPerFrame = 1;
constexpr double kScreenDpi = 96.0;
}  // namespace

const GlTexture* TextureCache::find(const std::string& slot, const std::string& key) const {
  const auto it = slots_.find(slot);
  return it != slots_.end() && it->second.key == key && it->second.texture.valid()
             ? &it->second.texture
             : nullptr;
}

const std::string* TextureCache::error(const std::string& slot, const std::string& key) const {
  const auto it = slots_.find(slot);
  return it != slots_.end() && it->second.key == key && !it->second.error.empty()
             ? &it->second.error
             : nullptr;
}

bool TextureCache::claim_build() {
  if (builds_ >= kBuildsPerFrame) return false;
  ++builds_;
  return true;
}

const GlTexture* TextureCache::store(const std::string& slot, const std::string& key,
                                     const viz::RgbaImage& image, bool smooth) {
  Entry& e = slots_[slot];
  e.key = key;
  e.error.clear();
  if (!e.texture.upload_rgba(image.rgba.data(), image.width, image.height, &e.error, smooth)) {
    e.texture.reset();
    return nullptr;
  }
  return &e.texture;
}

void TextureCache::store_error(const std::string& slot, const std::string& key,
                               std::string message) {
  Entry& e = slots_[slot];
  e.key = key;
  e.texture.reset();
  e.error = std::move(message);
}

const GlTexture* figure_texture(TextureCache& cache, const std::string& slot,
                                const std::string& key, const FigureMaker& make, int width,
                                int height) {
  if (const GlTexture* t = cache.find(slot, key)) return t;
  if (cache.error(slot, key) || !cache.claim_build()) return nullptr;
  std::string why;
  try {
    const auto fig = make(&why);
    if (!fig) {
      cache.store_error(slot, key, why);
      return nullptr;
    }
    // Fit the figure to the panel at screen resolution, keeping its proportions.
    const double s = std::min(width / (fig->figure.width_in * kScreenDpi),
                              height / (fig->figure.height_in * kScreenDpi));
    return cache.store(slot, key, viz::render_rgba(fig->figure, kScreenDpi * std::max(0.3, s)),
                       true);
  } catch (const std::exception& e) {
    cache.store_error(slot, key, e.what());
    return nullptr;
  }
}

}  // namespace attnlab::gui
