// heads: head importance by ablation (models/head_ablation.h) — every head of every
// attention layer switched off alone, the image run again, and the drop of the unablated
// model's predicted class probability recorded, with whether the top-1 survives; one
// plain forward per head and image. The loss on a labelled set is `attnlab
// head-importance --dataset` (the analyses see no labels). Figure: layers × heads heatmap
// of the mean drop per model; the GUI's Heads tab for small models (kGuiHeadTokens).
// Its figures (report, series, GUI tab): heads_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "models/head_ablation.h"

namespace attnlab::session {
namespace {

void explain_heads(ExplainStep& s) {
  const models::AblationPlan plan = models::plan_head_ablation(s.model);
  for (const auto& u : plan.unsupported)
    s.session.warn("heads: " + u +
                   " does not say where its heads enter its output "
                   "projection; its heads are not ablated");
  if (plan.layers.empty()) return;     // nothing to ablate: the warnings say why, no table
  const models::HeadAblationBatch r =  // the heads' masks are restored when a cancel throws
      models::ablate_heads(s.model, plan, s.input, at::Tensor(), [&](int64_t done, int64_t total) {
        s.session.progress(done, total);
        s.session.throw_if_cancelled();
      });
  analysis::Table t = make_table(
      "head_importance",
      "head importance by ablation: each head's output channels zeroed before its layer's "
      "output projection, one head at a time; probability_drop = p(c) unablated - p(c) "
      "ablated for the unablated model's predicted class c, top1_kept = 1 when the top-1 "
      "stays c",
      {"layer", "path", "mechanism", "head", "probability", "probability_drop", "top1_kept"}, 4);
  const double p0 = r.probability[0].item<double>();
  for (size_t l = 0; l < plan.layers.size(); ++l)
    for (size_t h = 0; h < plan.layers[l].heads.size(); ++h) {
      const double p = r.ablated_probability[int64_t(l)][int64_t(h)][0].item<double>();
      t.add_row({int64_t(l), plan.layers[l].path, plan.layers[l].mechanism, int64_t(h), p, p0 - p,
                 r.ablated_top1_kept[int64_t(l)][int64_t(h)][0].item<double>()});
    }
  s.session.accumulate(t);
}

}  // namespace

AnalysisInfo heads_analysis() {
  AnalysisInfo info;
  info.name = "heads";
  info.summary =
      "head importance: the predicted class's probability drop when one head's output is "
      "zeroed, every head (layers x heads)";
  info.tables = {"head_importance"};
  info.opt_in = true;   // one forward per head and image
  info.in_demo = true;  // milliseconds per image on the zoo
  info.explain = explain_heads;
  info.needs_classes = true;
  info.in_image_analysis_if = small_enough_for_gui;
  return info;
}

}  // namespace attnlab::session
