// Room workspace/ (app/gui/workspace): what is opened, saved and edited: the open models
// (with their load options) and images, the compute each frame schedules for them,
// closing slots, workspace files and the settings kept between runs, the desktop's file
// chooser, and what kind of file a path is.
//
// The workspace's per-frame bookkeeping on the main thread: opening models and images,
// and scheduling the compute the current view needs — each (model, image) analysed once,
// the maps of the current query computed from its traces when the query changes.
// Work only goes to the ComputeWorker; its answers come back as typed results
// (jobs/worker_results.h).
#pragma once

#include <string>

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/load_worker.h"

namespace attnlab::gui {

// `base`, or "base (2)", "base (3)", ... when another model slot than `index` has that name:
// the same checkpoint opened twice (e.g. at two input sizes) stays two entries that the
// lists, the compare view and scripts (select-model NAME) tell apart.
std::string unique_model_name(const Workspace& ws, int index, const std::string& base);
// Opens an image and returns its index; a file already open is not opened again: its
// index is returned (and *already_open set, when given).
int add_image(Workspace& ws, LoadWorker& loader, const std::string& path,
              bool* already_open = nullptr);
// The query the view asks for (the kind decides: CLS asks for the cls token).
// Makes cell (row, col) of the current model's first-layer grid the query of every view.
void set_query_cell(const Workspace& ws, ViewState& view, int row, int col);
MapQuery wanted_query(const Workspace& ws, const ViewState& view, int model);
// What the rollout the view asks of `query` is keyed by: the query and the switches.
std::string rollout_key(const ViewState& view, const MapQuery& query);
// The maps' cache key: the query and the facet its similarity maps compare.
std::string maps_key(const ViewState& view, const MapQuery& query);
// The class explanation the view asks for (meaningful while it shows Grad-CAM or
// gradient rollout).
ExplainRequest wanted_explanation(const ViewState& view);
// The index of the model / image slot with this id (ModelSlot::id), or -1 once it is closed.
int find_model(const Workspace& ws, uint64_t id);
int find_image(const Workspace& ws, uint64_t id);
// The result slot of (model, image), or nullptr.
const ResultSlot* result_of(const Workspace& ws, int model, int image);
// Whether some model's analysis of the current image failed or was cancelled (the status
// bar then offers Analyse again).
bool image_has_failed_analysis(const Workspace& ws, const ViewState& view);

}  // namespace attnlab::gui
