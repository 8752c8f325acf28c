// The report figure Grad-CAM and gradient rollout share: AnchorFormer's Fig. 4 layout,
// every model's explanation of every image (rows: models, columns: images), one figure per
// method. Not part of a GPU-check-only build (no figures there).
#pragma once

#include <string>
#include <vector>

#include "app/session/results.h"

namespace attnlab::session {

// The report's section both methods' grids go in.
FigureKind explanations_figure_kind();

// Adds the grid of `analysis`'s maps ("<analysis>__<image>") titled `title`, when any
// model has one.
void add_explanation_grid(const ReportInputs& in, const std::string& analysis,
                          const std::string& title, std::vector<FigureJob>& jobs);

}  // namespace attnlab::session
