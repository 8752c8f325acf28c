// Which map a view shows, resolved from the view settings and a result: the layer (mapped
// by relative depth for other models in the compare view), the head or head fusion, the
// map kind (query row, CLS row, rollout) — as a rows x cols float grid with a label.
#pragma once

#include <string>
#include <vector>

#include "app/gui/gui_state.h"

namespace attnlab::gui {

struct ShownMap {
  bool ok = false;
  std::string why;  // when !ok: what is missing ("computing...", "no cls token", ...)
  int rows = 0, cols = 0;
  std::vector<float> values;
  int layer = -1;                      // traced layer index (-1 for rollout)
  int first_rows = 0, first_cols = 0;  // the first layer's grid (queries live there)
  std::string label;                   // "layer 3, head 1", "rollout", ...
  int window = 0;                // local attention windows to outline (HiLo), in cells; 0: none
  std::string grid_note;         // the grid it lives on, when that needs saying (stages, windows)
  MapQuery query;                // the query it answers (when ok; none for explanations)
  double seconds = 0;            // how long answering it from the traces took
  const void* source = nullptr;  // the result it was cut from (its identity keys textures)
};

// The layer index model `model` shows when the current model shows view.layer.
int mapped_layer(const GuiState& state, int model);
// The map of `model` on the current image; head < -1 means "as the view says".
ShownMap shown_map(const GuiState& state, int model, int head = -2);
// The overlay's value range for this map under the view's normalisation; with the shared
// scale on (compare), the union over the given maps.
viz::ValueRange map_value_range(const GuiState& state, const ShownMap& map,
                                const std::vector<const ShownMap*>& shared);

}  // namespace attnlab::gui
