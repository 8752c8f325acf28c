// Main menu, shortcuts and the Open popup; see menu.h.
#include "app/gui/menu.h"

#include <GLFW/glfw3.h>  // key codes only: the GLFW backend indexes ImGui keys by them
#include <imgui.h>
#include <imgui_stdlib.h>

#include <string>

namespace attnlab::gui {
namespace {

// One title per kind, with a fixed ID after "###" so that OpenPopup and
// BeginPopupModal agree whichever kind is being opened.
const char* dialog_title(FileKind kind) {
  return kind == FileKind::Checkpoint ? "Open checkpoint###open_file" : "Open image###open_file";
}

void request_open_dialog(GuiState& state, FileKind kind) {
  OpenDialogState& dlg = state.open_dialog;
  dlg.open_requested = true;
  dlg.kind = kind;
  // Start from the file currently shown: the next one is usually next to it.
  dlg.path_input = kind == FileKind::Checkpoint ? state.checkpoint.path : state.image.path;
}

}  // namespace

void handle_shortcuts(GuiState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl || io.WantTextInput) return;  // typing in a field is not a shortcut
  if (ImGui::IsKeyPressed(GLFW_KEY_O, false)) {
    request_open_dialog(state, io.KeyShift ? FileKind::Checkpoint : FileKind::Image);
  } else if (ImGui::IsKeyPressed(GLFW_KEY_Q, false)) {
    state.quit_requested = true;
  }
}

void draw_main_menu(GuiState& state) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open image...", "Ctrl+O")) request_open_dialog(state, FileKind::Image);
    if (ImGui::MenuItem("Open checkpoint...", "Ctrl+Shift+O")) {
      request_open_dialog(state, FileKind::Checkpoint);
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) state.quit_requested = true;
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

void draw_open_dialog(GuiState& state) {
  OpenDialogState& dlg = state.open_dialog;
  const char* title = dialog_title(dlg.kind);
  if (dlg.open_requested) {
    ImGui::OpenPopup(title);
    dlg.open_requested = false;
  }
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;

  ImGui::TextUnformatted(dlg.kind == FileKind::Checkpoint
                             ? "Path of a checkpoint (.pth, .pt, .safetensors, .bin):"
                             : "Path of an image (PNG, JPEG, BMP, TIFF, WebP, PPM):");
  ImGui::SetNextItemWidth(560.0f);
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  const bool entered =
      ImGui::InputText("##path", &dlg.path_input, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::TextDisabled("Tip: files can also be dropped onto the window.");
  ImGui::Spacing();

  const std::string path = normalize_user_path(dlg.path_input);
  ImGui::BeginDisabled(path.empty());
  const bool open_clicked = ImGui::Button("Open", ImVec2(120.0f, 0.0f));
  ImGui::EndDisabled();
  ImGui::SameLine();
  const bool cancelled = ImGui::Button("Cancel", ImVec2(120.0f, 0.0f)) ||
                         ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false);

  if ((entered || open_clicked) && !path.empty()) {
    state.open_requests.push_back(OpenRequest{dlg.kind, path});
    ImGui::CloseCurrentPopup();
  } else if (cancelled) {
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace attnlab::gui
