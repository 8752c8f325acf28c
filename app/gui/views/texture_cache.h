// GL textures made from figures and overlays. Each place on screen (a "slot": the single
// map view, head 3 of the grid, the Rank tab) holds one texture and the key naming its
// content. When a slot is asked for a new key, the image is drawn on the render worker
// (render_worker.h) while the slot keeps showing its previous texture; the new one is
// uploaded at the start of the frame after it is finished. So no frame ever renders a
// figure, and a new result swaps in when ready.
// Main thread only (GL).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "app/gui/jobs/render_worker.h"
#include "app/gui/views/gl_texture.h"
#include "viz/figures/captioned_figure.h"

namespace attnlab::gui {

class TextureCache {
 public:
  // Uploads what the render worker finished since the last frame.
  void new_frame();
  // The slot's texture. When the slot does not show `key` yet, `make_job` (called only
  // then) gives the drawing to hand to the render worker, and until it is done the slot's
  // previous texture is returned (nullptr when it has none). `smooth`: linear filtering.
  const GlTexture* get(const std::string& slot, const std::string& key, bool smooth,
                       const std::function<RenderWorker::Job()>& make_job);
  // Where the panels of the figure the slot shows lie (nullptr for an overlay or nothing).
  const viz::FigureGeometry* geometry(const std::string& slot) const;
  // Why drawing `key` failed, or nullptr.
  const std::string* error(const std::string& slot, const std::string& key) const;
  // Drawings asked for and not yet uploaded.
  bool busy() const { return !renderer_.idle(); }

 private:
  struct Entry {
    std::string key;          // what `texture` (or `error`) shows
    std::string pending_key;  // what the render worker is drawing for this slot
    GlTexture texture;
    std::shared_ptr<const viz::FigureGeometry> geometry;
    std::string error;
    bool smooth = true;
  };
  std::map<std::string, Entry> slots_;
  RenderWorker renderer_;  // last: its thread stops before the entries go
};

// A figure drawn as the slot's texture, fitted into width x height pixels. The FigureJob
// runs on the render worker, so it must own what it reads (shared analyses, copied
// settings); it gives no figure, with the reason in *why, when the results do not allow
// one (error() then holds the reason).
using FigureJob = std::function<std::optional<viz::CaptionedFigure>(std::string* why)>;
// A job that only reports why there is no figure.
FigureJob no_figure(std::string why);
const GlTexture* figure_texture(TextureCache& cache, const std::string& slot,
                                const std::string& key, const std::function<FigureJob()>& make,
                                int width, int height);

}  // namespace attnlab::gui
