// LayerNormLayer and BatchNorm2dLayer.
#include "models/norm_layers.h"

#include <ATen/ATen.h>

namespace attnlab::models {

LayerNormLayer::LayerNormLayer(int64_t dim, double eps_value) : eps(eps_value) {
  weight = register_parameter("weight", at::ones({dim}));
  bias = register_parameter("bias", at::zeros({dim}));
}

at::Tensor LayerNormLayer::operator()(const at::Tensor& x) const {
  return at::layer_norm(x, {weight.size(0)}, weight, bias, eps);
}

BatchNorm2dLayer::BatchNorm2dLayer(int64_t channels, double eps_value, double momentum_value)
    : eps(eps_value), momentum(momentum_value) {
  weight = register_parameter("weight", at::ones({channels}));
  bias = register_parameter("bias", at::zeros({channels}));
  running_mean = register_buffer("running_mean", at::zeros({channels}));
  running_var = register_buffer("running_var", at::ones({channels}));
}

at::Tensor BatchNorm2dLayer::operator()(const at::Tensor& x) {
  return at::batch_norm(x, weight, bias, running_mean, running_var, is_training(), momentum, eps,
                        /*cudnn_enabled=*/true);
}

}  // namespace attnlab::models
