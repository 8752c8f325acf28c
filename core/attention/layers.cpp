// LinearLayer, Conv2dLayer and LayerNormLayer.
#include "core/attention/layers.h"
#include "core/nn/initial_values.h"

#include <ATen/ATen.h>

#include <cmath>

namespace attnlab::attention {
namespace {

at::Tensor uniform(at::IntArrayRef shape, int64_t fan_in) {
  return nn::initial_uniform(shape, 1.0 / std::sqrt(static_cast<double>(fan_in)));
}

}  // namespace

LinearLayer::LinearLayer(int64_t in, int64_t out, bool with_bias) {
  weight = register_parameter("weight", uniform({out, in}, in));
  if (with_bias) bias = register_parameter("bias", uniform({out}, in));
}

at::Tensor LinearLayer::operator()(const at::Tensor& x) const {
  return at::linear(x, weight, bias);
}

Conv2dLayer::Conv2dLayer(const Shape& s) : shape(s) {
  const int64_t fan_in = s.in / s.groups * s.kernel[0] * s.kernel[1];
  weight = register_parameter("weight",
                              uniform({s.out, s.in / s.groups, s.kernel[0], s.kernel[1]}, fan_in));
  if (s.bias) bias = register_parameter("bias", uniform({s.out}, fan_in));
}

at::Tensor Conv2dLayer::operator()(const at::Tensor& x) const {
  return at::conv2d(x, weight, bias, shape.stride, shape.padding, {1, 1}, shape.groups);
}

LayerNormLayer::LayerNormLayer(int64_t dim, double eps_) : eps(eps_) {
  weight = register_parameter("weight", at::ones({dim}));
  bias = register_parameter("bias", at::zeros({dim}));
}

at::Tensor LayerNormLayer::operator()(const at::Tensor& x) const {
  return at::layer_norm(x, {weight.size(0)}, weight, bias, eps);
}

}  // namespace attnlab::attention
