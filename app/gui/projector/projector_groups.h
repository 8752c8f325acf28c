// The Projector's group maps (issue 70): the selection's mean attention map against the
// rest's, through the workspace's current model — each side's images (at most
// ProjectorGroupMaps::kCap, evenly spaced) run on the compute worker (jobs/group_maps.h).
// Main thread: asking, submitting, applying the answer, the JSON for projector-info.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/projector/projector_state.h"

namespace attnlab::gui {

// Asks for the maps of the selection and the rest with the current model of `ws` (the
// image files written first for dataset images). False with *error when there is no
// loaded model, no selection, or nothing outside it.
bool request_group_maps(ProjectorState& p, const Workspace& ws, const ViewState& view,
                        std::string* error);
// The frame loop: submits what was asked for.
void run_group_maps_request(ProjectorGroupMaps& g, ComputeWorker& compute);
void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorGroupMapsDone& r);
// For projector-info.
nlohmann::json group_maps_info(const ProjectorGroupMaps& g);

}  // namespace attnlab::gui
