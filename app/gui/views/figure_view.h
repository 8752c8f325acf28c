// A figure on screen: the texture the render worker drew for it (texture_cache.h), or why
// there is none yet, and what is under the mouse through the figure's geometry. The Maps
// views turn that into a token (hover, click, zoom); the analysis tabs show the value
// under the mouse (layer, head, frequency, ...) and copy it on a right click.
#pragma once

#include <imgui.h>

#include <functional>
#include <optional>
#include <string>

#include "app/gui/gui_state.h"

namespace attnlab::gui {

struct FigureHover {
  int panel = -1;
  double x = 0, y = 0;  // data coordinates of the panel
  const viz::FigureGeometry* geometry = nullptr;
};

// Shows the figure the slot draws for `key` (made by `make` when it is new) fitted into
// width x height pixels, or "drawing..." / the error. `shown` (when not null) records
// where it was drawn and at which DPI (ViewState::shown_figure). Returns the panel under
// the mouse, if any.
std::optional<FigureHover> show_figure(TextureCache& cache, const std::string& slot,
                                       const std::string& key,
                                       const std::function<FigureJob()>& make, int width,
                                       int height, ViewState::ShownFigure* shown = nullptr);

// The value of the hovered panel's plot under the mouse as a tooltip; a right click
// copies the number to the clipboard.
void value_tooltip(const std::optional<FigureHover>& hover);

}  // namespace attnlab::gui
