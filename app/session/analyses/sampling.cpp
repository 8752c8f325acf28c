// sampling: DAT's deformable attention (Xia et al., CVPR 2022 / DAT++; core/attention/dat.cpp)
// in every layer that offers "sampling points": per offset group the Hk×Wk reference points,
// where the offset network moved them (the sampled keys and values), and every grid query's
// weights over those samples (mean over the group's heads). Positions are in the layer's grid
// cells (y, x), as the bilinear sampler reads them: (g + 1)/2·(size − 1). Per layer a table
// row (groups, samples, the mean and largest offset in cells, the share of samples on the
// grid's border or beyond, the mean entropy of a query's weights). Figure: arrows from each
// reference point to its sample, sized by the clicked query's weight; the GUI's Sampling tab
// follows the query clicked in the Maps tab.
// Its figures (report, GUI tab): sampling_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "core/attention/capabilities.h"

namespace attnlab::session {
namespace {

void add_sampling(ImageStep& s) {
  analysis::Table layers = make_table(
      "sampling_layers",
      "DAT's deformable sampling per layer: offset groups, samples per group (Hk x Wk), the "
      "mean and largest offset from a reference point to its sample (grid cells), the share "
      "of samples on the grid's border or beyond, and the mean entropy (nats) of a grid "
      "query's weights over the samples (mean over heads; ln Ns: uniform)",
      {"layer", "path", "groups", "samples", "mean_offset", "max_offset", "border_share",
       "query_entropy"},
      3);
  for (const auto& l : s.layers) {
    const auto& lay = l.trace->layout;
    const at::Tensor ref = l.trace->internal("dat.reference")[s.b].to(at::kCPU, at::kDouble);
    const at::Tensor pos = l.trace->internal("dat.pos")[s.b].to(at::kCPU, at::kDouble);
    const int64_t groups = pos.size(0), ns = pos.size(1) * pos.size(2);
    // [−1, 1] units -> grid cells, (y, x).
    const at::Tensor scale =
        at::tensor({double(lay.height - 1), double(lay.width - 1)}, at::kDouble);
    const at::Tensor ref_cells = ((ref + 1) / 2 * scale).reshape({groups, ns, 2});
    const at::Tensor pos_cells = ((pos + 1) / 2 * scale).reshape({groups, ns, 2});
    const at::Tensor offset = (pos_cells - ref_cells).pow(2).sum(-1).sqrt();
    const at::Tensor border = (pos.abs() >= 1 - 1e-6).any(-1).to(at::kDouble);
    // Each grid query's weights over its group's samples, mean over the group's heads.
    const int64_t heads = l.trace->heads, per_group = heads / groups;
    const at::Tensor attn = l.trace->internal("dat.attn")
                                .slice(0, s.b * heads, (s.b + 1) * heads)
                                .to(at::kCPU, at::kDouble)
                                .view({groups, per_group, lay.tokens(), ns})
                                .mean(1)
                                .slice(1, lay.num_prefix());  // (G, H·W, Ns)
    const double entropy = (-(attn * attn.clamp_min(1e-30).log()).sum(-1)).mean().item<double>();
    layers.add_row({l.index, l.path, groups, ns, offset.mean().item<double>(),
                    offset.max().item<double>(), border.mean().item<double>(), entropy});
    analysis::ResultKey key{"sampling", s.image, l.index, "", "", "points"};
    s.session.emit(to_array(at::cat({ref_cells, pos_cells}, -1), analysis::format_result_key(key),
                            {"group", "sample", "coord"},
                            "per offset group of " + l.path +
                                ": each sample's reference point and sampling position in grid "
                                "cells (ref_y, ref_x, pos_y, pos_x)"));
    key.part = "weights";
    s.session.emit(to_array(attn.reshape({groups, lay.height, lay.width, ns}),
                            analysis::format_result_key(key), {"group", "y", "x", "sample"},
                            "every grid query's weights over its group's samples in " + l.path +
                                ", mean over the group's heads"));
  }
  s.session.accumulate(layers);
}

}  // namespace

AnalysisInfo sampling_analysis() {
  AnalysisInfo info;
  info.name = "sampling";
  info.summary =
      "DAT's deformable sampling: where the keys were sampled and every query's weights over "
      "them";
  info.needs = {attention::capability::kSamplingPoints};
  info.tables = {"sampling_layers"};
  info.arrays = {"sampling__<image>__L<ll>__points|weights"};
  info.key_shape = analysis::ResultKeyShape{true, true, false, false, true};
  info.in_image_analysis = true;
  info.add = add_sampling;
  return info;
}

}  // namespace attnlab::session
