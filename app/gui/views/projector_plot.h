// One of the Projector tab's scatter plots (issue 70): the main folder's projection or the
// comparison's, one point per image coloured as the tab says, with zoom (wheel) and pan
// (right drag), the hovered point's tooltip (its picture, label, prediction, confidence),
// a click opening the image in the workspace and Shift + drag selecting a box. The
// selection and the hovered row are rows shared by both plots: each highlights them, and
// the patch retrieval's query image (boxed) and matched images (ringed).
#pragma once

#include <imgui.h>

#include "app/gui/gui_state.h"
#include "app/gui/projector/projector_state.h"
#include "app/gui/views/gl_texture.h"

namespace attnlab::gui {

// Draws `plot`'s projection into a `size` region at the cursor; returns the row under the
// mouse (-1 for none). Records the count of selected points drawn in its side's
// drawn_selected.
int draw_projector_plot(ProjectorState& p, ProjectorPlot plot, FrameRequests& requests,
                        StatusBarState& status, ImVec2 size);

// Row i's picture: a dataset's pixels uploaded here (28×28, cheap), a file's asked of the
// load worker (the frame loop submits it; null until it comes).
const GlTexture* projector_thumbnail(ProjectorState& p, int i);
// The tooltip of row i as folder `d` (its model's prediction) has it: its picture, label,
// prediction, confidence and, when coloured by it, the head's entropy. `at`: where (null:
// by the mouse).
void draw_projector_tooltip(ProjectorState& p, const EmbedFolder& d, int i, const ImVec2* at);

}  // namespace attnlab::gui
