// The cost part of `attnlab report`: the complexity sweep of the report's models (MACs
// against input size; on by default) and, with --bench, the measured latency and memory of
// one layer of each model's attention mechanism against softmax in the same run. Their
// tables go to the statistics folder, their figures into the report (kinds "complexity"
// and "attention_bench", session/cost_figures.h).
#pragma once

#include <c10/core/Device.h>

#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/session/cost_figures.h"

namespace attnlab::cli {

struct CostOptions {
  // The complexity sweep is on request (issue 51: it cost the default report as much as its
  // analyses): `complexity` says --complexity-scales LIST asked for it; --figures complexity
  // asks for it at these scales too.
  std::vector<double> complexity_scales = session::default_complexity_scales();  // empty: none
  bool complexity = false;
  bool bench = false;
  std::vector<int64_t> bench_sides = {14, 28, 56};
  int bench_repeats = 3;
};

// Removes --complexity-scales LIST (or "none"), --bench, --bench-sides LIST and
// --bench-repeats N; throws UsageError for a bad value.
CostOptions take_cost_options(Args& args);

// "14,28,56" (values may also be separate words) → positive integers; throws UsageError
// naming `option` otherwise.
std::vector<int64_t> parse_positive_ints(const std::string& option,
                                         const std::vector<std::string>& values);

// A model of the report as the cost figures see it.
struct CostModel {
  std::string tag;
  session::ModelRequest request;
  std::string mechanism;  // models::config_mechanism of its config ("" = none)
};

// Counts and measures now (with progress on stderr), writes the tables into `stats_dir`
// and returns the figures to draw. A failure is reported on stderr and in `errors`, and
// the rest goes on.
std::vector<session::FigureJob> cost_figure_jobs(const std::vector<CostModel>& models,
                                                 const CostOptions& options,
                                                 const c10::Device& device,
                                                 const std::string& stats_dir,
                                                 std::vector<std::string>& errors);

}  // namespace attnlab::cli
