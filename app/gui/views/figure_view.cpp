// Figures on screen; see figure_view.h.
#include "app/gui/views/figure_view.h"

#include "viz/figure_hover.h"

namespace attnlab::gui {

std::optional<FigureHover> show_figure(TextureCache& cache, const std::string& slot,
                                       const std::string& key,
                                       const std::function<FigureJob()>& make, int width,
                                       int height, ViewState::ShownFigure* shown) {
  const GlTexture* t = figure_texture(cache, slot, key, make, width, height);
  if (!t) {
    const std::string* e = cache.error(slot, key);
    ImGui::TextWrapped("%s", e ? e->c_str() : "drawing...");
    return std::nullopt;
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::Image(reinterpret_cast<ImTextureID>(t->handle()),
               ImVec2(float(t->width()), float(t->height())));
  const viz::FigureGeometry* geo = cache.geometry(slot);
  if (shown)
    *shown = {int(origin.x), int(origin.y), t->width(), t->height(), geo ? geo->dpi : 0};
  if (!geo || !ImGui::IsItemHovered()) return std::nullopt;
  const ImVec2 mouse = ImGui::GetMousePos();
  const auto hit = geo->hit(double(mouse.x - origin.x), double(mouse.y - origin.y));
  if (!hit) return std::nullopt;
  return FigureHover{hit->panel, hit->x, hit->y, geo};
}

void value_tooltip(const std::optional<FigureHover>& hover) {
  if (!hover) return;
  const viz::Panel& panel = hover->geometry->figure.panels[size_t(hover->panel)];
  const viz::PointValue v = viz::value_at(panel, hover->x, hover->y);
  if (v.text.empty()) return;
  ImGui::BeginTooltip();
  if (!panel.title.empty()) ImGui::TextDisabled("%s", panel.title.c_str());
  ImGui::TextUnformatted(v.text.c_str());
  ImGui::TextDisabled("right click: copy %s", v.value.c_str());
  ImGui::EndTooltip();
  if (ImGui::IsMouseClicked(1)) ImGui::SetClipboardText(v.value.c_str());
}

}  // namespace attnlab::gui
