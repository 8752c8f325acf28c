// routing: BiFormer's bi-level routing (Zhu et al., CVPR 2023; core/attention/biformer.cpp)
// in every layer that offers "routed regions": the grid cut into S×S regions, and for each
// region the k regions its queries attend to (in routing order, strongest first). Per layer
// a table row (regions, k, the region size, the share of regions that route to themselves,
// the mean distance to the routed regions, the share of regions routed to by any). Figure:
// the clicked query's region and the regions it was routed to, over the picture; the GUI's
// Routing tab follows the query clicked in the Maps tab.
// Its figures (report, GUI tab): routing_figures.cpp.
#include <ATen/ATen.h>

#include <cmath>

#include "app/session/analyses/step_helpers.h"
#include "core/attention/capabilities.h"

namespace attnlab::session {
namespace {

void add_routing(ImageStep& s) {
  analysis::Table layers = make_table(
      "routing_layers",
      "BiFormer's region routing per layer: S x S regions of rh x rw tokens, each routed to k "
      "regions; self_routed = share of regions among their own k, distance = mean distance "
      "(in regions) from a region to its routed ones, coverage = share of regions routed to "
      "by at least one region",
      {"layer", "path", "regions", "topk", "region_h", "region_w", "self_routed", "distance",
       "coverage"},
      3);
  for (const auto& l : s.layers) {
    const auto& lay = l.trace->layout;
    const at::Tensor route = l.trace->internal("biformer.route_idx")[s.b].to(at::kCPU);  // (S², k)
    const at::Tensor region = l.trace->internal("biformer.region").to(at::kCPU);
    const int64_t rh = region[0].item<int64_t>(), rw = region[1].item<int64_t>();
    const int64_t regions = route.size(0), k = route.size(1);
    const auto side = static_cast<int64_t>(std::llround(std::sqrt(double(regions))));
    // The region of every grid token (the regions tile the padded grid from the top left).
    const at::Tensor ry = at::div(at::arange(lay.height, at::kLong), rh, "floor");
    const at::Tensor rx = at::div(at::arange(lay.width, at::kLong), rw, "floor");
    const at::Tensor of_token = ry.view({-1, 1}) * side + rx.view({1, -1});
    const at::Tensor self = at::arange(regions, at::kLong).view({-1, 1});
    const double self_routed = (route == self).any(1).to(at::kDouble).mean().item<double>();
    const at::Tensor dy = at::div(route, side, "floor") - at::div(self, side, "floor");
    const at::Tensor dx = at::remainder(route, side) - at::remainder(self, side);
    const double distance = (dy * dy + dx * dx).to(at::kDouble).sqrt().mean().item<double>();
    const double coverage = double(std::get<0>(at::_unique(route.flatten())).size(0));
    layers.add_row(
        {l.index, l.path, regions, k, rh, rw, self_routed, distance, coverage / double(regions)});
    analysis::ResultKey key{"routing", s.image, l.index, "", "", "region"};
    s.session.emit(to_array(of_token.to(at::kDouble), analysis::format_result_key(key), {"y", "x"},
                            "the region (row-major of " + std::to_string(side) + " x " +
                                std::to_string(side) + ") of every grid token of " + l.path));
    key.part = "route";
    s.session.emit(to_array(route.to(at::kDouble), analysis::format_result_key(key),
                            {"region", "rank"},
                            "the k regions each region's queries attend to in " + l.path +
                                ", strongest routing logit first"));
  }
  s.session.accumulate(layers);
}

}  // namespace

AnalysisInfo routing_analysis() {
  AnalysisInfo info;
  info.name = "routing";
  info.summary = "BiFormer's routing: the regions each region's queries attend to";
  info.needs = {attention::capability::kRoutedRegions};
  info.tables = {"routing_layers"};
  info.arrays = {"routing__<image>__L<ll>__region|route"};
  info.key_shape = analysis::ResultKeyShape{true, true, false, false, true};
  info.in_image_analysis = true;
  info.add = add_routing;
  return info;
}

}  // namespace attnlab::session
