// The main menu bar (File: Open image..., Open checkpoint..., Quit), its keyboard
// shortcuts, and the small "type a path" popup that stands in for a native file dialog.
// ImGui calls only: main thread, between ImGui::NewFrame() and ImGui::Render().
#pragma once

#include "app/gui/gui_state.h"

namespace attnlab::gui {

void handle_shortcuts(GuiState& state);
void draw_main_menu(GuiState& state);
void draw_open_dialog(GuiState& state);
void draw_export_dialog(GuiState& state);

}  // namespace attnlab::gui
