// The Projector tab: its controls (the folder and the comparison folder, the method and its
// options, the colouring, a head's entropy among them) and its layout — the plot, or two side by
// side when a comparison is open (views/projector_plot.h), and the side panel
// (views/projector_panel.h).
#include "app/gui/views/projector_view.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "app/gui/projector/projector.h"
#include "app/gui/views/projector_panel.h"
#include "app/gui/views/projector_plot.h"
#include "app/gui/views/retrieval_gallery.h"
#include "app/gui/views/theme.h"
#include "app/session/embedding_projection.h"

namespace attnlab::gui {
namespace {

constexpr float kProjectorSideWidth = 290.0f;
constexpr const char* kProjectorMethods[3] = {"pca", "tsne", "umap"};

void draw_folder_controls(ProjectorState& p) {
  ImGui::SetNextItemWidth(300.0f);
  const bool enter =
      ImGui::InputTextWithHint("##dir", "an `attnlab embed` folder", p.dir_edit.data(),
                               p.dir_edit.size(), ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Open") || enter) && p.dir_edit[0] != '\0')
    open_projector_folder(p, p.dir_edit.data());
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("reads embeddings.npy, images.csv and embed.json (attnlab embed --out DIR)");
  ImGui::SameLine(0, 20);
  ImGui::SetNextItemWidth(300.0f);
  const bool compare_enter = ImGui::InputTextWithHint(
      "##compare", "compare: the same images through another model", p.compare_edit.data(),
      p.compare_edit.size(), ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  ImGui::BeginDisabled(!p.main.data);
  if ((ImGui::Button("Compare") || compare_enter) && p.compare_edit[0] != '\0')
    open_projector_compare(p, p.compare_edit.data());
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "a second embed folder of the same images in the same order (another model's): "
        "projected alike and drawn beside the first; a selection shows in both");
  if (p.compare.data || p.compare.loading) {
    ImGui::SameLine();
    if (ImGui::Button("Close##compare")) open_projector_compare(p, "");
  }
}

void draw_method_controls(ProjectorState& p) {
  int method = 0;
  for (int k = 0; k < 3; ++k)
    if (p.method == kProjectorMethods[k]) method = k;
  ImGui::RadioButton("PCA", &method, 0);
  ImGui::SameLine();
  ImGui::RadioButton("t-SNE", &method, 1);
  ImGui::SameLine();
  ImGui::RadioButton("UMAP", &method, 2);
  p.method = kProjectorMethods[method];
  ImGui::SameLine();
  ImGui::SetNextItemWidth(70.0f);
  if (p.method == "tsne") {
    ImGui::InputFloat("perplexity", &p.perplexity, 0, 0, "%.0f");
    p.perplexity = std::clamp(p.perplexity, 1.0f, 500.0f);
    ImGui::SameLine();
  } else if (p.method == "umap") {
    ImGui::InputInt("neighbours", &p.n_neighbors, 0);
    p.n_neighbors = std::clamp(p.n_neighbors, 2, 500);
    ImGui::SameLine();
  }
  if (p.method != "pca") {
    ImGui::SetNextItemWidth(50.0f);
    ImGui::InputInt("seed", &p.seed, 0);
    p.seed = std::max(p.seed, 0);
    ImGui::SameLine();
  }
  ImGui::BeginDisabled(!p.main.data || p.main.computing || p.main.loading);
  if (ImGui::Button("Project")) request_projection(p);
  ImGui::EndDisabled();

  // The colouring on a line of its own: with the method's options it overflows 1280 px.
  ImGui::TextUnformatted("colour by");
  ImGui::SameLine();
  int colour = int(p.colour);
  ImGui::RadioButton("label", &colour, 0);
  ImGui::SameLine();
  ImGui::RadioButton("prediction", &colour, 1);
  ImGui::SameLine();
  ImGui::RadioButton("correct / wrong", &colour, 2);
  ImGui::SameLine();
  ImGui::RadioButton("confidence", &colour, 3);
  ImGui::SameLine();
  ImGui::BeginDisabled(!p.main.data || !p.main.data->has_heads());
  ImGui::RadioButton("head entropy", &colour, 4);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "the mean normalised attention entropy of the head picked at the right (layer, head), "
        "per image: a folder written by `attnlab embed --heads`");
  ImGui::SameLine();
  ImGui::BeginDisabled(!p.main.data || !p.main.data->has_head_rank());
  ImGui::RadioButton("head rank", &colour, 5);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "the effective rank exp H(sigma / sum sigma) of the picked head's output (tokens x head "
        "dim), per image, as the rank analysis defines it: `attnlab embed --heads`");
  p.colour = ProjectorColour(colour);
}

void draw_status_line(const ProjectorState& p) {
  const ProjectorSide& m = p.main;
  if (m.loading) {
    ImGui::TextDisabled("reading %s ...", m.dir.c_str());
  } else if (m.computing || p.compare.computing) {
    ImGui::TextDisabled("computing %s (progress and Cancel below) ...",
                        session::projection_method_title(p.method).c_str());
  } else if (m.data) {
    ImGui::TextDisabled(
        "%lld points x %lld dims%s  %s", static_cast<long long>(m.data->n),
        static_cast<long long>(m.data->dims),
        m.data->tokens > 1
            ? (" (the mean of " + std::to_string(m.data->tokens) + " tokens)").c_str()
            : "",
        m.data->description.c_str());
  }
  if (!p.error.empty()) ImGui::TextColored(kErrorColor, "%s", p.error.c_str());
  if (!p.compare_error.empty()) ImGui::TextColored(kErrorColor, "%s", p.compare_error.c_str());
}

// The comparison's place while it is read or projected.
void draw_compare_placeholder(const ProjectorState& p, ImVec2 size) {
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->AddRectFilled(o, ImVec2(o.x + size.x, o.y + size.y),
                                            IM_COL32(24, 24, 28, 255));
  ImGui::SetCursorScreenPos(ImVec2(o.x + 8, o.y + 8));
  ImGui::TextDisabled("%s %s ...", p.compare.loading ? "reading" : "projecting",
                      p.compare.dir.c_str());
  ImGui::SetCursorScreenPos(o);
  ImGui::Dummy(size);
}

}  // namespace

