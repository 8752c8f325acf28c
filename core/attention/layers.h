// The parameterised layers the mechanisms are made of, with the reference names
// (weight, bias) and PyTorch's default initialisation (uniform ±1/√fan_in), written
// directly on ATen ops so that the mechanisms need no heavier LibTorch headers.
#pragma once

#include <torch/nn/module.h>

#include <array>
#include <memory>

namespace attnlab::attention {

// y = x Wᵀ + b over the last axis; weight (out, in).
class LinearLayer : public torch::nn::Module {
 public:
  LinearLayer(int64_t in, int64_t out, bool bias);
  at::Tensor operator()(const at::Tensor& x) const;
  at::Tensor weight, bias;  // bias undefined when built without
};

// 2-D convolution on NCHW; weight (out, in/groups, kh, kw).
class Conv2dLayer : public torch::nn::Module {
 public:
  struct Shape {
    int64_t in = 0, out = 0;
    std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, padding{0, 0};
    int64_t groups = 1;
    bool bias = true;
  };
  explicit Conv2dLayer(const Shape& shape);
  at::Tensor operator()(const at::Tensor& x) const;
  at::Tensor weight, bias;
  Shape shape;
};

// Layer normalisation over the last axis (weight and bias of size `dim`, initialised to
// 1 and 0 as PyTorch does); eps as the reference module sets it.
class LayerNormLayer : public torch::nn::Module {
 public:
  LayerNormLayer(int64_t dim, double eps);
  at::Tensor operator()(const at::Tensor& x) const;
  at::Tensor weight, bias;
  double eps;
};

// Register a child under `name` (which may be "0", as in nn.Sequential) and return it.
template <typename Layer, typename... Args>
std::shared_ptr<Layer> add_layer(torch::nn::Module& parent, const std::string& name,
                                 Args&&... args) {
  return parent.register_module(name, std::make_shared<Layer>(std::forward<Args>(args)...));
}

}  // namespace attnlab::attention
