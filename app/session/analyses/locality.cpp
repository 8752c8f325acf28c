// locality: the mean attention distance per layer and head, in patches of the layer's
// grid (how far each head looks). Figure: every model's heads per layer, one dot each;
// the GUI's Locality tab compares every open model.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "viz/figures/series_statistic.h"
#include "core/analysis/locality.h"
#include "viz/figures/locality.h"

namespace attnlab::session {
namespace {

void add_locality(ImageStep& s) {
  analysis::Table heads = make_table(
      "locality_heads", "mean attention distance (in patches of the layer's grid) per head",
      {"layer", "path", "mechanism", "grid", "head", "mean_distance"}, 5);
  analysis::Table summary =
      make_table("locality_layers", "mean attention distance (patches) per layer, mean over heads",
                 {"layer", "path", "mechanism", "grid", "mean_distance"}, 4);
  for (const auto& l : s.layers) {
    const at::Tensor d = analysis::mean_attention_distance(*l.trace, s.b);
    const std::string grid = grid_text(l.trace->layout);
    for (int64_t h = 0; h < d.size(0); ++h)
      heads.add_row({l.index, l.path, l.trace->mechanism, grid, h, d[h].item<double>()});
    summary.add_row({l.index, l.path, l.trace->mechanism, grid, d.mean().item<double>()});
  }
  s.session.accumulate(heads);
  s.session.accumulate(summary);
}

}  // namespace

AnalysisInfo locality_analysis() {
  AnalysisInfo info;
  info.name = "locality";
  info.summary = "mean attention distance per head";
  info.tables = {"locality_heads", "locality_layers"};
  info.in_image_analysis = true;
  info.series = true;  // over a checkpoint series: the per-layer value against the step
  info.over_sizes = true;  // and against the input size of a resolution sweep
  info.series_figure = [](const SeriesResults& s) {
    return series_statistic(
        s, {"locality_layers", "mean_distance_mean", "mean attention distance (patches)",
            "Mean attention distance (mean over heads)", ""});
  };
  info.add = add_locality;
  info.figure_kinds = {{"locality", "Mean attention distance per head"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    auto tables = model_tables(in.models, "locality_heads");
    if (!tables.empty())
      jobs.push_back({"locality", "locality", [tables] { return viz::locality_figure(tables); }});
  };
  info.tab = AnalysisTab{
      "locality",
      "Locality",
      true,
      false,
      [](const TabInputs& in) { return viz::locality_figure(model_tables(in.models, "locality_heads")); },
      ""};
  info.tab->group = "tokens";  // the GUI's row of tabs (app/gui/tab_table.cpp)
  return info;
}

}  // namespace attnlab::session
