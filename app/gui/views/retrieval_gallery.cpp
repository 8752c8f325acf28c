// The patch retrieval's controls and gallery; see retrieval_gallery.h.
#include "app/gui/views/retrieval_gallery.h"

#include <imgui.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "app/gui/projector/patch_retrieval.h"
#include "app/gui/views/theme.h"

namespace attnlab::gui {
namespace {

constexpr float kCropSide = 88.0f;     // a crop's box in the gallery, in pixels
constexpr float kMatchWidth = 112.0f;  // one match's column

std::string short_name(const std::string& path, size_t most) {
  std::string name = std::filesystem::path(path).filename().string();
  if (name.empty()) name = path;
  if (name.size() > most) name = ".." + name.substr(name.size() - (most - 2));  // the tail tells
  return name;
}

// One match: its crop (or its place while it is cut), place and score, name, label and cell.
// True when clicked.
bool draw_match(const ProjectorRetrieval& r, const EmbedFolder* d, int i) {
  const RetrievalMatch& m = r.matches[size_t(i)];
  const bool row_ok = d && m.row >= 0 && m.row < d->n;
  const std::string image = row_ok ? d->rows[size_t(m.row)].image : "";
  const std::string label = row_ok ? d->rows[size_t(m.row)].label_name : "";
  ImGui::PushID(i);
  ImGui::BeginGroup();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(o, ImVec2(o.x + kCropSide, o.y + kCropSide), IM_COL32(24, 24, 28, 255));
  const auto crop = r.crops.find(i);
  if (crop != r.crops.end() && crop->second.valid()) {
    const float w = float(crop->second.width()), h = float(crop->second.height());
    const float s = kCropSide / std::max(w, h);
    const ImVec2 at(o.x + (kCropSide - w * s) * 0.5f, o.y + (kCropSide - h * s) * 0.5f);
    dl->AddImage(reinterpret_cast<ImTextureID>(crop->second.handle()), at,
                 ImVec2(at.x + w * s, at.y + h * s));
  } else {
    const auto error = r.crop_errors.find(i);
    dl->AddText(
        ImVec2(o.x + 6, o.y + 6),
        error != r.crop_errors.end() ? IM_COL32(230, 90, 90, 255) : IM_COL32(150, 150, 150, 255),
        error != r.crop_errors.end() ? "no picture" : "...");
  }
  ImGui::Dummy(ImVec2(kMatchWidth, kCropSide));
  ImGui::Text("#%d  %.4f", i + 1, double(m.score));
  ImGui::TextUnformatted(short_name(image, 15).c_str());
  ImGui::TextDisabled("%s (%lld,%lld)", short_name(label, 10).c_str(),
                      static_cast<long long>(m.patch_y), static_cast<long long>(m.patch_x));
  ImGui::EndGroup();
  const bool hovered = ImGui::IsItemHovered();
  const bool clicked = hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left);
  if (hovered) {
    dl->AddRect(o, ImVec2(o.x + kCropSide, o.y + kCropSide), IM_COL32(255, 220, 0, 255));
    const auto error = r.crop_errors.find(i);
    ImGui::SetTooltip(
        "%s\nrow %lld, patch (%lld, %lld), cosine %.6f%s%s\nclick: open it in the "
        "workspace, this patch the query",
        image.c_str(), static_cast<long long>(m.row), static_cast<long long>(m.patch_y),
        static_cast<long long>(m.patch_x), double(m.score),
        error != r.crop_errors.end() ? "\n" : "",
        error != r.crop_errors.end() ? error->second.c_str() : "");
  }
  ImGui::PopID();
  return clicked;
}

// The matches under the panel's line: their count and query, then the crops in rows.
void draw_retrieval_gallery(ProjectorState& p, ViewState& view, FrameRequests& requests,
                            StatusBarState& status) {
  ProjectorRetrieval& r = p.retrieval;
  const EmbedFolder* d = p.main.data.get();
  ImGui::TextDisabled("%zu best of %lld patches for cell (%lld, %lld) of %s%s, %s vector, %.1f ms",
                      r.matches.size(), static_cast<long long>(r.candidates),
                      static_cast<long long>(r.patch_y), static_cast<long long>(r.patch_x),
                      short_name(r.query_image, 28).c_str(),
                      r.asked_exclude ? " (its own image left out)" : "", r.query_source.c_str(),
                      1000.0 * r.seconds);
  ImGui::BeginChild("##retrieval_gallery", ImVec2(0, 0), false);
  const float avail = ImGui::GetContentRegionAvail().x;
  const int per_row = std::max(1, int((avail + 8.0f) / (kMatchWidth + 8.0f)));
  int open = -1;
  for (int i = 0; i < int(r.matches.size()); ++i) {
    if (i % per_row != 0) ImGui::SameLine(0, 8.0f);
    if (draw_match(r, d, i)) open = i;
  }
  ImGui::EndChild();
  if (open >= 0) open_retrieval_match(p, open, view, requests, status);
}

}  // namespace

