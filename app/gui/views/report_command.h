// File > Copy settings as command: the `attnlab report` line that writes the figure File >
// Export writes for the view shown (same models, image, analyses, layer, head or head
// fusion, map kind, query, class, colormap, alpha, upsampling, normalisation, resolution),
// with --figures naming the figure kind it is among the report's files. The report draws
// it with the same figure function and the same style, so the two PNGs are the same image
// (tests/gui/gui_view_command.sh runs the copied command and compares them).
#pragma once

#include <string>

#include "app/gui/gui_state.h"

namespace attnlab::gui {

// The command line; paths are quoted for a POSIX shell where they need it.
std::string report_command(const Workspace& ws, const ViewState& view, const CostState& cost);

// `text` as one word of a POSIX shell: as is when it is plain, else in single quotes.
std::string shell_quote(const std::string& text);

}  // namespace attnlab::gui
