// The Projector tab's work outside drawing (issue 70): turning its requests into jobs (the
// embed folder read on the compute worker's Traces lane, the projection on its Models lane
// with progress and Cancel, file thumbnails on the load worker), applying their answers,
// the box selection, opening a point's image in the workspace, and the JSON a script's
// projector-info writes. Main thread; the jobs themselves touch no GL.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/load_worker.h"
#include "app/gui/projector/projector_state.h"

namespace attnlab::gui {

const char* projection_method_name(ProjectionMethod m);  // "PCA", "t-SNE", "UMAP"

// The frame loop, after the panels: the folder to read, the projection to compute, the file
// thumbnail to decode that the tab or a script asked for.
void run_projector_requests(ProjectorState& p, LoadWorker& loader, ComputeWorker& compute);
// Whether a request is waiting for the next frame (a script's wait-idle waits for it too).
bool projector_has_requests(const ProjectorState& p);
// The status bar's Cancel: what was being read or computed will not come.
void cancel_projector(ProjectorState& p);

void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorLoaded& r);
void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorProjected& r);
// A load worker's image: true when it was a projector thumbnail (then it is taken here).
bool apply_projector_thumbnail(ProjectorState& p, JobResult& r);

// The points whose projection lies in the box (projection coordinates, any corner order).
void select_box(ProjectorState& p, float x0, float y0, float x1, float y1);
void clear_selection(ProjectorState& p);

// The image of point i as a file: its path (relative paths also tried against the folder),
// or for a dataset image a PNG written to the temporary folder. "" with *error on failure.
std::string point_image_file(const ProjectorState& p, int i, std::string* error);
// Opens point i's image in the workspace, as File > Open does (every view shows it).
bool open_point(ProjectorState& p, int i, FrameRequests& requests, StatusBarState& status);

// What the tab holds now, for scripts (projector-info).
nlohmann::json projector_info(const ProjectorState& p, const Workspace& ws, const ViewState& view);

}  // namespace attnlab::gui
