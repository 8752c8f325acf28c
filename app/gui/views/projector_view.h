// The Projector tab (issue 70): an `attnlab embed` folder's embeddings projected to 2-D by
// PCA, t-SNE or UMAP (computed on the worker), drawn as points coloured by label,
// prediction, correct/wrong or confidence, with a legend. Hover shows the image and its
// label, prediction and confidence; a click opens the image in the workspace; Shift + drag
// selects a box, whose size, accuracy and class histogram against the rest are shown beside
// the plot. A second folder of the same images (another model's) is projected alike and
// drawn beside the first; the selection and the hovered point show in both. Wheel zooms,
// right-drag pans. A tokens folder also finds the patches most similar to the workspace's
// query patch, shown as a gallery under the plot. ImGui calls only (main thread); the plots
// are views/projector_plot.h, the legend and selection views/projector_panel.h, the patch
// retrieval views/retrieval_gallery.h.
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/projector/projector_state.h"

namespace attnlab::gui {

void draw_projector_tab(ProjectorState& p, const Workspace& ws, ViewState& view,
                        FrameRequests& requests, StatusBarState& status);

}  // namespace attnlab::gui
