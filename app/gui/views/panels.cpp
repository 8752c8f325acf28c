// Image panel, Checkpoint panel and status bar; see panels.h.
#include "app/gui/views/panels.h"

#include "app/gui/views/controls.h"
#include "app/gui/views/cost_view.h"
#include "app/gui/views/figure_tabs.h"
#include "app/gui/views/map_view.h"
#include "app/gui/views/projector_view.h"
#include "app/gui/views/series_view.h"
#include "app/gui/views/tab_rows.h"
#include "app/gui/views/tab_table.h"
#include "app/gui/views/theme.h"
#include "app/gui/workspace/workspace.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace attnlab::gui {
namespace {

constexpr float kSidebarWidth = 330.0f;
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

// Reads the state and the worker's progress; its Cancel is a request the frame loop acts on.
void draw_status_bar(const Workspace& ws, const ViewState& view, const StatusBarState& status,
                     const ComputeWorker& worker, FrameRequests& requests, const ImVec2& pos,
                     const ImVec2& size) {
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
    const WorkerProgress p = worker.progress();
    if (p.busy || p.queued > 0) {  // the long job, its progress, and a way to stop it
      ImGui::SameLine(0.0f, 24.0f);
      const float frac = p.total > 0 ? float(p.done) / float(p.total) : 0.0f;
      const std::string text =
          p.label + (p.queued ? " (+" + std::to_string(p.queued) + " queued)" : "");
      ImGui::ProgressBar(p.total > 0 ? frac : float(std::fmod(ImGui::GetTime(), 1.0)),
                         ImVec2(320.0f, 0.0f), text.c_str());
      ImGui::SameLine();
      if (ImGui::SmallButton("Cancel")) requests.cancel_jobs = true;
    }
    if (image_has_failed_analysis(ws, view)) {  // cancelled, or failed: run it again
      ImGui::SameLine(0.0f, 24.0f);
      if (ImGui::SmallButton("Analyse again")) requests.reanalyse = true;
    }
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

// The chosen tab's view, under the tab rows.
void draw_tab(GuiState& state, const TabEntry& tab) {
  switch (tab.kind) {
    case TabKind::Maps:
      draw_maps_tab(state.workspace, state.frame, state.view, state.cache);
      break;
    case TabKind::Predictions:
      draw_predictions_tab(state.workspace, state.view);
      break;
    case TabKind::Checkpoint:
      draw_checkpoint_panel(state.checkpoint);
      break;
    case TabKind::Series:
      draw_series_tab(state.workspace, state.series, state.cache, *tab.analysis);
      break;
    case TabKind::Figure:
      draw_figure_tab(state.workspace, state.view, state.series, state.sweep, state.cost,
                      state.cache, tab);
      break;
    case TabKind::Cost:
      draw_cost_tab(state.workspace, state.cost, state.cache, state.cost.shown, state.requests);
      break;
    case TabKind::Projector:
      draw_projector_tab(state.projector, state.workspace, state.view, state.requests,
                         state.status);
      break;
  }
}

}  // namespace

void draw_workspace(GuiState& state, ComputeWorker& worker) {
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  const float status_h = ImGui::GetFrameHeight();
  const ImVec2 origin = viewport->WorkPos;  // below the main menu bar
  const float width = viewport->WorkSize.x;
  const float height = std::max(viewport->WorkSize.y - status_h, 1.0f);
  const float side_w = std::min(kSidebarWidth, std::floor(width * 0.35f));

  ImGui::SetNextWindowPos(origin);
  ImGui::SetNextWindowSize(ImVec2(side_w, height));
  if (ImGui::Begin("Workspace", nullptr, kTileFlags)) {
    draw_sidebar(state.workspace, state.series, state.sweep, state.device, state.view,
                 state.requests);
    if (state.view.sidebar_scroll_end) {  // a script's `sidebar-end`: show its last sections
      ImGui::SetScrollHereY(1.0f);
      state.view.sidebar_scroll_end = false;
    }
  }
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(origin.x + side_w, origin.y));
  ImGui::SetNextWindowSize(ImVec2(width - side_w, height));
  if (ImGui::Begin(
          "View", nullptr,
          kTileFlags | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    const TabEntry tab = draw_tab_rows(state.view);
    ImGui::PushID(tab.id.c_str());  // each tab's widgets apart, as inside its own tab item
    draw_tab(state, tab);
    ImGui::PopID();
  }
  ImGui::End();

  draw_status_bar(state.workspace, state.view, state.status, worker, state.requests,
                  ImVec2(origin.x, origin.y + height), ImVec2(width, status_h));
}

}  // namespace attnlab::gui
