// The Projector tab's patch retrieval (issue 70 goal 4) on screen: a panel under the plot
// with the query — the workspace's current image and query cell —, k, "exclude its own
// image", Find similar patches and why it cannot run, and the gallery of matches: each match's crop
// around its patch (outlined), its place, score, image name and label; a click opens that
// image in the workspace with the matched patch as the query cell. ImGui calls only (main
// thread); the search and the crops are projector/patch_retrieval.h's jobs.
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/projector/projector_state.h"

namespace attnlab::gui {

// The height the panel under the plot needs: 0 unless the main folder holds every patch's
// vector; one line of controls, or those and the gallery.
float retrieval_panel_height(const ProjectorState& p, float avail_height);
// The panel under the plot: the query, k, "exclude its own image", Find similar patches,
// the error, and the gallery of matches.
void draw_retrieval_panel(ProjectorState& p, const Workspace& ws, ViewState& view,
                          FrameRequests& requests, StatusBarState& status);
// For a folder of pooled embeddings, a line in the side panel saying what retrieval needs
// (and the last refusal).
void draw_retrieval_note(const ProjectorState& p);

}  // namespace attnlab::gui
