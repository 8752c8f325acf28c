// What the map view shows this frame, computed once per frame from the view settings and
// the results (map_source.h: compute_frame_view) and then only read by the panels: the
// draw path never re-derives a map from several helpers. Plain data.
#pragma once

#include <string>
#include <vector>

#include "app/gui/jobs/analysis_jobs.h"

namespace attnlab::gui {

// One map as a view shows it: resolved from the view settings and a result (the layer,
// mapped by relative depth for other models in the compare view; the head or head fusion;
// the map kind), as a rows x cols float grid with a label, or why there is none yet.
struct ShownMap {
  bool ok = false;
  std::string why;  // when !ok: what is missing ("computing...", "no cls token", ...)
  int rows = 0, cols = 0;
  std::vector<float> values;
  int layer = -1;                      // traced layer index (-1 for rollout)
  int first_rows = 0, first_cols = 0;  // the first layer's grid (queries live there)
  std::string label;                   // "layer 3, head 1", "rollout", ...
  int window = 0;                // local attention windows to outline (HiLo), in cells; 0: none
  int window_shift = 0;          // their tiling's offset in cells (Swin's shifted windows)
  int window_w = 0;              // their width in cells when not square (Swin's Wh×Ww); 0: window
  std::string grid_note;         // the grid it lives on, when that needs saying (stages, windows)
  MapQuery query;                // the query it answers (when ok; none for explanations)
  double seconds = 0;            // how long answering it from the traces took
  const void* source = nullptr;  // the result it was cut from (its identity keys textures)
};

// The frame's view model.
struct FrameView {
  std::vector<ShownMap> models;  // per workspace model, as the view says (single, compare)
  std::vector<ShownMap> heads;   // the current model's heads, when the heads grid shows
  ShownMap original;             // the current model's map of the original picture, when the view
                                 // shows "edited − original" (compare_figure.h)
};

}  // namespace attnlab::gui
