// The per-frame glue between the GUI's state and the workers, run at the start of each frame on
// the main thread: dropped files and files picked in the chooser become open requests; open
// requests become workspace entries (images are decoded by the LoadWorker for their thumbnails,
// models load on the ComputeWorker, checkpoints are also summarised for the Checkpoint tab);
// finished loads become textures (which is why this runs on the main thread); the compute
// worker's answers are applied, each kind by its own function (worker_results.h).
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/load_worker.h"

namespace attnlab::gui {

// The files picked in the desktop's file chooser become open requests.
void take_native_dialog_answer(NativeDialog& native, StatusBarState& status,
                               FrameRequests& requests);
// Dropped files and folders become open requests (an unknown kind of file: the status bar
// says so).
void route_dropped_files(FrameRequests& requests, StatusBarState& status);
// The open requests become workspace entries, loads and recent files.
void submit_open_requests(GuiState& state, LoadWorker& loader, ComputeWorker& compute);
// The load worker's answers: thumbnails, checkpoint summaries, the runtime line.
void apply_load_results(GuiState& state, LoadWorker& loader);
// The compute worker's answers, oldest first, each applied by the function of its kind.
void apply_worker_results(GuiState& state, ComputeWorker& compute);

}  // namespace attnlab::gui
