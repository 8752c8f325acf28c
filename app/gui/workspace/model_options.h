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
// Main-thread functions; the GUI state they touch is the model's slot and its results.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"

namespace attnlab::gui {

// Opens a model (loaded on the worker) with the pickers' device and precision and, when
// given, `options`' preset, input size and class names (a saved workspace's).
void add_model(GuiState& state, ComputeWorker& worker, const std::string& arg,
               const ModelOptions* options = nullptr);
// Loads model slot `index` again, as `preset` (the picker for unrecognised checkpoints).
void retry_model_as(GuiState& state, ComputeWorker& worker, int index, const std::string& preset);
// Loads model slot `index` with `options` (see above: a first load when the slot is not
// ready, else a change of options).
void submit_model_load(GuiState& state, ComputeWorker& worker, int index,
                       const ModelOptions& options);
// The device or precision picker's change, `change` applied to every model's options: an
// open model loads again with them, one not open keeps them for its retry.
void reload_every_model(GuiState& state, ComputeWorker& worker,
                        const std::function<void(ModelOptions&)>& change);

// Model slot `index` as JSON for scripts and tests (script command model-info): name,
// file, status and error, how it was recognised, its description, preprocessing, input
// size, options and the reason a change was refused, and the top-5 on the current image
// with the class names it uses.
nlohmann::json model_info_json(const GuiState& state, int index);

// What the sidebar says of the input: "224x224 (the model's own)", "384x384 (set)".
std::string input_size_label(const ModelInfo& info);

}  // namespace attnlab::gui
