// locality: the mean attention distance per layer and head, in patches of the layer's
// grid (how far each head looks). Figure: every model's heads per layer, one dot each;
// the GUI's Locality tab compares every open model.
// Its figures (report, series, GUI tab): locality_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/locality.h"

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
  info.add = add_locality;
  return info;
}

}  // namespace attnlab::session
