// Logit-lens and linear-probe figures (issue 48): against depth, for one or several models,
//   lens_figure   how far each block's lens prediction is from the model's own (KL of the
//                 final distribution from the block's) and how often its top-1 agrees with
//                 the final top-1, one curve per model; with a label, the lens's top-1
//                 accuracy against it dashed in the agreement panel
//   probe_figure  the top-1 test accuracy of a linear probe trained on each block's readout
//                 features (solid) beside the lens's top-1 accuracy on the same test images
//                 (dashed), and the probe's training accuracy (dotted, thin)
// Plain tables in (the "lens" table of `attnlab analyze`, the table `attnlab probe` writes).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct LensFigureOptions {
  double width_in = kPageWidthIn;
  double height_in = 2.3;
  double font_pt = 7;
};

// One entry per model: its name and its "lens" table (columns layer, kl_mean, agrees_mean;
// label_top1_mean drawn where finite). Throws std::invalid_argument for no models, a missing
// column or a table without a finite row.
CaptionedFigure lens_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                            const LensFigureOptions& options = {});

// One entry per model: its name and its probe table (columns layer, test_accuracy,
// train_accuracy, lens_test_accuracy: NaN where the lens cannot read the block or the model
// has no classifier). Throws std::invalid_argument as lens_figure.
CaptionedFigure probe_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                             const LensFigureOptions& options = {});

}  // namespace attnlab::viz
