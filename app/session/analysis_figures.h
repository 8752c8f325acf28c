// The analyses' figures, kept apart from their compute steps so that a build without cairo
// (the GPU check's, ATTNLAB_GPU_CHECK_ONLY) compiles the analyses without them: see
// analysis_figures.cpp, which also defines figure_kinds() and report_figure_jobs()
// (declared in analysis_registry.h).
#pragma once

#include <vector>

#include "app/session/analysis_registry.h"

namespace attnlab::session {

// Gives each analysis of ATTNLAB_ANALYSES (list, in that order) its figures: the report's
// figure kinds and jobs, the series figure, the GUI tab (analyses/<name>_figures.cpp).
void attach_analysis_figures(std::vector<AnalysisInfo>& list);

}  // namespace attnlab::session