float retrieval_panel_height(const ProjectorState& p, float avail_height) {
  if (!retrieval_folder_error(p).empty()) return 0.0f;
  const ProjectorRetrieval& r = p.retrieval;
  const float line = ImGui::GetFrameHeightWithSpacing();
  if (r.matches.empty())
    return line * (r.error.empty() && !r.computing && !r.wanted ? 1.0f : 2.0f) + 8.0f;
  return std::min(avail_height * 0.5f, 340.0f);
}

void draw_retrieval_note(const ProjectorState& p) {
  if (!p.main.data || retrieval_folder_error(p).empty()) return;
  ImGui::TextDisabled("PATCH RETRIEVAL");
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("needs a folder of `attnlab embed --pool tokens` (every patch's vector)");
  ImGui::PopStyleColor();
  if (!p.retrieval.error.empty()) ImGui::TextColored(kErrorColor, "%s", p.retrieval.error.c_str());
}

void draw_retrieval_panel(ProjectorState& p, const Workspace& ws, ViewState& view,
                          FrameRequests& requests, StatusBarState& status) {
  ProjectorRetrieval& r = p.retrieval;
  ImGui::TextDisabled("PATCH RETRIEVAL");
  ImGui::SameLine();
  const bool image = view.image >= 0 && view.image < int(ws.images.size());
  const MapQuery& q = view.query;
  const std::string cell =
      !q.prefix.empty() ? q.prefix + " token (click a patch in Maps)"
      : q.row < 0       ? "the centre cell"
                        : "cell (" + std::to_string(q.row) + ", " + std::to_string(q.col) + ")";
  ImGui::Text("query: %s of %s", cell.c_str(),
              image ? short_name(ws.images[size_t(view.image)].path, 28).c_str()
                    : "(no image: click a point)");
  ImGui::SameLine(0, 16);
  ImGui::SetNextItemWidth(90.0f);
  ImGui::InputInt("k##retrieval_k", &r.k, 1, 8);
  r.k = std::clamp(r.k, 1, 256);
  ImGui::SameLine();
  ImGui::Checkbox("exclude its own image", &r.exclude_self);
  ImGui::SameLine();
  ImGui::BeginDisabled(!image || r.computing || r.wanted);
  if (ImGui::Button("Find similar patches")) {
    std::string error;
    if (!request_patch_retrieval(p, ws, view, &error)) {
      status.notice = "projector: " + error;
      status.notice_is_error = true;
    }
  }
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "The k patches of the folder's images most similar (cosine) to the query cell of the "
        "workspace's current image: click a point to open an image, a patch of it in the Maps "
        "tab to make it the query (as `attnlab retrieve DIR --image I --patch Y,X`).");
  if (!r.matches.empty()) {
    ImGui::SameLine();
    if (ImGui::SmallButton("Clear##retrieval")) clear_retrieval(r);
  }
  if (r.wanted || r.computing) ImGui::TextDisabled("searching (progress and Cancel below) ...");
  if (!r.error.empty()) ImGui::TextColored(kErrorColor, "%s", r.error.c_str());
  if (!r.matches.empty()) draw_retrieval_gallery(p, view, requests, status);
}

}  // namespace attnlab::gui
