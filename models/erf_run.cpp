// See erf_run.h.
#include "models/erf_run.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "core/analysis/erf.h"
#include "models/gradcam_run.h"

namespace attnlab::models {

std::string default_erf_target(Backbone& model) {
  // "layers.N", or the block of "blocks.N.norm1" / "transformer.resblocks.N.ln_1".
  return block_of_norm_target(default_gradcam_target(model));
}

ErfResult run_erf(Backbone& model, const at::Tensor& image, const ErfRequest& request) {
  if (image.dim() != 4 || image.size(0) != 1)
    throw ModelError("erf: expected one image (1, 3, H, W)");
  ErfResult out;
  out.target = request.target.empty() ? default_erf_target(model) : request.target;
  ForwardOptions options;
  options.trace_attention = true;  // the target's grid comes from the traces
  options.gradient_target = out.target;
  options.target_in_graph = true;
  const at::AutoGradMode grad_on(true);
  const at::Tensor input = image.detach().clone().requires_grad_(true);
  const ForwardResult r = model.run(input, options);
  if (!r.target.defined())
    throw ModelError("erf: " + model.arch() + " has no module output named '" + out.target +
                     "' (e.g. " + default_erf_target(model) + ")");
  // (1, N, C) with prefix tokens first, or NCHW (RAVLT).
  const bool nchw = r.target.dim() == 4;
  const int64_t tokens = nchw ? r.target.size(2) * r.target.size(3) : r.target.size(1);
  out.layout = tapped_output_layout(r, out.target, tokens);
  const auto& lay = out.layout;
  out.token_y = request.token_y < 0 ? lay.height / 2 : request.token_y;
  out.token_x = request.token_x < 0 ? lay.width / 2 : request.token_x;
  if (out.token_y >= lay.height || out.token_x >= lay.width)
    throw ModelError("erf: token (" + std::to_string(out.token_y) + ", " +
                     std::to_string(out.token_x) + ") is outside the " +
                     std::to_string(lay.height) + "x" + std::to_string(lay.width) + " grid of " +
                     out.target);
  const at::Tensor token = nchw
                               ? r.target.select(0, 0).select(1, out.token_y).select(1, out.token_x)
                               : r.target.select(0, 0).select(
                                     0, lay.num_prefix() + out.token_y * lay.width + out.token_x);
  const at::Tensor grad = torch::autograd::grad({token.sum()}, {input}, {}, /*retain_graph=*/false,
                                                /*create_graph=*/false, /*allow_unused=*/true)[0];
  const int64_t h = image.size(2), w = image.size(3);
  out.map = grad.defined() ? grad.detach()[0].abs().sum(0).to(at::kCPU, at::kDouble)
                           : at::zeros({h, w}, at::kDouble);
  out.centre_y = analysis::cell_centre_px(out.token_y, lay.height, h);
  out.centre_x = analysis::cell_centre_px(out.token_x, lay.width, w);
  return out;
}

}  // namespace attnlab::models
