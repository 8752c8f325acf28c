// The per-frame glue between GuiState and the workers, run at the start of each frame on
// the main thread: dropped files and files picked in the chooser become open requests; open
// requests become workspace entries (images are decoded by the LoadWorker for their thumbnails,
// models load on the ComputeWorker, checkpoints are also summarised for the Checkpoint tab);
// finished loads become textures (which is why this runs on the main thread).
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/load_worker.h"

namespace attnlab::gui {

// The files picked in the desktop's file chooser become open requests.
void take_native_dialog_answer(GuiState& state);
void route_dropped_files(GuiState& state);
void submit_open_requests(GuiState& state, LoadWorker& loader, ComputeWorker& compute);
void apply_results(GuiState& state, LoadWorker& loader);

}  // namespace attnlab::gui