void draw_projector_tab(ProjectorState& p, const Workspace& ws, ViewState& view,
                        FrameRequests& requests, StatusBarState& status) {
  if (p.dir_edit[0] == '\0' && !p.main.dir.empty())
    std::snprintf(p.dir_edit.data(), p.dir_edit.size(), "%s", p.main.dir.c_str());
  draw_folder_controls(p);
  draw_method_controls(p);
  draw_status_line(p);
  ImGui::Separator();
  if (!p.main.data || p.main.xy.empty()) {
    p.hovered = -1;
    p.main.drawn_selected = p.compare.drawn_selected = -1;
    ImGui::TextWrapped(
        p.main.data
            ? "Projecting..."
            : "Open a folder written by `attnlab embed --model M --dataset fashion-mnist:test "
              "--limit 2000 --out DIR` (or --images FOLDER): its embeddings are projected to "
              "2-D by PCA, t-SNE or UMAP, one point per image. Compare: a second folder of the "
              "same images through another model, drawn beside it.");
    return;
  }
  const bool two = !p.compare.dir.empty() || p.compare.data;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float width = std::max(200.0f, avail.x - kProjectorSideWidth - 8.0f);
  // The patch retrieval's panel under the plots (a tokens folder): its controls, its gallery.
  const float gallery_h = retrieval_panel_height(p, avail.y);
  const ImVec2 plot(two ? std::max(100.0f, (width - 8.0f) * 0.5f) : width,
                    std::max(150.0f, avail.y - gallery_h));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  ImGui::BeginChild("##projector_plot", plot, false, flags);
  const int hovered_main = draw_projector_plot(p, ProjectorPlot::Main, requests, status, plot);
  ImGui::EndChild();
  int hovered_compare = -1;
  if (two) {
    ImGui::SameLine();
    ImGui::BeginChild("##projector_compare", plot, false, flags);
    if (p.compare.data && !p.compare.xy.empty())
      hovered_compare = draw_projector_plot(p, ProjectorPlot::Compare, requests, status, plot);
    else
      draw_compare_placeholder(p, plot);
    ImGui::EndChild();
  }
  if (!p.compare.data || p.compare.xy.empty()) p.compare.drawn_selected = -1;
  p.hovered = hovered_main >= 0 ? hovered_main : hovered_compare;
  ImGui::SameLine();
  ImGui::BeginChild("##projector_side", ImVec2(0, plot.y));
  draw_projector_legend(p);
  ImGui::Separator();
  draw_projector_selection(p);
  ImGui::Separator();
  draw_projector_group_maps(p, ws, view, status);
  if (p.has_selection) ImGui::Separator();
  draw_projector_shares(p);
  if (p.main.data->has_heads() || !p.main.data->heads_error.empty()) ImGui::Separator();
  draw_projector_heads(p, requests, status);
  draw_retrieval_note(p);
  ImGui::EndChild();
  if (gallery_h > 0.0f) {
    ImGui::BeginChild("##projector_retrieval", ImVec2(0, 0));
    draw_retrieval_panel(p, ws, view, requests, status);
    ImGui::EndChild();
  }
}

}  // namespace attnlab::gui
