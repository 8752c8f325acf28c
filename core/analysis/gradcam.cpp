// See gradcam.h.
#include "core/analysis/gradcam.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

namespace attnlab::analysis {

at::Tensor grad_cam(const at::Tensor& activation, const at::Tensor& gradient,
                    const attention::TokenLayout& layout, const GradCamOptions& options) {
  if (activation.dim() != 2 || !activation.sizes().equals(gradient.sizes()))
    throw std::invalid_argument("grad_cam: activation and gradient must both be (tokens, C)");
  if (activation.size(0) != layout.tokens())
    throw std::invalid_argument("grad_cam: " + std::to_string(activation.size(0)) +
                                " tokens, but the layout (" + layout.describe() + ") has " +
                                std::to_string(layout.tokens()));
  const int64_t p = layout.num_prefix();
  const at::Tensor a = activation.slice(0, p).to(at::kCPU, at::kDouble);
  const at::Tensor g = gradient.slice(0, p).to(at::kCPU, at::kDouble);
  const at::Tensor weights = g.mean(0);     // (C,)
  at::Tensor map = at::matmul(a, weights);  // (grid tokens,)
  if (options.relu) map = at::relu(map);
  return map.reshape({layout.height, layout.width}).to(at::kFloat);
}

}  // namespace attnlab::analysis
