// What-if editing in the GUI (issue 48; LIT's datapoint editor for images): occlude, blur
// or paint squares of tokens with the mouse, or paste tokens from another open image, on
// the picture every model sees; every view follows the edited image, and the Maps tab can
// show "edited − original". The edits are the image's list of image::EditOp (gui_state.h:
// ImageSlot::edits), which Copy settings as command replays with `--edit` and Export
// writes beside the figure. The sidebar's EDIT section and the map's presses only ask
// (EditToolState::pending, undo, clear); the frame's start acts (apply_edit_requests).
#pragma once

#include <string>

#include "app/gui/gui_state.h"

namespace attnlab::gui {

// The edit the brush makes when pressed on cell (row, col) of the current model's
// first-layer grid: a brush-sized square centred there (top-left when even), a paste from
// the same place (+ the tool's offset, kept on the grid) of the paste image.
image::EditOp brush_edit(const Workspace& ws, const ViewState& view, int row, int col);

// A press (new_stroke) or the drag that follows it on (row, col): asks for the brush's edit
// there; a drag asks once per cell it enters. Main thread, from the map view or a script.
void request_paint(const Workspace& ws, ViewState& view, int row, int col, bool new_stroke);

// Turns the view's pending presses, Undo (the last stroke) and Clear into the current
// image's edits; the changed image is analysed again by schedule_compute.
void apply_edit_requests(Workspace& ws, ViewState& view, StatusBarState& status);

// The current image's edits as `--edit` takes them ("" when it has none).
std::string current_edits_text(const Workspace& ws, const ViewState& view);

// The sidebar's EDIT section: the switch, the tool, the brush, the colour, the paste
// source, Undo, Clear, the difference view, and the current model's top-1 before and after.
void draw_edit_controls(const Workspace& ws, ViewState& view);

}  // namespace attnlab::gui
