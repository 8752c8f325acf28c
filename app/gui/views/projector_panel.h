// The Projector tab's side panel (issue 70): the legend of the colouring with its counts,
// and the selection — the group's size, its accuracy against the rest's (for each model
// when a comparison is open) and each class's share in the group against the rest; the
// group's mean attention map beside the rest's (projector/projector_groups.h); with head
// statistics, the head picked and its extreme images (the sharpest and the broadest).
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/projector/projector_state.h"

namespace attnlab::gui {

void draw_projector_legend(const ProjectorState& p);
void draw_projector_selection(const ProjectorState& p);  // its size and accuracies
void draw_projector_shares(const ProjectorState& p);     // its classes against the rest's
// The Group maps button (with the workspace's current model) and the two maps.
void draw_projector_group_maps(ProjectorState& p, const Workspace& ws, const ViewState& view,
                               StatusBarState& status);
// The layer and head pickers and the picked head's extremes as rows "#row entropy" (hover:
// the point ringed; click: the image opened); nothing without head statistics.
void draw_projector_heads(ProjectorState& p, FrameRequests& requests, StatusBarState& status);

}  // namespace attnlab::gui
