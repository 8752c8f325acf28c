// The per-frame glue between GuiState and the LoadWorker, run at the start of each frame
// on the main thread: dropped files become open requests, open requests become jobs
// (their panels switch to "loading"), finished jobs become panel contents (images are
// uploaded to GL textures here, which is why this runs on the main thread).
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/load_worker.h"

namespace attnlab::gui {

void route_dropped_files(GuiState& state);
void submit_open_requests(GuiState& state, LoadWorker& worker);
void apply_results(GuiState& state, LoadWorker& worker);

}  // namespace attnlab::gui
