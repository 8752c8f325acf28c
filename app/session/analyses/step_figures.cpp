// Shared pieces of the analyses' figures; see step_figures.h.
#include "app/session/analyses/step_figures.h"

namespace attnlab::session {

std::vector<std::pair<std::string, analysis::Table>> model_tables(
    const std::vector<ModelResults>& models, const std::string& name) {
  std::vector<std::pair<std::string, analysis::Table>> tables;
  for (const auto& m : models)
    if (const analysis::Table* t = m.table(name)) tables.emplace_back(m.name, *t);
  return tables;
}

viz::MapQuery figure_query(const std::string& tag, int ref_rows, int ref_cols) {
  viz::MapQuery q;
  if (const auto cell = analysis::parse_grid_query_tag(tag)) {
    const viz::GridCell c{int(cell->first), int(cell->second)};
    q.cell = c;
    q.ref_rows = ref_rows;
    q.ref_cols = ref_cols;
    q.label = "query (" + std::to_string(c.row) + ", " + std::to_string(c.col) + ")";
  } else {
    q.label = "the " + tag + " token";
  }
  return q;
}

viz::CaptionedFigure series_statistic(const SeriesResults& series, viz::SeriesStatistic statistic) {
  statistic.table += series.suffix;
  viz::SeriesStatisticOptions options;
  options.x_column = series.x_column;
  options.x_label = series.x_label;
  return viz::series_statistic_figure(series.tables, statistic, options);
}

}  // namespace attnlab::session
