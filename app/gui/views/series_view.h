// A model's training series in the GUI (Castling's auxiliary mask over training, its
// Fig. 6): the checkpoints beside a model file (<stem>_series/*.safetensors, the zoo's
// layout) are analysed on the current image on the worker, one by one with progress and
// Cancel; the Mask tab plots the mask's non-zero share per layer against the step, and a
// timeline slider puts any checkpoint in the model's place, so every view (maps, compare,
// tabs) shows the network at that point of training.
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/worker_results.h"
#include "app/session/analysis_registry.h"

namespace attnlab::gui {

// The series files of model `m` (empty when it has none).
std::vector<std::string> series_files_of(const Workspace& ws, int m);
// Starts analysing the series of the current model on the current image.
void load_series(Workspace& ws, const ViewState& view, SeriesState& series, ComputeWorker& worker);
// Its jobs' answers: checkpoint k analysed; all analysed, with the tables across them.
void apply_result(SeriesState& series, const SeriesCheckpointDone& done);
void apply_result(SeriesState& series, const SeriesDone& done);
// Sidebar part: the series button or the timeline slider (requests the frame loop acts on).
void draw_series_controls(const Workspace& ws, const ViewState& view, const SeriesState& series,
                          FrameRequests& requests);
// Puts checkpoint k of the loaded series in its model's place on its image.
void show_series_checkpoint(Workspace& ws, ViewState& view, SeriesState& series, int k);
// A series analysis's statistics over the loaded checkpoints ("<table>_series" tables).
session::SeriesResults series_results(const Workspace& ws, const SeriesState& series,
                                      const session::AnalysisInfo& analysis);
// The analysis's series figure of `series` (a training series or a size sweep) as a job for
// the render worker; a figure that throws gives its message as the reason.
FigureJob series_figure_job(session::SeriesResults series, const session::AnalysisInfo& analysis);
// Its figure (AnalysisInfo::series_figure), as a job for the render worker or an export.
FigureJob series_tab_figure(const Workspace& ws, const SeriesState& series,
                            const session::AnalysisInfo& analysis);
// The tab of a series analysis (TabKind::Series, e.g. Castling's mask).
// The analysis's series figure at w × h under an image tab's figure, once the current
// model's series has rows (nothing otherwise).
void draw_series_figure(const Workspace& ws, const SeriesState& series, TextureCache& cache,
                        const session::AnalysisInfo& analysis, int w, int h);
void draw_series_tab(const Workspace& ws, const SeriesState& series, TextureCache& cache,
                     const session::AnalysisInfo& analysis);

}  // namespace attnlab::gui
