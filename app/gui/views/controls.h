// The left sidebar (models, images, map and overlay controls) and the keyboard shortcuts
// with their help overlay:
//   arrows: move the query   [ ]: layer   , .: head   space: all-heads grid
//   c: compare   1..6: query / CLS / rollout / Grad-CAM / grad rollout / similarity
//   h or F1: this help
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"

namespace attnlab::gui {

// Panels read the whole state and edit only the slice they are given (here the view).
void draw_sidebar(const GuiState& state, ViewState& view, FrameRequests& requests);
void handle_view_keys(const GuiState& state, ViewState& view);
void draw_help_overlay(ViewState& view);

// Clamps the view's indices to what is loaded.
void clamp_view(const GuiState& state, ViewState& view);

}  // namespace attnlab::gui
