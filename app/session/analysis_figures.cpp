// The analyses' figures: attach_analysis_figures gives each registered analysis its report
// figures, series figure and GUI tab (analyses/<name>_figures.cpp), and the report's figure
// kinds and jobs are built from them (analysis_registry.h). Drawn by viz (cairo): not part of
// a GPU-check-only build, whose analyses have no figures (analysis_registry.cpp).
#include "app/session/analysis_figures.h"

#include <algorithm>

#include "app/session/analyses/analysis_list.h"
#include "app/session/cost_figures.h"

namespace attnlab::session {

#define ATTNLAB_DECLARE(name) void name##_figures(AnalysisInfo& info);
ATTNLAB_ANALYSES(ATTNLAB_DECLARE)
#undef ATTNLAB_DECLARE

void attach_analysis_figures(std::vector<AnalysisInfo>& list) {
  // In list order, which is ATTNLAB_ANALYSES's (analysis_registry.cpp).
  size_t i = 0;
#define ATTNLAB_ATTACH(name) name##_figures(list.at(i++));
  ATTNLAB_ANALYSES(ATTNLAB_ATTACH)
#undef ATTNLAB_ATTACH
}

std::vector<FigureKind> figure_kinds() {
  std::vector<FigureKind> kinds;
  for (const auto& a : analyses())
    for (const auto& k : a.figure_kinds)
      if (std::none_of(kinds.begin(), kinds.end(),
                       [&](const FigureKind& have) { return have.id == k.id; }))
        kinds.push_back(k);
  // Not analyses of images but of the models themselves, drawn last (cost_figures.h).
  for (const auto& k : cost_figure_kinds()) kinds.push_back(k);
  return kinds;
}

std::vector<FigureJob> report_figure_jobs(const std::vector<ModelResults>& models,
                                          const std::optional<SeriesResults>& series,
                                          const FigureOptions& options,
                                          const std::vector<SeriesResults>& sweeps) {
  std::vector<FigureJob> jobs;
  const ReportInputs in{models, series, options};
  for (const auto& a : analyses())
    if (a.report_figures) a.report_figures(in, jobs);
  // A series figure for each series analysis that ran over the series or sweep (its
  // tables are there).
  const auto add_series_figures = [&](const SeriesResults& s, bool sweep) {
    for (const auto& a : analyses()) {
      if (!a.series || !a.series_figure || (sweep && !a.over_sizes)) continue;
      const bool ran = std::any_of(a.tables.begin(), a.tables.end(), [&](const std::string& n) {
        return std::any_of(s.tables.begin(), s.tables.end(),
                           [&](const analysis::Table& t) { return t.name == n + s.suffix; });
      });
      if (!ran) continue;
      const auto figure = a.series_figure;
      const std::string kind = a.figure_kinds.empty() ? a.name : a.figure_kinds.front().id;
      jobs.push_back({kind, kind + "__" + s.name, [s, figure] { return figure(s); }});
    }
  };
  if (series) add_series_figures(*series, false);
  for (const auto& s : sweeps) add_series_figures(s, true);
  // Order by kind as the index shows them, keeping the order within a kind.
  const std::vector<FigureKind> kinds = figure_kinds();
  const auto rank = [&](const std::string& id) {
    return std::find_if(kinds.begin(), kinds.end(),
                        [&](const FigureKind& f) { return f.id == id; }) -
           kinds.begin();
  };
  std::stable_sort(jobs.begin(), jobs.end(), [&](const FigureJob& x, const FigureJob& y) {
    return rank(x.kind) < rank(y.kind);
  });
  return jobs;
}

}  // namespace attnlab::session
