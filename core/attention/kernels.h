// Small pieces of attention math shared by several mechanisms.
#pragma once

#include <ATen/core/Tensor.h>

namespace attnlab::attention {

// softmax(q kᵀ · scale) over the keys: q (n, d), k (K, d) -> (n, K). Also batched.
at::Tensor softmax_scores(const at::Tensor& q, const at::Tensor& k, double scale);
// κ(x) = elu(x) + 1, the positive feature map of linear attention and RALA.
at::Tensor elu_feature(const at::Tensor& x);
// x / ‖x‖ over the last axis, with no epsilon (as Castling's reference does).
at::Tensor unit_rows(const at::Tensor& x);

}  // namespace attnlab::attention
