// The module shell RAVLT wraps around both of its attention forms (SPEC §1.4, §2.3), shared
// by rala.cpp and softmax_rope.cpp: a 1×1 conv `qkvo` giving [q | k | v | o] (each C wide,
// head-major), a 5×5 depthwise `lepe` conv on v, and a 1×1 conv `proj` after the gate.
// The reference modules are NCHW; our interface is tokens (B, N, C) on a pure grid.
#pragma once

#include <memory>
#include <string>

#include "core/attention/layers.h"
#include "core/attention/mechanism.h"

namespace attnlab::attention {

// One forward's pieces, with the reshapes between NCHW images and per-head features
// (B, h, N, d), channel = head·d + c.
struct RavltParts {
  int64_t batch = 0, dim = 0, heads = 0, height = 0, width = 0;
  at::Tensor q, k, v;          // per head, as projected (no feature map, no RoPE)
  at::Tensor o_img, lepe_img;  // the gate and lepe(v), NCHW

  at::Tensor per_head(const at::Tensor& image) const;
  at::Tensor to_image(const at::Tensor& per_head_features) const;
};

class RavltShell {
 public:
  // Registers qkvo, lepe, proj on `owner`; `name` is the mechanism's, for messages (the
  // head dim must be a multiple of 4 for the 2-D RoPE both forms apply).
  RavltShell(torch::nn::Module& owner, const MechanismConfig& c, const std::string& name);

  RavltParts split(const at::Tensor& tokens, const TokenLayout& layout) const;
  // proj(mixed_image) back to tokens (B, N, C).
  at::Tensor project(const RavltParts& parts, const at::Tensor& mixed_image) const;
  // The 5×5 depthwise lepe conv's weight (C, 1, 5, 5), channel = head·d + c.
  const at::Tensor& lepe_weight() const { return lepe_->weight; }

 private:
  int64_t heads_;
  std::shared_ptr<Conv2dLayer> qkvo_, lepe_, proj_;
};

}  // namespace attnlab::attention
