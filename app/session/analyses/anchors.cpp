// anchors: AnchorFormer's token-to-anchor assignment in every layer that offers one: the
// hard anchor of every grid token per head and for the head-mean, the soft assignment,
// spatial coherence against chance, entropy and anchor usage. Figure: the assignment
// painted over the picture with the usage bars; the GUI's Anchors tab.
// Its figures (report, series, GUI tab): anchors_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/anchors.h"
#include "core/attention/capabilities.h"

namespace attnlab::session {
namespace {

void add_anchors(ImageStep& s) {
  analysis::Table heads = make_table(
      "anchors_heads",
      "anchor assignment per layer and head (\"fused\" = head-mean of A): spatial coherence = "
      "share of 4-neighbour grid pairs with the same hard anchor (coherence_chance: the same "
      "labels at random positions); entropy in nats",
      {"layer", "path", "head", "coherence", "coherence_chance", "mean_entropy", "anchors_used",
       "max_usage"},
      3);
  analysis::Table usage =
      make_table("anchors_usage", "anchor usage Δ_m / N per layer, head and anchor",
                 {"layer", "path", "head", "anchor", "usage"}, 4);
  for (const auto& l : s.layers) {
    const auto a = analysis::anchor_assignment(*l.trace, s.b);
    const auto& lay = l.trace->layout;
    const int64_t p = lay.num_prefix(), heads_n = a.hard.size(0);
    const at::Tensor grid_hard = at::cat({a.hard, a.fused_hard.unsqueeze(0)})
                                     .slice(1, p)
                                     .reshape({heads_n + 1, lay.height, lay.width});
    analysis::ResultKey key{"anchors", s.image, l.index, "", "", "hard"};
    s.session.emit(to_array(grid_hard, analysis::format_result_key(key), {"head", "y", "x"},
                            "hard anchor (argmax of A) of every grid token of " + l.path +
                                "; the last head slot is the head-mean of A"));
    key.part = "soft";
    s.session.emit(to_array(a.soft, analysis::format_result_key(key), {"head", "token", "anchor"},
                            "soft assignment A of every token (prefix tokens first) of " + l.path));
    auto used = [](const at::Tensor& hard, int64_t m) {
      return at::bincount(hard, {}, m).gt(0).sum().item<int64_t>();
    };
    const int64_t m = a.usage.size(1);
    for (int64_t h = 0; h < heads_n; ++h) {
      heads.add_row({l.index, l.path, std::to_string(h), a.coherence[h].item<double>(),
                     a.coherence_chance[h].item<double>(), a.entropy[h].mean().item<double>(),
                     used(a.hard[h], m), a.usage[h].max().item<double>()});
      for (int64_t k = 0; k < m; ++k)
        usage.add_row({l.index, l.path, std::to_string(h), k, a.usage[h][k].item<double>()});
    }
    heads.add_row({l.index, l.path, "fused", a.fused_coherence, a.fused_coherence_chance,
                   a.entropy.mean().item<double>(), used(a.fused_hard, m),
                   a.fused_usage.max().item<double>()});
  }
  s.session.accumulate(heads);
  s.session.accumulate(usage);
}

}  // namespace

AnalysisInfo anchors_analysis() {
  AnalysisInfo info;
  info.name = "anchors";
  info.summary = "anchor assignments, their spatial coherence, entropy and usage";
  info.needs = {attention::capability::kAnchorAssignment};
  info.tables = {"anchors_heads", "anchors_usage"};
  info.arrays = {"anchors__<image>__L<ll>__hard|soft"};
  info.in_image_analysis = true;
  info.add = add_anchors;
  return info;
}

}  // namespace attnlab::session
