// Which map a view shows, resolved from the view settings and a result: the layer (mapped
// by relative depth for other models in the compare view), the head or head fusion, the
// map kind (query row, CLS row, rollout) — as a rows x cols float grid with a label
// (frame_view.h). The frame loop resolves them once per frame (compute_frame_view).
#pragma once

#include <string>
#include <vector>

#include "app/gui/gui_state.h"
#include "app/session/results.h"
#include "viz/figures/attention_maps.h"

namespace attnlab::gui {

// The view's map as `attnlab report` states it (--layer N/T, --head, --head-fusion,
// --map): the current model's layer (clamped to its layers; -1: the last) of its layer
// count, the head or head fusion, and whether the maps are rollouts.
session::MapView map_view(const Workspace& ws, const ViewState& view);
// The layer index model `model` shows when the current model shows view.layer: the same
// index, or the same relative depth in a model with another layer count.
int mapped_layer(const Workspace& ws, const ViewState& view, int model);
// The map of `model` on the current image; head < -1 means "as the view says".
ShownMap shown_map(const Workspace& ws, const ViewState& view, int model, int head = -2);
// The same map of the current image's original picture, while the image has what-if
// edits (ResultSlot::original; the "edited − original" view).
ShownMap shown_original_map(const Workspace& ws, const ViewState& view, int model);
// The frame's view model: every model's map and, with the heads grid on, each head of the
// current model's. The frame loop computes it once (GuiState::frame); panels read it.
FrameView compute_frame_view(const Workspace& ws, const ViewState& view);
// The query model `model`'s shown map answers, as figures state it (the cell on the first
// layer's grid, or the prefix token); a rollout's is the query it is of (the cls token for
// the default query where the model has one), as the report states it.
viz::MapQuery shown_figure_query(const Workspace& ws, const ViewState& view, int model,
                                 const ShownMap& m);
// The overlay's value range for this map under the view's normalisation; with the shared
// scale on (compare), the union over the given maps.
viz::ValueRange map_value_range(const ViewState& view, const ShownMap& map,
                                const std::vector<const ShownMap*>& shared);

}  // namespace attnlab::gui
