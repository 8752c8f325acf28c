// outliers: high-norm outlier tokens and the attention they receive (Darcet et al.'s
// "registers" observation) — per layer the token-norm distribution of the block's output,
// the tokens above --outlier-factor × the median, the attention mass they and the prefix
// tokens receive (core/analysis/outliers.h); per image the grid's norm / median as an
// array. Figures: the statistics per layer for every model, and the outliers' positions
// over the picture (the GUI's Outliers tab, for the current model and image).
// Its figures (report, series, GUI tab): outliers_figures.cpp.
#include <ATen/ATen.h>

#include <limits>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/outliers.h"

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
  info.add = add_outliers;
  AnalysisOption factor{"outlier-factor", AnalysisOption::Kind::Real, "K", 10.0};
  factor.min = 0;
  factor.min_open = true;
  factor.gui_min = 1;
  factor.gui_max = 50;
  factor.help = "outlier tokens: norm above K x the layer's median";
  info.options = {factor};
  return info;
}

}  // namespace attnlab::session
