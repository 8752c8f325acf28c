// The figure options of `attnlab report`: output formats and resolution, the map style
// (colormap, alpha, upsampling, normalisation), the view the map figures show (layer, head
// or head fusion, the map the models side by side compare; session::MapView) and which
// figure kinds are written. These are what the GUI's File > Copy settings as command
// writes out, so that the report reproduces an exported figure (docs/GUI.md).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/session/results.h"
#include "viz/render.h"

namespace attnlab::cli {

struct ReportFigureOptions {
  std::vector<viz::FigureFormat> formats;  // default svg, pdf, png
  double dpi = 200;
  session::FigureOptions figure;
  std::set<std::string> kinds;  // figure kinds to write (session::figure_kinds); empty: all
};

// Removes --formats, --dpi, --figures and the figure-view options
// (session::figure_view_options: --layer, --head, --colormap, ...) from `args`; throws
// UsageError for a bad value, with the view parser's words.
ReportFigureOptions take_report_figure_options(Args& args);

}  // namespace attnlab::cli
