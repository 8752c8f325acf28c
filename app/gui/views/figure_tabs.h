// The analysis tabs and the exports. Each tab is a paper figure (viz/figures) built from
// the current model's analysis of the current image and rendered by the same renderer as
// `attnlab report`, to a texture the size of the panel; Export writes the same figure to
// PNG/SVG/PDF and the statistics to CSV/JSON/LaTeX (report_command.h: the `attnlab
// report` line that reproduces the exported figure).
#pragma once

#include <optional>
#include <string>

#include "app/gui/gui_state.h"
#include "app/gui/views/tab_table.h"
#include "viz/figures/captioned_figure.h"

namespace attnlab::gui {

// The figure of tab `tab` (tab_table.h: "maps", or an analysis's tab) for the current
// view, as a job that owns its inputs (so the render worker can run it); the job gives
// nothing, with the reason in *why, when the results do not allow a figure.
FigureJob tab_figure_job(const Workspace& ws, const ViewState& view, const SeriesState& series,
                         const CostState& cost, const std::string& tab);
// The Maps tab's figure as the view shows it (the tab's case of tab_figure_job).
FigureJob maps_figure(const Workspace& ws, const ViewState& view);
// The same, built now (exports).
std::optional<viz::CaptionedFigure> tab_figure(const Workspace& ws, const ViewState& view,
                                               const SeriesState& series, const CostState& cost,
                                               const std::string& tab, std::string* why);

// An analysis tab (TabKind::Figure): its figure, drawn on the render worker.
void draw_figure_tab(const Workspace& ws, const ViewState& view, const SeriesState& series,
                     const SizeSweepState& sweep, const CostState& cost, TextureCache& cache,
                     const TabEntry& tab);
// Top-5 of every model; a click on a class explains it (edits the view).
void draw_predictions_tab(const Workspace& ws, ViewState& view);

// The resolution of exported PNGs (as `attnlab report --dpi`'s default).
constexpr double kExportDpi = 200;
// Writes the current tab's figure to `path` (format from the extension). Returns the
// message to show (what was written, or why not).
// `dpi`: of a PNG (the export's default, or the screen's to compare with a screenshot).
bool export_panel(const Workspace& ws, const ViewState& view, const SeriesState& series,
                  const CostState& cost, const std::string& path, std::string* message,
                  double dpi = kExportDpi);
// Writes the current result's statistics (CSV, JSON, LaTeX) into `dir`.
bool export_stats(const Workspace& ws, const ViewState& view, const std::string& dir,
                  std::string* message);

}  // namespace attnlab::gui
