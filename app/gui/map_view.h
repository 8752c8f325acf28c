// The Maps tab: the picture the model saw with the current map over it. Hover shows the
// token under the mouse, a click picks the query (answered from the traces, no forward
// pass), the wheel zooms and a right-drag pans; the token grid, the query and a colorbar
// are drawn on top. Single view, all-heads grid, compare (2-6 models side by side,
// synced query, shared scale) and the difference of two models.
#pragma once

#include "app/gui/gui_state.h"

namespace attnlab::gui {

// Reads the state, edits the view (query clicks, hover, zoom, pan) and draws through the
// texture cache.
void draw_maps_tab(const GuiState& state, ViewState& view, TextureCache& cache);

}  // namespace attnlab::gui
