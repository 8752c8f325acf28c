// The Cost tab: what the open models cost. "MACs" counts each model's multiply-accumulates
// at its own input size and at 2× and 3× it (the complexity sweep of `attnlab report`,
// HiLo's Fig. 2 style), on the worker whenever the open models change; "Latency" and
// "Memory" show a bench of one layer of each model's attention mechanism against softmax,
// measured on the worker when asked (the Measure button or the script's `bench`), with
// progress and Cancel in the status bar. The figures are those of the report.
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/worker_results.h"

namespace attnlab::gui {

// Starts counting the loaded models (requests.count_complexity).
void start_complexity(const Workspace& ws, CostState& cost, ComputeWorker& worker);
// Starts the bench of the loaded models' mechanisms (requests.run_bench) where and at the
// precision the pickers say.
void start_bench(const Workspace& ws, const DeviceState& device, CostState& cost,
                 ComputeWorker& worker);
// Their jobs' answers: the count, the bench, or why either failed (also in the status bar).
void apply_result(CostState& cost, const ComplexityCounted& counted);
void apply_result(CostState& cost, const AttentionBenched& benched);
void apply_result(CostState& cost, StatusBarState& status, const CostFailed& failed);
// The figure of the part shown (cost.shown), for the tab and its export.
FigureJob cost_tab_figure(const CostState& cost);
// The tab: the part switch, the figure, and the requests it needs (a stale count, Measure).
void draw_cost_tab(const Workspace& ws, const CostState& cost, TextureCache& cache,
                   CostState::Shown& shown, FrameRequests& requests);

}  // namespace attnlab::gui
