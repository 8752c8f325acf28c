// The Maps tab's "the picture the model saw" (the sidebar's toggle, ViewState::show_input):
// the model's input after its preprocessing (resize, centre crop; as analysed, so at the
// input size it runs at) without a map, captioned with its size and the preprocessing's
// description. Drawn on the render worker like every overlay; main thread only.
#pragma once

#include <imgui.h>

#include "app/gui/gui_state.h"
#include "app/gui/views/texture_cache.h"

namespace attnlab::gui {

// Fits the picture into `size`; it is upscaled (nearest) to at least `min_side` pixels so
// that it stays crisp when drawn large.
void draw_input_picture(const Workspace& ws, const ViewState& view, TextureCache& cache, int model,
                        ImVec2 size, int min_side);

}  // namespace attnlab::gui
