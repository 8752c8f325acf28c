// attnlab.Results: what Model.analyze or Model.faithfulness computed — tables, arrays
// (shared with the numpy views handed out), the sidecar metadata, and the figures the
// CLI draws from the same results (Results.figure). Shared by the files that fill one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/session/results.h"
#include "core/analysis/result_key.h"
#include "core/analysis/table.h"
#include "python/src/common.h"

namespace attnlab::python {

struct Results {
  std::string model_tag;  // the output folder's file prefix (Results.save)
  std::vector<analysis::Table> tables;
  std::vector<std::shared_ptr<const analysis::Array>> arrays;
  nlohmann::json metadata;
  // The CLI's figures of these results (Results.figure). Report results (Model.analyze)
  // build the report's jobs of one model under the view asked for (session::report_figure_
  // jobs); the others (faithfulness, complexity, bench_attention) carry their figures'
  // jobs, which own what they draw, as their command draws them.
  bool report_figures = false;
  std::vector<session::FigureJob> own_figures;
  // What the report's figures need beside the tables and arrays (a session::ModelResults
  // is assembled from them): the preprocessed pictures, the class names, the rollout's
  // switches for its caption. The layers are metadata["layers"].
  std::vector<session::ResultImage> images;
  std::vector<std::string> class_names;
  std::string preprocessing, rollout_switches;
};

// Binds attnlab.Results (bind_results.cpp), then its figures (bind_figures.cpp).
void bind_results(py::module_& m);
void bind_figures(py::module_& m, py::class_<Results, std::shared_ptr<Results>>& results);

}  // namespace attnlab::python
