// Image panel, Checkpoint panel and status bar; see panels.h.
#include "app/gui/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace attnlab::gui {
namespace {

constexpr float kImagePanelFraction = 0.6f;  // share of the width given to the image
const ImVec4 kErrorColor(1.0f, 0.42f, 0.42f, 1.0f);
const ImVec4 kNoticeColor(0.95f, 0.80f, 0.35f, 1.0f);

constexpr ImGuiWindowFlags kTileFlags =
    ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
    ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;

// "", ".", "..", "..." cycling three times a second: shows the app is alive while a
// worker is busy.
std::string loading_dots() {
  const int n = static_cast<int>(ImGui::GetTime() * 3.0) % 4;
  return std::string(static_cast<size_t>(n), '.');
}

void wrapped(const std::string& text) {
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text.c_str());  // never as a format string: paths may hold '%'
  ImGui::PopTextWrapPos();
}

void wrapped_colored(const ImVec4& color, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  wrapped(text);
  ImGui::PopStyleColor();
}

void draw_failure(const char* what, const std::string& error) {
  ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
  ImGui::TextUnformatted(what);
  ImGui::PopStyleColor();
  ImGui::Spacing();
  wrapped_colored(kErrorColor, error);
}

// The image scaled to fit the region left in the panel (aspect kept; enlarged by whole
// factors only), centred, above a footer line: size, scale, pixel under the mouse.
void draw_image_view(const ImagePanelState& panel) {
  const GlTexture& tex = panel.texture;
  const float footer_h = ImGui::GetTextLineHeightWithSpacing();
  std::string footer = std::to_string(tex.width()) + " x " + std::to_string(tex.height()) + " px";

  ImGui::BeginChild("##image_view", ImVec2(0.0f, -footer_h), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  float scale = std::min(avail.x / float(tex.width()), avail.y / float(tex.height()));
  // Enlarge by whole factors only: every image pixel then covers the same number of
  // screen pixels, so fine stripes and patch boundaries are not distorted by the zoom.
  if (scale >= 1.0f) scale = std::floor(scale);
  if (scale > 0.0f) {
    const ImVec2 size(std::floor(float(tex.width()) * scale),
                      std::floor(float(tex.height()) * scale));
    const ImVec2 cursor = ImGui::GetCursorPos();
    ImGui::SetCursorPos(ImVec2(cursor.x + std::floor((avail.x - size.x) * 0.5f),
                               cursor.y + std::floor((avail.y - size.y) * 0.5f)));
    ImGui::Image(reinterpret_cast<ImTextureID>(tex.handle()), size);
    footer +=
        "  |  shown at " + std::to_string(static_cast<int>(std::lround(scale * 100.0f))) + "%";
    if (ImGui::IsItemHovered()) {
      const ImVec2 mouse = ImGui::GetMousePos();
      const ImVec2 origin = ImGui::GetItemRectMin();
      const int x = std::clamp(static_cast<int>((mouse.x - origin.x) / scale), 0, tex.width() - 1);
      const int y = std::clamp(static_cast<int>((mouse.y - origin.y) / scale), 0, tex.height() - 1);
      footer += "  |  pixel (" + std::to_string(x) + ", " + std::to_string(y) + ")";
    }
  }
  ImGui::EndChild();
  footer += "  |  loaded in " + std::to_string(std::lround(panel.load_seconds * 1000.0)) + " ms";
  ImGui::TextUnformatted(footer.c_str());
}

void draw_image_panel(const ImagePanelState& panel) {
  switch (panel.status) {
    case LoadStatus::Empty:
      ImGui::TextDisabled("No image loaded.");
      wrapped("File > Open image... (Ctrl+O), or drop an image file onto the window.");
      break;
    case LoadStatus::Loading:
      wrapped("Loading " + panel.path + " " + loading_dots());
      break;
    case LoadStatus::Failed:
      wrapped(panel.path);
      ImGui::Separator();
      draw_failure("Could not load this image:", panel.error);
      break;
    case LoadStatus::Ready:
      wrapped(panel.path);
      ImGui::Separator();
      draw_image_view(panel);
      break;
  }
}

void draw_checkpoint_panel(const CheckpointPanelState& panel) {
  switch (panel.status) {
    case LoadStatus::Empty:
      ImGui::TextDisabled("No checkpoint loaded.");
      wrapped(
          "File > Open checkpoint... (Ctrl+Shift+O), or drop a .pth / .pt / "
          ".safetensors / .bin file onto the window.");
      break;
    case LoadStatus::Loading:
      wrapped("Reading " + panel.path + " " + loading_dots());
      break;
    case LoadStatus::Failed:
      wrapped(panel.path);
      ImGui::Separator();
      draw_failure("Could not read this checkpoint:", panel.error);
      break;
    case LoadStatus::Ready:
      wrapped(panel.path);
      ImGui::TextDisabled("read in %ld ms", std::lround(panel.load_seconds * 1000.0));
      ImGui::Separator();
      ImGui::BeginChild("##summary");
      for (const std::string& warning : panel.warnings)
        wrapped_colored(kNoticeColor, "Warning: " + warning);
      for (const std::string& line : panel.lines) wrapped(line);
      ImGui::EndChild();
      break;
  }
}

void draw_status_bar(const StatusBarState& status, const ImVec2& pos, const ImVec2& size) {
  ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSize(size);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(8.0f, 3.0f));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoNav |
                                 ImGuiWindowFlags_NoFocusOnAppearing |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  if (ImGui::Begin("##status_bar", nullptr, flags)) {
    std::string line = "attnlab " ATTNLAB_VERSION;
    if (!status.runtime.empty()) line += "  |  " + status.runtime;
    char fps[32];
    std::snprintf(fps, sizeof fps, "  |  %.0f fps", double(ImGui::GetIO().Framerate));
    line += fps;
    ImGui::TextUnformatted(line.c_str());
    if (!status.notice.empty()) {
      ImGui::SameLine(0.0f, 24.0f);
      ImGui::PushStyleColor(ImGuiCol_Text, status.notice_is_error ? kErrorColor : kNoticeColor);
      ImGui::TextUnformatted(status.notice.c_str());
      ImGui::PopStyleColor();
    }
  }
  ImGui::End();
  ImGui::PopStyleVar(2);
}

}  // namespace

void draw_workspace(GuiState& state) {
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  const float status_h = ImGui::GetFrameHeight();
  const ImVec2 origin = viewport->WorkPos;  // below the main menu bar
  const float width = viewport->WorkSize.x;
  const float height = std::max(viewport->WorkSize.y - status_h, 1.0f);
  const float image_w = std::floor(width * kImagePanelFraction);

  ImGui::SetNextWindowPos(origin);
  ImGui::SetNextWindowSize(ImVec2(image_w, height));
  if (ImGui::Begin("Image", nullptr, kTileFlags)) draw_image_panel(state.image);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(origin.x + image_w, origin.y));
  ImGui::SetNextWindowSize(ImVec2(width - image_w, height));
  if (ImGui::Begin("Checkpoint", nullptr, kTileFlags)) draw_checkpoint_panel(state.checkpoint);
  ImGui::End();

  draw_status_bar(state.status, ImVec2(origin.x, origin.y + height), ImVec2(width, status_h));
}

}  // namespace attnlab::gui
