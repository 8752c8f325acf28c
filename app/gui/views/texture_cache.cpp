// The GUI's texture cache; see texture_cache.h.
#include "app/gui/views/texture_cache.h"

#include <algorithm>
#include <stdexcept>

#include "viz/render.h"

namespace attnlab::gui {

namespace {
constexpr double kScreenDpi = 96.0;
}  // namespace

void TextureCache::new_frame() {
  for (RenderWorker::Finished& f : renderer_.take_finished()) {
    auto it = slots_.find(f.slot);
    // A result the slot no longer waits for (the view moved on) is dropped.
    if (it == slots_.end() || it->second.pending_key != f.key) continue;
    Entry& e = it->second;
    e.pending_key.clear();
    e.key = f.key;
    e.error = f.error;
    e.geometry = std::move(f.geometry);
    if (!e.error.empty() || !e.texture.upload_rgba(f.image.rgba.data(), f.image.width,
                                                   f.image.height, &e.error, e.smooth))
      e.texture.reset();
  }
}

const GlTexture* TextureCache::get(const std::string& slot, const std::string& key, bool smooth,
                                   const std::function<RenderWorker::Job()>& make_job) {
  Entry& e = slots_[slot];
  if (e.key == key) {
    e.pending_key.clear();  // back to what is shown: a drawing still on its way is dropped
  } else if (e.pending_key != key) {
    e.pending_key = key;
    e.smooth = smooth;
    renderer_.submit(slot, key, make_job());
  }
  return e.texture.valid() ? &e.texture : nullptr;
}

const viz::FigureGeometry* TextureCache::geometry(const std::string& slot) const {
  const auto it = slots_.find(slot);
  return it != slots_.end() && it->second.texture.valid() ? it->second.geometry.get() : nullptr;
}

const std::string* TextureCache::error(const std::string& slot, const std::string& key) const {
  const auto it = slots_.find(slot);
  return it != slots_.end() && it->second.key == key && !it->second.error.empty()
             ? &it->second.error
             : nullptr;
}

FigureJob no_figure(std::string why) {
  return [why = std::move(why)](std::string* out) {
    *out = why;
    return std::optional<viz::CaptionedFigure>();
  };
}

const GlTexture* figure_texture(TextureCache& cache, const std::string& slot,
                                const std::string& key, const std::function<FigureJob()>& make,
                                int width, int height) {
  return cache.get(slot, key, true, [&]() -> RenderWorker::Job {
    return [job = make(), width, height]() {
      std::string why;
      const auto fig = job(&why);
      if (!fig) throw std::runtime_error(why);
      // Fit the figure to the panel at screen resolution, keeping its proportions.
      const double s = std::min(width / (fig->figure.width_in * kScreenDpi),
                                height / (fig->figure.height_in * kScreenDpi));
      const double dpi = kScreenDpi * std::max(0.3, s);
      return RenderWorker::Drawing(
          viz::render_rgba(fig->figure, dpi),
          std::make_shared<const viz::FigureGeometry>(viz::figure_geometry(fig->figure, dpi)));
    };
  });
}

}  // namespace attnlab::gui
