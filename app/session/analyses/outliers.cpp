// outliers: high-norm outlier tokens and the attention they receive (Darcet et al.'s
// "registers" observation) — per layer the token-norm distribution of the block's output,
// the tokens above --outlier-factor × the median, the attention mass they and the prefix
// tokens receive (core/analysis/outliers.h); per image the grid's norm / median as an
// array. Figures: the statistics per layer for every model, and the outliers' positions
// over the picture (the GUI's Outliers tab, for the current model and image).
#include <ATen/ATen.h>

#include <limits>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/outliers.h"
#include "viz/figures/outliers.h"
#include "viz/figures/series_statistic.h"

namespace attnlab::session {
namespace {

void add_outliers(ImageStep& s) {
  const double factor = s.settings.options.real("outlier-factor");
  analysis::Table layers = make_table(
      "outliers_layers",
      "outlier tokens per layer, from the block's output tokens x_j (prefix tokens included): "
      "median and max of |x_j|, tokens with |x_j| > factor x the median (count and share of the N "
      "tokens), the attention they receive in this "
      "layer (mean over heads of sum_j (A^T 1)_j / N: their share of all attention when rows "
      "sum to 1; uniform attention would give them outlier_share), the same for the prefix "
      "tokens, and the prefix tokens' mean norm / median (both nan: no prefix token); the "
      "outliers among the grid's tokens, the register tokens (DINOv2 _reg) and their "
      "attention mass and mean norm / median (both nan: no register)",
      {"layer", "path", "mechanism", "tokens", "factor", "median_norm", "max_norm",
       "max_over_median", "outliers", "outlier_share", "outlier_mass", "prefix_mass",
       "prefix_norm_over_median", "grid_outliers", "registers", "register_mass",
       "register_norm_over_median"},
      3);
  for (const auto& l : s.layers) {
    const auto& lay = l.trace->layout;
    const analysis::LayerOutliers o = analysis::outlier_tokens(
        block_output_tokens(s.result, l.path, lay, s.b), *l.trace, s.b, factor);
    const int64_t p = lay.num_prefix();
    const double none = std::numeric_limits<double>::quiet_NaN();
    const double prefix_norm =
        p > 0 ? o.norms.slice(0, 0, p).mean().item<double>() / o.median : none;
    const std::vector<int64_t> registers = lay.register_tokens();
    double register_norm = none;
    if (!registers.empty()) {
      double sum = 0;
      for (int64_t j : registers) sum += o.norms[j].item<double>();
      register_norm = sum / double(registers.size()) / o.median;
    }
    layers.add_row({l.index, l.path, l.trace->mechanism, lay.tokens(), factor, o.median, o.max,
                    o.max / o.median, int64_t(o.outliers.size()), o.outlier_share, o.outlier_mass,
                    p > 0 ? o.prefix_mass : none, prefix_norm, o.grid_outliers,
                    int64_t(registers.size()), registers.empty() ? none : o.register_mass,
                    register_norm});
    const analysis::ResultKey key{"outliers", s.image, l.index, "", "", "norm"};
    s.session.emit(to_array((o.norms.slice(0, p) / o.median).reshape({lay.height, lay.width}),
                            analysis::format_result_key(key), {"y", "x"},
                            "norm / median of every grid token of the block output of " + l.path +
                                " (outliers: above " + analysis::Cell(factor).str() + ")"));
  }
  s.session.accumulate(layers);
}

}  // namespace

AnalysisInfo outliers_analysis() {
  AnalysisInfo info;
  info.name = "outliers";
  info.summary =
      "high-norm outlier tokens per layer (norm > K x median) and the attention they and the "
      "prefix tokens receive";
  info.tables = {"outliers_layers"};
  info.arrays = {"outliers__<image>__L<ll>__norm"};
  info.key_shape = analysis::ResultKeyShape{true, true, false, false, true};
  info.needs_outputs = true;
  info.in_image_analysis = true;
  info.series = true;      // over a checkpoint series: the per-layer value against the step
  info.over_sizes = true;  // and against the input size of a resolution sweep
  info.series_figure = [](const SeriesResults& s) {
    return series_statistic(
        s, {"outliers_layers", "max_over_median_mean", "max norm / median",
            "The largest token norm of the block output over the median norm", ""});
  };
  info.add = add_outliers;
  AnalysisOption factor{"outlier-factor", AnalysisOption::Kind::Real, "K", 10.0};
  factor.min = 0;
  factor.min_open = true;
  factor.gui_min = 1;
  factor.gui_max = 50;
  factor.help = "outlier tokens: norm above K x the layer's median";
  info.options = {factor};
  info.figure_kinds = {{"outliers", "Outlier tokens: norms and the attention they receive"},
                       {"outlier_positions", "Outlier tokens over the picture"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    auto tables = model_tables(in.models, "outliers_layers");
    if (!tables.empty())
      jobs.push_back({"outliers", "outliers", [tables] { return viz::outliers_figure(tables); }});
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        if (m.arrays_of("outliers", im.tag).empty()) continue;
        const ResultImage* image = &im;
        jobs.push_back(
            {"outlier_positions", "outlier_positions__" + m.name + "__" + im.tag, [&m, image] {
               return viz::outlier_positions_figure(m.arrays, image->tag, image->picture, m.tables);
             }});
      }
  };
  info.tab =
      AnalysisTab{"outliers",
                  "Outliers",
                  false,
                  false,
                  [](const TabInputs& in) {
                    const ModelResults& m = in.models.front();
                    const ResultImage& im = m.images.front();
                    return viz::outlier_positions_figure(m.arrays, im.tag, im.picture, m.tables);
                  },
                  "Bright cells: tokens whose norm is far above the layer's median. "
                  "attnlab report's outliers figure compares the models."};
  info.tab->group = "tokens";  // the GUI's row of tabs (app/gui/tab_table.cpp)
  return info;
}

}  // namespace attnlab::session
