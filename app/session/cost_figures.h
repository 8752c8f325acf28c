// The cost figures of `attnlab report` and the GUI's Complexity and Speed tabs: the
// multiply-accumulates of each model against its input size (HiLo's Fig. 2 style, from
// the complexity counter, complexity.h) and the measured latency and peak memory of one
// layer of each model's attention mechanism against N (attention_bench.h). The CLI's
// `complexity` and `bench-attention` draw the same figures.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "app/session/attention_bench.h"
#include "app/session/complexity.h"
#include "app/session/results.h"
#include "viz/figures/captioned_figure.h"

namespace attnlab::session {

// The report's figure kinds for these (after the analyses' own, session::figure_kinds):
// "complexity" and "attention_bench".
const std::vector<FigureKind>& cost_figure_kinds();

// The input sizes of the sweep, as multiples of each model's own (1: the size its
// preprocessing crops to).
const std::vector<double>& default_complexity_scales();

struct ComplexitySweep {
  std::vector<ComplexityRun> runs;  // subject = the model's tag
  std::vector<std::string> notes;   // the sizes a model could not take, with the reason
};

// Progress: models × sizes counted, in all, the one being counted ("deit_small at 448").
using SweepProgress = std::function<void(int64_t, int64_t, const std::string&)>;

// Each (tag, request) counted at its own input size and at `scales` times it (rounded to
// whole pixels). A size the model refuses (a grid its windows do not tile, FLatten's fixed
// token count) is a note; a model that cannot be built at its own size throws. Stops
// early, with what it has, once `cancelled` says so.
ComplexitySweep complexity_sweep(const std::vector<std::pair<std::string, ModelRequest>>& models,
                                 const std::vector<double>& scales,
                                 const SweepProgress& progress = {},
                                 const std::function<bool()>& cancelled = {});

// `attnlab complexity`'s figure of a size sweep (complexity_has_sizes): MACs against the
// input size (`model`) or the tokens N, one line per subject.
viz::CaptionedFigure complexity_macs_figure(const std::vector<ComplexityRun>& runs, bool model);

// MACs of the whole forward against the input side, one line per model (log-log); the
// caption lists what was not counted.
viz::CaptionedFigure complexity_sweep_figure(const ComplexitySweep& sweep);

// A bench of the models' mechanisms (names, "" for none; repeats dropped) after the
// baseline, which the ratios need measured in the same run.
AttentionBenchSettings models_bench_settings(const std::vector<std::string>& mechanisms);

// The bench's figures from its table (attention_bench_table): latency against N and, off
// CUDA, peak memory against N, one line per mechanism.
std::vector<viz::CaptionedFigure> attention_bench_figures(const analysis::Table& table,
                                                          const AttentionBenchSettings& settings);

}  // namespace attnlab::session
