// Closing a model or an image of the workspace (the lists' × buttons and the
// scripts' close-model / close-image), at the start of the frame after the one that asked
// (apply_close_requests). The slot leaves its list and the ones after it move up; everything
// indexed by position (results, the view, the series, the size sweep, the compare difference)
// follows. Jobs still running for it are not stopped: they hold their own reference to the model,
// finish, and their answers, which find their slot by id (ModelSlot::id), find none and are
// dropped.
#pragma once

#include "app/gui/gui_state.h"

namespace attnlab::gui {

// What follows the close: the results (dropped or moved), the view's indices, the series and
// the size sweep (reset with their model or image), and the status bar's notice.
void close_model(Workspace& ws, ViewState& view, SeriesState& series, SizeSweepState& sweep,
                 StatusBarState& status, int index);
void close_image(Workspace& ws, ViewState& view, SeriesState& series, SizeSweepState& sweep,
                 StatusBarState& status, int index);
// The requests of this frame (FrameRequests::close_models / close_images), by id.
void apply_close_requests(GuiState& state);

}  // namespace attnlab::gui
