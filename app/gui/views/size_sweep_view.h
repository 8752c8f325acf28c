// The resolution sweep in the GUI (issue 26): the current model is loaded at each input
// size of a typed list ("28,42,56", as `attnlab analyze-sizes --img-sizes`) and analysed on
// the current image on the worker, one size after the other with progress and Cancel;
// below the figure of each tab whose statistic reads a sweep (AnalysisInfo::over_sizes:
// entropy, map rank, locality, rank, outliers, spectra) the statistic per layer against
// the input size. The models at the other sizes are not kept: only their analyses.
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/worker_results.h"
#include "app/gui/workspace/sweep_sizes.h"
#include "app/session/analysis_registry.h"

namespace attnlab::gui {

// Starts the sweep of the current model on the current image at the typed sizes
// (ViewState::sweep_sizes); a bad list is put in sweep.error and nothing starts.
void start_size_sweep(Workspace& ws, const ViewState& view, SizeSweepState& sweep,
                      ComputeWorker& worker);
// Its job's answers: size k analysed, a size failed, the sweep ended.
void apply_result(SizeSweepState& sweep, const SweepSizeDone& done);
void apply_result(SizeSweepState& sweep, const SweepSizeFailed& failed);
void apply_result(SizeSweepState& sweep, const SweepDone& done);
// Sidebar part: the sizes field and the Sweep button (requests the frame loop acts on).
void draw_size_sweep_controls(const Workspace& ws, const SizeSweepState& sweep, ViewState& view,
                              FrameRequests& requests);
// True when the current model has a sweep with rows on the current image.
bool has_size_sweep(const Workspace& ws, const ViewState& view, const SizeSweepState& sweep);
// An over_sizes analysis's statistics over the sweep ("<table>_sizes" tables).
session::SeriesResults size_sweep_results(const Workspace& ws, const SizeSweepState& sweep,
                                          const session::AnalysisInfo& analysis);
// Its figure against the input size at w × h, under an image tab's figure.
void draw_size_sweep_figure(const Workspace& ws, const ViewState& view, const SizeSweepState& sweep,
                            TextureCache& cache, const session::AnalysisInfo& analysis, int w,
                            int h);

}  // namespace attnlab::gui
