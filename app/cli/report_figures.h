// The report's figure stage: build every figure job and write it in each format, on as
// many threads as LibTorch computes with (figures are independent cairo drawings of
// results already in memory), then the jobs that measure or count with LibTorch (the cost
// figures) one at a time after them, so that no timing shares the cores.
#pragma once

#include <string>
#include <vector>

#include "app/cli/report_index.h"
#include "app/session/results.h"
#include "viz/render.h"

namespace attnlab::cli {

struct FigureStageResult {
  std::vector<IndexEntry> written;  // in the order of the jobs; failed jobs are absent
  std::vector<std::string> errors;  // "figure STEM: reason", one per failed job
};

// `parallel_jobs` of the leading jobs may run side by side; the rest run in order on the
// calling thread. Progress is printed as figures finish.
FigureStageResult write_report_figures(const std::vector<session::FigureJob>& jobs,
                                       size_t parallel_jobs,
                                       const std::vector<viz::FigureFormat>& formats,
                                       const std::string& figures_dir, double dpi);

}  // namespace attnlab::cli
