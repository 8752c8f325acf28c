// The tiled workspace under the menu bar: the Image panel (left), the Checkpoint panel
// (right) and the status bar along the bottom. Fixed tiling for now, recomputed every
// frame from the window size, so nothing is lost off-screen when the window is resized.
// ImGui calls only: main thread, between ImGui::NewFrame() and ImGui::Render().
#pragma once

#include "app/gui/gui_state.h"

namespace attnlab::gui {

void draw_workspace(GuiState& state);

}  // namespace attnlab::gui
