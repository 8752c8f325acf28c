// The picture the model saw; see input_view.h.
#include "app/gui/views/input_view.h"

#include <cstdio>
#include <memory>
#include <string>

#include "app/gui/workspace/workspace.h"
#include "viz/overlay.h"

namespace attnlab::gui {

void draw_input_picture(const Workspace& ws, const ViewState& view, TextureCache& cache, int model,
                        ImVec2 size, int min_side) {
  const ResultSlot* r = result_of(ws, model, view.image);
  if (!r || !r->analysis) {
    ImGui::TextUnformatted("analysing...");
    return;
  }
  const std::shared_ptr<const ImageAnalysis> analysis = r->analysis;
  const viz::RgbaImage& pic = analysis->picture;
  const ModelInfo& info = ws.models[size_t(model)].info;
  const std::string caption = "the picture " + info.name + " saw: " + std::to_string(pic.height) +
                              "x" + std::to_string(pic.width) + " (HxW), " + info.preprocessing;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(caption.c_str());
  ImGui::PopTextWrapPos();
  char id[32];
  std::snprintf(id, sizeof id, "%p", static_cast<const void*>(analysis.get()));
  const std::string key = std::to_string(model) + "|" + std::to_string(view.image) + "|" + id +
                          "|" + std::to_string(pic.height) + "x" + std::to_string(pic.width);
  const GlTexture* tex = cache.get("input", key, false, [&]() -> RenderWorker::Job {
    return [analysis, min_side]() {
      const viz::RgbaImage& p = analysis->picture;
      return viz::scale_image_nearest(p, viz::upscale_factor(p, min_side));
    };
  });
  if (!tex) {
    ImGui::TextUnformatted("drawing...");
    return;
  }
  size.y -= ImGui::GetTextLineHeightWithSpacing();
  const float aspect = float(tex->height()) / float(tex->width());
  if (size.x * aspect > size.y)
    size.x = size.y / aspect;
  else
    size.y = size.x * aspect;
  ImGui::Image(reinterpret_cast<ImTextureID>(tex->handle()), size);
}

}  // namespace attnlab::gui
