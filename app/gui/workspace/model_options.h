// Loading a model of the workspace with its options (analysis_jobs.h: ModelOptions: the
// architecture of a checkpoint that does not say it, the input size H x W to run at, a
// class-names file), always on the compute worker's models lane:
// * the first load: a failure marks the slot failed, with why (an unrecognised checkpoint
//   names its nearest presets) and the "load as" picker;
// * new options for a model that is open: the model is chosen again through
//   session::ModelRequest and checked on a blank picture (analysis_jobs.h: load_model);
//   when that works it replaces the old one and every result of that model is computed
//   again; when it fails (a size the model cannot take, a names file that does not name
//   its classes) the error is shown and the model stays as it was.
// Main-thread functions; the state they touch is the workspace's model slot and its results.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/worker_results.h"

namespace attnlab::gui {

// Opens a model (loaded on the worker) with the pickers' device and precision and, when
// given, `options`' preset, input size and class names (a saved workspace's).
void add_model(Workspace& ws, const DeviceState& device, ComputeWorker& worker,
               const std::string& arg, const ModelOptions* options = nullptr);
// Loads model slot `index` again, as `preset` (the picker for unrecognised checkpoints).
void retry_model_as(Workspace& ws, ComputeWorker& worker, int index, const std::string& preset);
// Loads model slot `index` with `options` (see above: a first load when the slot is not
// ready, else a change of options).
void submit_model_load(Workspace& ws, ComputeWorker& worker, int index,
                       const ModelOptions& options);
// The device or precision picker's change, `change` applied to every model's options: an
// open model loads again with them, and so does one whose load failed (it may have failed
// for the old device or precision); one still loading keeps them for its retry.
void reload_every_model(Workspace& ws, ComputeWorker& worker,
                        const std::function<void(ModelOptions&)>& change);

// A load's answer: the model takes its slot (its results and series are dropped: they were
// of the model it replaces); or the slot fails, or, for new options of an open model, the
// model stays as it was and the refusal is shown where it runs.
void apply_result(Workspace& ws, SeriesState& series, const ModelLoaded& loaded);
void apply_result(Workspace& ws, DeviceState& device, StatusBarState& status,
                  const ModelLoadFailed& failed);

// What the sidebar says of the input: "224x224 (the model's own)", "384x384 (set)".
std::string input_size_label(const ModelInfo& info);

}  // namespace attnlab::gui
