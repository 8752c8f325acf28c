// The map views as figures, drawn by the same function for the screen and for Export, so
// the file is what the view shows (panels, scales, colormaps, grids, query markers,
// windows, colorbars, the difference panel): the compare view is every model's map side
// by side (viz::model_compare_figure, the report's "compare" figure), the single view the
// current model's map with its colorbar (the report's "map" figure).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/gui/gui_state.h"
#include "app/gui/views/texture_cache.h"

namespace attnlab::gui {

// Which model each panel of the compare figure shows, in panel order: panel 0 is the
// input picture, then `models` (workspace indices, those with a map), then the difference
// when the view asks for one of two of them.
struct ComparePanels {
  std::vector<int> models;
  // A − B as positions in `models` (the report's --compare-difference A,B).
  std::optional<std::pair<int, int>> difference;
  // The workspace model of panel p (-1: the input or the difference).
  int model_of(int panel) const {
    return panel >= 1 && panel <= int(models.size()) ? models[size_t(panel - 1)] : -1;
  }
};
ComparePanels compare_panels(const Workspace& ws, const ViewState& view);

// The figure (as a job owning its inputs) and the key naming what it shows (for the
// texture cache: the same key, the same drawing). The keys are for the draw path: they
// read the frame's view model (GuiState::frame).
FigureJob compare_figure_job(const Workspace& ws, const ViewState& view);
std::string compare_figure_key(const Workspace& ws, const ViewState& view, const FrameView& frame,
                               const ComparePanels& panels);
FigureJob single_map_figure_job(const Workspace& ws, const ViewState& view);
std::string single_map_figure_key(const Workspace& ws, const ViewState& view,
                                  const FrameView& frame);
// The Maps tab's "edited − original" view (the image has what-if edits, edit_view.h):
// the current model's map of the original picture, of the edited one, and their
// difference on a diverging scale; shown in the single view of a query, CLS, similarity
// or rollout map.
bool edit_difference_shown(const Workspace& ws, const ViewState& view);
FigureJob edit_difference_figure_job(const Workspace& ws, const ViewState& view);
std::string edit_difference_figure_key(const Workspace& ws, const ViewState& view,
                                       const FrameView& frame);
// What the heads grid (the report's head_maps figure of the current model) shows.
std::string heads_figure_key(const Workspace& ws, const ViewState& view, const FrameView& frame);
// What a class explanation's figure shows: the style, the class and method, and the
// explanation of every model shown (the current one, or all in the compare view).
std::string explanation_figure_key(const Workspace& ws, const ViewState& view);

}  // namespace attnlab::gui
