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

void attach_per_head_table_figures(AnalysisInfo& info, const PerHeadTableFigures& f) {
  info.series_figure = [series = f.series](const SeriesResults& s) {
    return series_statistic(s, series);
  };
  info.figure_kinds = {{f.name, f.title}};
  const std::string table = f.name + "_heads";
  info.report_figures = [f, table](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    auto tables = model_tables(in.models, table);
    if (!tables.empty())
      jobs.push_back({f.name, f.name, [tables, figure = f.figure] { return figure(tables); }});
  };
  info.tab = AnalysisTab{f.name,
                         f.tab_label,
                         true,
                         false,
                         [table, figure = f.figure](const TabInputs& in) {
                           return figure(model_tables(in.models, table));
                         },
                         ""};
  info.tab->group = f.tab_group;  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
