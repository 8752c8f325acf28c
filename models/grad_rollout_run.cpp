// See grad_rollout_run.h.
#include "models/grad_rollout_run.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <vector>

#include "models/gradcam_run.h"

namespace attnlab::models {

GradRolloutResult run_grad_rollout(Backbone& model, const at::Tensor& image,
                                   const GradRolloutRequest& request) {
  if (image.dim() != 4 || image.size(0) != 1)
    throw ModelError("gradient rollout: expected one image (1, 3, H, W)");
  require_classes(model, "gradient rollout");
  ForwardOptions options;
  options.trace_attention = true;
  options.trace.explicit_attention = true;
  const at::AutoGradMode grad_on(true);
  ForwardResult r = model.run(image, options);
  if (r.traces.empty()) throw ModelError("gradient rollout: " + model.arch() + " traced no layer");

  GradRolloutResult out;
  out.logits = r.logits[0].detach();
  out.cls = explained_class(out.logits, request.cls, "gradient rollout");
  const at::Tensor score = r.logits[0][out.cls];
  out.score = score.item<double>();

  // Every layer's explicit matrices at once: one backward pass for all of them.
  std::vector<at::Tensor> rows;
  for (const auto& t : r.traces)
    rows.insert(rows.end(), t.trace->explicit_rows.begin(), t.trace->explicit_rows.end());
  std::vector<at::Tensor> grads = torch::autograd::grad(
      {score}, rows, {}, /*retain_graph=*/false, /*create_graph=*/false, /*allow_unused=*/true);

  std::vector<analysis::GradientLayer> layers;
  size_t next = 0;
  for (const auto& t : r.traces) {
    analysis::GradientLayer layer;
    layer.trace = t.trace.get();
    for (int64_t h = 0; h < t.trace->heads; ++h, ++next)
      // A head the score does not depend on (a dead branch) has no gradient: zero.
      layer.gradients.push_back(grads[next].defined() ? grads[next] : at::zeros_like(rows[next]));
    layers.push_back(std::move(layer));
  }
  const analysis::GradRolloutResult g = analysis::gradient_rollout(layers, 0, request.rollout);
  out.layout = g.layout;
  out.map = g.map;
  out.readout = g.readout;
  out.options = g.options;
  out.layers = static_cast<int64_t>(layers.size());
  return out;
}

}  // namespace attnlab::models
