// The sidebar's section on the current model (issue 22): how attnlab decided what the
// checkpoint is (the recognition line: the preset it matched, or the config read from its
// shapes and what was assumed), its input size and preprocessing, the fields that run it
// at another input size H x W (as the CLI's --img-size) or give it a class-names file (as
// --class-names), the reason a change was refused, and the toggle that shows the picture
// the model saw. Fields are typed into ViewState::model_edit; Apply sends the new options
// as a FrameRequest, and the model is loaded again on the worker (model_options.h).
#pragma once

#include "app/gui/gui_state.h"

namespace attnlab::gui {

void draw_model_panel(const Workspace& ws, ViewState& view, FrameRequests& requests);

}  // namespace attnlab::gui
