// GELU (the exact erf form, nn.GELU's default) for the backbones, safe to differentiate.
//
// LibTorch 1.13's CPU gelu_backward returns wrong values in float32 when the input is
// contiguous and the incoming gradient is not (every element, every run, any ATen CPU
// capability; float64 and the other stride combinations are right). The backbones hit
// exactly that case where a GELU's output is turned into tokens by a transpose (LITv2's
// downsampling: gelu(BN(conv)) -> flatten -> transpose), so Grad-CAM and gradient rollout
// through it were wrong, and once NaN. models::gelu computes the forward with at::gelu and
// hands gelu_backward contiguous operands. First-order gradients only (what Grad-CAM,
// gradient rollout and training take). tests/models/gelu_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

namespace attnlab::models {

at::Tensor gelu(const at::Tensor& x);

}  // namespace attnlab::models
