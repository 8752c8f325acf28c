// What the current view needs computed, submitted to the ComputeWorker once per frame on
// the main thread (schedule_compute.cpp): each (model, image) analysed once for its edits
// and the analyses' options, then the current query's maps, rollout and class explanation
// from that analysis; and where their answers go when they come back.
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/worker_results.h"

namespace attnlab::gui {

// Submits what the view needs and is neither done nor under way.
void schedule_compute(Workspace& ws, const ViewState& view, ComputeWorker& worker);

// The answers of those jobs, each stored in the slot it is for while that slot still
// wants it (dropped when the model was loaded again, the image edited or closed); a
// failed query's error goes to the status bar.
void apply_result(Workspace& ws, const AnalysisDone& done);
void apply_result(Workspace& ws, const AnalysisFailed& failed);
void apply_result(Workspace& ws, StatusBarState& status, const MapsAnswered& answer);
void apply_result(Workspace& ws, StatusBarState& status, const RolloutAnswered& answer);
void apply_result(Workspace& ws, StatusBarState& status, const ExplanationAnswered& answer);

}  // namespace attnlab::gui
