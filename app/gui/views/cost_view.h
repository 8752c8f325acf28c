// The Cost tab: what the open models cost. "MACs" counts each model's multiply-accumulates
// at its own input size and at 2× and 3× it (the complexity sweep of `attnlab report`,
// HiLo's Fig. 2 style), on the worker whenever the open models change; "Latency" and
// "Memory" show a bench of one layer of each model's attention mechanism against softmax,
// measured on the worker when asked (the Measure button or the script's `bench`), with
// progress and Cancel in the status bar. The figures are those of the report.
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"

namespace attnlab::gui {

// Starts counting the loaded models (requests.count_complexity).
void start_complexity(GuiState& state, ComputeWorker& worker);
// Starts the bench of the loaded models' mechanisms (requests.run_bench).
void start_bench(GuiState& state, ComputeWorker& worker);
// The figure of the part shown (state.cost.shown), for the tab and its export.
FigureJob cost_tab_figure(const GuiState& state);
// The tab: the part switch, the figure, and the requests it needs (a stale count, Measure).
void draw_cost_tab(const GuiState& state, TextureCache& cache, CostState::Shown& shown,
                   FrameRequests& requests);

}  // namespace attnlab::gui
