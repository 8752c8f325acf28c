// The left sidebar (models, images, map and overlay controls) and the keyboard shortcuts
// with their help overlay:
//   arrows: move the query   [ ]: layer   , .: head   space: all-heads grid
//   c: compare   1..6: query / CLS / rollout / Grad-CAM / grad rollout / similarity
//   h or F1: this help
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"

namespace attnlab::gui {

// Panels read the concerns they show (const) and edit only those they are given mutable.
void draw_sidebar(const Workspace& ws, const SeriesState& series, const SizeSweepState& sweep,
                  const DeviceState& device, ViewState& view, FrameRequests& requests);
void handle_view_keys(const Workspace& ws, ViewState& view);
void draw_help_overlay(ViewState& view);

// Clamps the view's indices to what is loaded.
void clamp_view(const Workspace& ws, ViewState& view);

}  // namespace attnlab::gui
