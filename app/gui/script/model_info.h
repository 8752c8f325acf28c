// The script command model-info's answer: a model slot of the workspace as JSON, for
// scripts and tests to check what the GUI loaded and shows.
#pragma once

#include <nlohmann/json.hpp>

#include "app/gui/gui_state.h"

namespace attnlab::gui {

// Model slot `index` as JSON for scripts and tests (script command model-info): name,
// file, status and error, how it was recognised, its description, preprocessing, input
// size, options and the reason a change was refused, and the top-5 on the current image
// with the class names it uses.
nlohmann::json model_info_json(const Workspace& ws, const ViewState& view,
                               const SizeSweepState& sweep, int index);

}  // namespace attnlab::gui
