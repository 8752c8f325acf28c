// Main menu, shortcuts and the Open popup; see menu.h.
#include "app/gui/views/menu.h"

#include "app/gui/views/figure_tabs.h"
#include "app/gui/views/file_browser.h"
#include "app/gui/workspace/workspace_io.h"

#include <GLFW/glfw3.h>  // key codes only: the GLFW backend indexes ImGui keys by them
#include <imgui.h>
#include <imgui_stdlib.h>

#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace attnlab::gui {
namespace {

// One title per kind, with a fixed ID after "###" so that OpenPopup and
// BeginPopupModal agree whichever kind is being opened.
const char* dialog_title(FileKind kind) {
  return kind == FileKind::Model       ? "Open model###open_file"
         : kind == FileKind::Image     ? "Open image###open_file"
         : kind == FileKind::Workspace ? "Open workspace###open_file"
                                       : "Open###open_file";
}

}  // namespace

void request_open_dialog(const Workspace& ws, const ViewState& view,
                         const CheckpointPanelState& checkpoint, DialogsState& dialogs,
                         FileKind kind, bool in_app) {
  // Start from the file currently shown: the next one is usually next to it.
  const std::string current = kind == FileKind::Model ? checkpoint.path
                              : ws.images.empty()     ? std::string()
                                                      : ws.images[size_t(view.image)].path;
  if (!in_app && dialogs.native.open(kind, fs::path(current).parent_path().string())) return;
  OpenDialogState& dlg = dialogs.open;
  dlg.open_requested = true;
  dlg.kind = kind;
  dlg.path_input = current;
}

void handle_shortcuts(const Workspace& ws, const ViewState& view,
                      const CheckpointPanelState& checkpoint, DialogsState& dialogs,
                      FrameRequests& requests) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl || io.WantTextInput) return;  // typing in a field is not a shortcut
  if (ImGui::IsKeyPressed(GLFW_KEY_O, false)) {
    request_open_dialog(ws, view, checkpoint, dialogs,
                        io.KeyShift ? FileKind::Model : FileKind::Image);
  } else if (ImGui::IsKeyPressed(GLFW_KEY_Q, false)) {
    requests.quit = true;
  } else if (ImGui::IsKeyPressed(GLFW_KEY_E, false)) {
    dialogs.export_panel.open_requested = true;
  }
}

