// The tiled workspace under the menu bar: the sidebar (models, images, controls) on the
// left, the view with its tabs (Maps, HiLo spectra, Rank, Anchors, Locality, Top-5,
// Checkpoint) on the right, and the status bar along the bottom with the worker's
// progress and a Cancel button. Tiled every frame from the window size, so nothing is
// lost off-screen when the window is resized.
// ImGui calls only: main thread, between ImGui::NewFrame() and ImGui::Render().
#pragma once

#include "app/gui/compute_worker.h"
#include "app/gui/gui_state.h"

namespace attnlab::gui {

void draw_workspace(GuiState& state, ComputeWorker& worker);

}  // namespace attnlab::gui
