// Room views/ (app/gui/views): what draws a tab or a panel each frame (ImGui on the main
// thread): the tiled panels and the sidebar's controls, the menu, the Maps tab and the
// analysis tabs, the figure a tab shows and the textures it is drawn into, and the command
// File > Copy settings as command writes. A view reads the state it shows and records what
// the user asked for (GuiState::requests, the view settings); the work itself goes to
// jobs/, and opening or saving files to workspace/.
//
// The tiled workspace under the menu bar: the sidebar (models, images, controls) on the
// left, the view with its tabs (Maps, HiLo spectra, Rank, Anchors, Locality, Top-5,
// Checkpoint) on the right, and the status bar along the bottom with the worker's
// progress and a Cancel button. Tiled every frame from the window size, so nothing is
// lost off-screen when the window is resized.
// ImGui calls only: main thread, between ImGui::NewFrame() and ImGui::Render().
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"

namespace attnlab::gui {

void draw_workspace(GuiState& state, ComputeWorker& worker);

}  // namespace attnlab::gui
