// The Projector tab's work outside drawing (issue 70): turning its requests into jobs (an
// embed folder read on the compute worker's Traces lane, the projection on its Models lane
// through session::project_embeddings with progress and Cancel, file thumbnails on the load
// worker), applying their answers, the comparison folder (the same images through another
// model, checked), the selection, opening a point's image in the workspace, and the JSON a
// script's projector-info writes (projector_info.cpp). Patch retrieval is
// projector/patch_retrieval.h. Main thread; the jobs themselves touch no GL.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/load_worker.h"
#include "app/gui/projector/projector_state.h"

namespace attnlab::gui {

// The frame loop, after the panels: the folders to read, the projections to compute, the
// file thumbnail to decode that the tab or a script asked for.
void run_projector_requests(ProjectorState& p, LoadWorker& loader, ComputeWorker& compute);
// Whether a request is waiting for the next frame (a script's wait-idle waits for it too).
bool projector_has_requests(const ProjectorState& p);
// The status bar's Cancel: what was being read or computed will not come.
void cancel_projector(ProjectorState& p);

// Opens `dir` as the main folder / the comparison ("" closes the comparison); read from the
// next frame on.
void open_projector_folder(ProjectorState& p, const std::string& dir);
void open_projector_compare(ProjectorState& p, const std::string& dir);
// Projects both folders again by the method and options of `p` (the Project button).
void request_projection(ProjectorState& p);

// "" when `b` holds the images of `a` in the same order (images.csv's image column), else
// what differs, for the refusal.
std::string same_images_error(const EmbedFolder& a, const EmbedFolder& b);

void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorLoaded& r);
void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorProjected& r);
// A load worker's image: true when it was a projector thumbnail (then it is taken here).
bool apply_projector_thumbnail(ProjectorState& p, JobResult& r);

// The rows whose projection in `plot` lies in the box (its coordinates, any corner order):
// the selection of both plots.
void select_box(ProjectorState& p, float x0, float y0, float x1, float y1,
                ProjectorPlot plot = ProjectorPlot::Main);
void clear_selection(ProjectorState& p);

// The image of row i as a file: its path (relative paths also tried against the folder),
// or for a dataset image a PNG written to the temporary folder. "" with *error on failure.
std::string point_image_file(const ProjectorState& p, int i, std::string* error);
// Opens row i's image in the workspace, as File > Open does (every view shows it).
bool open_point(ProjectorState& p, int i, FrameRequests& requests, StatusBarState& status);

// Keeps the picked head within the main folder's head statistics (layer, then that layer's
// heads).
void clamp_projector_head(ProjectorState& p);
// The colouring's name as projector-color writes it ("label", ..., "head-entropy").
std::string projector_colour_name(ProjectorColour c);

// What the tab holds now, for scripts (projector-info).
nlohmann::json projector_info(const ProjectorState& p, const Workspace& ws, const ViewState& view);

}  // namespace attnlab::gui
