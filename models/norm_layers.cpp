// BatchNorm2dLayer (LayerNormLayer is core/attention/layers.h's).
#include "models/norm_layers.h"

#include <ATen/ATen.h>

namespace attnlab::models {

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
