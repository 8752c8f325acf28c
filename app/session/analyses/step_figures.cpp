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

namespace {

// The query of a model's maps of image `tag` (its first layer's "maps" array), on that
// layer's grid; none when the maps analysis did not run.
std::optional<viz::MapQuery> maps_query(const ModelResults& m, const std::string& tag) {
  std::optional<viz::MapQuery> best;
  int64_t first = -1;
  for (const auto& a : m.arrays) {
    const auto key = analysis::parse_result_key(a.name);
    if (!key || key->analysis != "maps" || key->image != tag || key->part != "heads" ||
        a.shape.size() != 3 || (first >= 0 && key->layer >= first))
      continue;
    first = key->layer;
    best = figure_query(key->query, int(a.shape[1]), int(a.shape[2]));
  }
  return best;
}

}  // namespace

void attach_query_view_figures(AnalysisInfo& info, const QueryViewFigures& f) {
  info.figure_kinds = {{f.name, f.title}};
  info.report_figures = [f](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        if (m.arrays_of(f.name, im.tag).empty()) continue;
        const ResultImage* image = &im;
        jobs.push_back(
            {f.name, f.name + "__" + m.name + "__" + im.tag, [&m, image, figure = f.figure] {
               return figure(m.arrays, image->tag, image->picture, -1, maps_query(m, image->tag));
             }});
      }
  };
  info.tab = AnalysisTab{f.name,
                         f.tab_label,
                         false,
                         false,
                         [figure = f.figure](const TabInputs& in) {
                           const ModelResults& m = in.models.front();
                           const ResultImage& im = m.images.front();
                           return figure(m.arrays, im.tag, im.picture, in.layer, in.query);
                         },
                         f.hint};
  info.tab->group = "tokens";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
