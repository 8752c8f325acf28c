// The Maps tab: the picture the model saw with the current map over it. Hover shows the
// token under the mouse, a click picks the query (answered from the traces, no forward
// pass), the wheel zooms and a right-drag pans; the token grid, the query and a colorbar
// are drawn on top. Single view, all-heads grid, and compare: every model side by side
// (synced query, each on its own scale or one shared scale, the difference A − B of any
// two), drawn as the same figure Export writes (compare_figure.h).
#pragma once

#include "app/gui/gui_state.h"

namespace attnlab::gui {

// Reads the state, edits the view (query clicks, hover, zoom, pan) and draws through the
// texture cache.
void draw_maps_tab(const Workspace& ws, const FrameView& frame, ViewState& view,
                   TextureCache& cache);

}  // namespace attnlab::gui
