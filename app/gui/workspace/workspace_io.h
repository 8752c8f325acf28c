// The open workspace to and from a workspace file (workspace_file.h): File > Save
// workspace writes the models with their options, the images with their what-if edits and
// what is shown; opening one (File > Open, a drop, `attnlab gui FILE.attnlab`) adds them
// to the workspace as opening each file would, with the edits in place. Main thread.
#pragma once

#include <string>

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/load_worker.h"

namespace attnlab::gui {

// Writes the workspace; false with the reason in `message` when it cannot.
bool save_workspace(const GuiState& state, const std::string& path, std::string* message);
// Opens the file's models and images; false with the reason when it cannot be read (then
// nothing is opened).
bool open_workspace(GuiState& state, LoadWorker& loader, ComputeWorker& compute,
                    const std::string& path, std::string* message);

}  // namespace attnlab::gui
