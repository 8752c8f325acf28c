// The Projector's patch retrieval (issue 70 goal 4), main-thread side: with the main folder
// written by `attnlab embed --pool tokens`, the workspace's current image and query cell
// (the Maps tab's click, set_query_cell) ask for the k patches of the folder most similar to
// that patch. The query vector is the folder's own when the image is one of its rows (opened
// from the projector, or the same file), else computed by the workspace's model when it is
// the model embed.json names; anything else is refused with why (not a tokens folder,
// another model, a cell of another grid). The search and the crops run on the compute
// worker (projector/retrieval_search.h) with the status bar's progress and Cancel; the
// answers come back through the worker results like the tab's other jobs. Also: opening a
// match (its image in the workspace, its patch the query cell) and the JSON for
// projector-info.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/projector/projector_state.h"

namespace attnlab::gui {

// "" when the main folder can be searched by patch (a tokens folder with its grid), else why
// not, to show in the tab.
std::string retrieval_folder_error(const ProjectorState& p);

// Asks for the retrieval of the view's query cell of the workspace's current image (k and
// exclude_self from p.retrieval). False with *error (also kept as p.retrieval.error) when
// refused; the search starts at the next frame.
bool request_patch_retrieval(ProjectorState& p, const Workspace& ws, const ViewState& view,
                             std::string* error);
// The frame loop: submits what was asked for.
void run_retrieval_request(ProjectorRetrieval& r, ComputeWorker& compute);
// The status bar's Cancel, or another folder: what was on the way will not come.
void cancel_retrieval(ProjectorRetrieval& r);
void clear_retrieval(ProjectorRetrieval& r);

void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorRetrieved& r);
void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorCropCut& r);

// Opens match `place`'s image in the workspace (as a click on its point does) and makes its
// patch the query cell (on the folder's grid: every view maps it to its model's).
bool open_retrieval_match(ProjectorState& p, int place, ViewState& view, FrameRequests& requests,
                          StatusBarState& status);

// For projector-info: the query, k, state, error, matches and the crops made.
nlohmann::json retrieval_info(const ProjectorState& p);

}  // namespace attnlab::gui
