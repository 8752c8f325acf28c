// The figures of `attnlab report`: which paper figures the analysis results allow, each
// as a job that builds its CaptionedFigure when run (so one failing figure is reported
// and the others are still written).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/report_run.h"
#include "viz/figures/captioned_figure.h"
#include "viz/figures/map_panels.h"

namespace attnlab::cli {

struct FigureKind {
  std::string id;     // "head_maps", "rollout", ...
  std::string title;  // section heading in index.html
};
// Every kind, in the order the index shows them.
const std::vector<FigureKind>& figure_kinds();

struct FigureJob {
  std::string kind;  // FigureKind::id
  std::string stem;  // file name without extension, e.g. "rollout__hilo__chelsea"
  std::function<viz::CaptionedFigure()> build;
};

struct SeriesResults {
  std::string name;  // e.g. "castling_series"
  std::vector<analysis::Table> tables;
};

struct ReportFigureOptions {
  viz::MapStyle style;
  std::string rollout_switches;  // for the rollout caption
};

std::vector<FigureJob> report_figure_jobs(const std::vector<ModelResults>& models,
                                          const std::optional<SeriesResults>& series,
                                          const ReportFigureOptions& options);

}  // namespace attnlab::cli
