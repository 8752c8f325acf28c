// What the current view needs computed, submitted to the ComputeWorker once per frame on
// the main thread (schedule_compute.cpp): each (model, image) analysed once for its edits
// and the analyses' options, then the current query's maps, rollout and class explanation
// from that analysis.
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"

namespace attnlab::gui {

// Submits what the view needs and is neither done nor under way.
void schedule_compute(GuiState& state, ComputeWorker& worker);

}  // namespace attnlab::gui
