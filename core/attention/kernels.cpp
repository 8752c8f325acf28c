// Shared attention math.
#include "core/attention/kernels.h"

#include "core/runtime/mac_counter.h"

#include <ATen/ATen.h>

namespace attnlab::attention {

at::Tensor softmax_scores(const at::Tensor& q, const at::Tensor& k, double scale) {
  // Scaling in place keeps the reference's numerics ((q kᵀ)·scale, as timm and LITv2
  // compute it) without a second N×N temporary.
  const runtime::MacGroupScope scores("scores");  // for the complexity report
  return at::softmax(at::matmul(q, k.transpose(-2, -1)).mul_(scale), -1);
}

at::Tensor elu_feature(const at::Tensor& x) {
  return at::elu(x) + 1.0;
}

at::Tensor unit_rows(const at::Tensor& x) {
  return x / x.norm(2, {-1}, true);
}

}  // namespace attnlab::attention
