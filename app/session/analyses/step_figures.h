// Pieces several analyses' figures share (the *_figures.cpp files): every model's copy of a
// table, a query tag as the figures describe it, a series statistic's figure. Drawn by viz
// (cairo): not part of a GPU-check-only build. (Their compute steps share step_helpers.h.)
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "app/session/analyses/step_helpers.h"
#include "app/session/results.h"
#include "viz/figures/attention_maps.h"
#include "viz/figures/series_statistic.h"

namespace attnlab::session {

// Every model's table `name` with the model's name, for the figures that compare models
// (the models without one left out).
std::vector<std::pair<std::string, analysis::Table>> model_tables(
    const std::vector<ModelResults>& models, const std::string& name);

// A figure's description of a query tag ("q7-7" on the first layer's grid -> a cell;
// prefix tokens such as "cls" have none).
viz::MapQuery figure_query(const std::string& tag, int ref_rows, int ref_cols);

// A per-layer statistic of a series (viz::series_statistic_figure): `statistic.table` is
// the per-checkpoint table's name ("entropy_layers"), read as `series`' own table (its
// suffix: "_series", a sweep's "_sizes") against its x axis.
viz::CaptionedFigure series_statistic(const SeriesResults& series, viz::SeriesStatistic statistic);

// The figures of an analysis whose result is one per-head table per model ("<name>_heads")
// and, over a series, a per-layer mean: one report figure comparing the models, the series
// figure of `series`, and a GUI tab drawing the same figure as the report (locality,
// map_rank, entropy).
struct PerHeadTableFigures {
  std::string name;       // the analysis, its figure kind and tab: "locality"
  std::string title;      // the report index's section: "Mean attention distance per head"
  std::string tab_label;  // "Locality"
  std::string tab_group;  // the GUI's row of tabs: "tokens"
  viz::SeriesStatistic series;
  std::function<viz::CaptionedFigure(const std::vector<std::pair<std::string, analysis::Table>>&)>
      figure;
};
void attach_per_head_table_figures(AnalysisInfo& info, const PerHeadTableFigures& f);

// The figures of a view of one query's mechanism internals (agents, routing, sampling):
// the report draws one per model and image, on the last layer, at the maps' query (the
// query of the model's "maps" arrays; the grid's centre without them); the GUI tab on the
// layer shown, at the query the Maps tab shows.
using QueryViewFigure = std::function<viz::CaptionedFigure(
    const std::vector<analysis::Array>& arrays, const std::string& image_tag,
    const viz::RgbaImage& picture, int64_t layer, const std::optional<viz::MapQuery>& query)>;
struct QueryViewFigures {
  std::string name;       // the analysis, its figure kind and tab: "agents"
  std::string title;      // the report index's section
  std::string tab_label;  // "Agents"
  std::string hint;       // under the GUI tab's figure
  QueryViewFigure figure;
};
void attach_query_view_figures(AnalysisInfo& info, const QueryViewFigures& f);

}  // namespace attnlab::session