void draw_main_menu(const Workspace& ws, const ViewState& view, const RecentFiles& recent,
                    const CheckpointPanelState& checkpoint, DialogsState& dialogs,
                    FrameRequests& requests) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open image...", "Ctrl+O"))
      request_open_dialog(ws, view, checkpoint, dialogs, FileKind::Image);
    if (ImGui::MenuItem("Open model (checkpoint or config)...", "Ctrl+Shift+O")) {
      request_open_dialog(ws, view, checkpoint, dialogs, FileKind::Model);
    }
    // Any file by its path, routed by its extension (the in-app list).
    if (ImGui::MenuItem("Open by path..."))
      request_open_dialog(ws, view, checkpoint, dialogs, FileKind::Unknown, true);
    if (ImGui::MenuItem("Open workspace..."))
      request_open_dialog(ws, view, checkpoint, dialogs, FileKind::Workspace);
    if (ImGui::BeginMenu("Recent", !recent.images.empty() || !recent.models.empty())) {
      for (const auto& p : recent.images)
        if (ImGui::MenuItem(("image: " + p).c_str()))
          requests.open.push_back(OpenRequest{FileKind::Image, p});
      if (!recent.images.empty() && !recent.models.empty()) ImGui::Separator();
      for (const auto& p : recent.models)
        if (ImGui::MenuItem(("model: " + p).c_str()))
          requests.open.push_back(OpenRequest{FileKind::Model, p});
      ImGui::EndMenu();
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Export panel...", "Ctrl+E")) dialogs.export_panel.open_requested = true;
    if (ImGui::MenuItem("Export statistics...")) {
      dialogs.export_panel.open_requested = true;
      dialogs.export_panel.stats = true;
    }
    if (ImGui::MenuItem("Copy settings as command")) requests.copy_command = true;
    if (ImGui::MenuItem("Save workspace...")) {  // models, images and their edits
      dialogs.export_panel.open_requested = true;
      dialogs.export_panel.workspace = true;
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) requests.quit = true;
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

void draw_open_dialog(DialogsState& dialogs, FrameRequests& requests) {
  OpenDialogState& dlg = dialogs.open;
  const char* title = dialog_title(dlg.kind);
  if (dlg.open_requested) {
    ImGui::OpenPopup(title);
    dlg.open_requested = false;
  }
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;

  ImGui::TextUnformatted(dlg.kind == FileKind::Model
                             ? "Path of a checkpoint (.pth, .pt, .safetensors, .bin) or a model "
                               "config (.json, untrained):"
                         : dlg.kind == FileKind::Image
                             ? "Path of an image (PNG, JPEG, BMP, TIFF, WebP, PPM):"
                         : dlg.kind == FileKind::Workspace
                             ? "Path of a saved workspace (.attnlab):"
                             : "Path of an image, a folder of images, a checkpoint or a model "
                               "config:");
  ImGui::SetNextItemWidth(560.0f);
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  const bool entered =
      ImGui::InputText("##path", &dlg.path_input, ImGuiInputTextFlags_EnterReturnsTrue);
  const bool double_clicked = draw_file_browser(dlg.browser, dlg.path_input, dlg.kind);
  ImGui::TextDisabled("Tip: files and folders can also be dropped onto the window.");
  ImGui::Spacing();

  const std::string path = normalize_user_path(dlg.path_input);
  ImGui::BeginDisabled(path.empty());
  const bool open_clicked = ImGui::Button("Open", ImVec2(120.0f, 0.0f));
  ImGui::EndDisabled();
  ImGui::SameLine();
  const bool cancelled = ImGui::Button("Cancel", ImVec2(120.0f, 0.0f)) ||
                         ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false);

  if ((entered || open_clicked || double_clicked) && !path.empty()) {
    // A folder opens every image in it, and "any file" goes by its extension: both as
    // the drop route does.
    if (dlg.kind == FileKind::Unknown ||
        (dlg.kind == FileKind::Image && std::filesystem::is_directory(path)))
      requests.dropped_paths.push_back(path);
    else
      requests.open.push_back(OpenRequest{dlg.kind, path});
    ImGui::CloseCurrentPopup();
  } else if (cancelled) {
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace attnlab::gui

namespace attnlab::gui {

void draw_export_dialog(const Workspace& ws, const ViewState& view, const SeriesState& series,
                        const CostState& cost, ExportDialogState& dlg, StatusBarState& status) {
  const char* title = "Export###export";
  if (dlg.open_requested) {
    ImGui::OpenPopup(title);
    dlg.open_requested = false;
    if (dlg.workspace)
      dlg.path_input = "workspace.attnlab";
    else if (dlg.path_input.empty() ||
             (dlg.stats != (dlg.path_input.find('.') == std::string::npos)))
      dlg.path_input = dlg.stats ? "attnlab-export/stats" : "attnlab-export/" + view.tab + ".png";
  }
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::TextUnformatted(dlg.workspace
                             ? "File for the workspace: models, images and their edits (.attnlab):"
                         : dlg.stats ? "Folder for the statistics (CSV, JSON, LaTeX):"
                                     : "File for the current panel (.png, .svg or .pdf):");
  ImGui::SetNextItemWidth(560.0f);
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  const bool entered =
      ImGui::InputText("##export_path", &dlg.path_input, ImGuiInputTextFlags_EnterReturnsTrue);
  const bool ok = ImGui::Button("Export", ImVec2(120.0f, 0.0f));
  ImGui::SameLine();
  const bool cancelled = ImGui::Button("Cancel", ImVec2(120.0f, 0.0f)) ||
                         ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false);
  if (entered || ok) {
    std::string message;
    const bool done = dlg.workspace ? save_workspace(ws, view, dlg.path_input, &message)
                      : dlg.stats   ? export_stats(ws, view, dlg.path_input, &message)
                                  : export_panel(ws, view, series, cost, dlg.path_input, &message);
    status.notice = message;
    status.notice_is_error = !done;
    dlg.stats = dlg.workspace = false;
    ImGui::CloseCurrentPopup();
  } else if (cancelled) {
    dlg.stats = dlg.workspace = false;
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace attnlab::gui
