// gradrollout: gradient-weighted attention rollout of the explained class: every layer runs
// through its explicit form (layers above 4096 tokens are refused), the class score's
// gradient weights each head's attention, and the rollout switches carry the readout row
// back to the first layer's grid. Needs the model and the image. Figure: the grid of
// every model's maps, as Grad-CAM's.
// Its figures (report, series, GUI tab): gradrollout_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "models/grad_rollout_run.h"

namespace attnlab::session {
namespace {

void explain_gradrollout(ExplainStep& s) {
  models::GradRolloutRequest q;
  q.cls = class_to_explain(s.settings.options);
  q.rollout = rollout_options(s.settings.options);
  const models::GradRolloutResult r = models::run_grad_rollout(s.model, s.input, q);
  const analysis::ResultKey key{"gradrollout", s.image, -1, "", "", ""};
  s.session.emit(to_array(r.map, analysis::format_result_key(key), {"y", "x"},
                          "gradient-weighted rollout of class " + std::to_string(r.cls) +
                              " (logit " + short_number(r.score) + ") through " +
                              std::to_string(r.layers) + " layers: " + r.readout +
                              ", over the first layer's " + grid_text(r.layout) + " grid (" +
                              analysis::head_fusion_name(r.options.fusion) + " fusion, residual " +
                              short_number(r.options.residual) + ", discard " +
                              short_number(r.options.discard_ratio) + ")"));
  s.explanations.add_row({s.image, "gradrollout", r.readout, r.cls, r.score});
}

}  // namespace

AnalysisInfo gradrollout_analysis() {
  AnalysisInfo info;
  info.name = "gradrollout";
  info.summary =
      "gradient-weighted rollout of the explained class through every layer's explicit form";
  info.tables = {"explanations"};
  info.arrays = {"gradrollout__<image>"};
  info.explain = explain_gradrollout;
  info.needs_classes = true;
  info.reads_options = {"class", "fusion", "residual", "discard", "no-renormalize"};
  info.describe = [](const AnalysisSettings&) {
    return nlohmann::json{
        {"per_layer",
         "fuse_heads(max(A ⊙ dscore/dA, 0)) on the layer's tokens, A the explicit form of the "
         "layer's attention"},
        {"rollout", "the rollout switches (fusion, residual, discard, renormalisation)"},
        {"explicit_limit_tokens", attention::kExplicitMaxTokens}};
  };
  return info;
}

}  // namespace attnlab::session
