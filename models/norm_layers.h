// The normalisation layers the backbones share, with PyTorch's parameter names and
// initial values (weight 1, bias 0; running mean 0, variance 1):
//   LayerNormLayer     nn.LayerNorm over the last axis: the attention layers' own
//                      (core/attention/layers.h), one class for both
//   BatchNorm2dLayer   nn.BatchNorm2d: running statistics in eval mode; batch statistics,
//                      with in-place running-stat updates (unbiased variance), in training
// No num_batches_tracked buffer: our checkpoint loader drops it and, at a fixed momentum,
// the reference never reads it.
#pragma once

#include <torch/nn/module.h>

#include "core/attention/layers.h"

namespace attnlab::models {

using attention::LayerNormLayer;

class BatchNorm2dLayer : public torch::nn::Module {
 public:
  explicit BatchNorm2dLayer(int64_t channels, double eps = 1e-5, double momentum = 0.1);
  at::Tensor operator()(const at::Tensor& x);
  at::Tensor weight, bias, running_mean, running_var;
  double eps, momentum;
};

}  // namespace attnlab::models
