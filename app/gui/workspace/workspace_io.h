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
bool save_workspace(const Workspace& open, const ViewState& view, const std::string& path,
                    std::string* message);
// Opens the file's models and images; false with the reason when it cannot be read (then
// nothing is opened).
// The models load where and as the pickers say (`device`); the file's shown model and
// image become the view's.
bool open_workspace(Workspace& open, ViewState& view, const DeviceState& device, LoadWorker& loader,
                    ComputeWorker& compute, const std::string& path, std::string* message);

}  // namespace attnlab::gui
