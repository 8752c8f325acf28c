// The float64 truth of softmax(q·kᵀ·scale + biases)·v and a derived elementwise bound on how
// far a float32 or bf16 computation of it (eager or fused) may land from that truth: shared
// by the kernel-level comparison (fused_attention_test.cpp) and the mechanism-level one
// (fused_mechanism_test.cpp), which applies it to the operands each mechanism really passed.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "core/attention/fused_attention.h"
#include "core/runtime/torch_compat.h"

namespace attnlab::testing {

// Unit roundoffs: bf16's, and fp32's, which is also every sum's: products and reductions
// accumulate in fp32 at bf16 too (core/runtime/bf16_products.h; the fused CPU kernel too).
inline double unit_roundoff(at::ScalarType dtype) {
  return std::ldexp(1.0, dtype == at::kBFloat16 ? -8 : -24);
}

// The float64 scores q·kᵀ·scale + every bias, in order.
inline at::Tensor core_scores(const at::Tensor& q, const at::Tensor& k, double scale,
                              const std::vector<at::Tensor>& biases) {
  at::Tensor s = at::matmul(q.to(at::kDouble), k.to(at::kDouble).transpose(-2, -1)) * scale;
  for (const auto& b : biases) s = s + b.to(at::kDouble);
  return s;
}

// softmax(q kᵀ·scale + biases)·v in float64: the truth both paths are held to.
inline at::Tensor core_truth(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             double scale, const std::vector<at::Tensor>& biases) {
  return at::matmul(at::softmax(core_scores(q, k, scale, biases), -1), v.to(at::kDouble));
}

// Bound, per output element, on |out − core_truth| for either path at unit roundoff u (fp32
// sums, u32). Written for the eager form, which rounds more than the fused kernel does:
//   scores  |ŝ_ij − S_ij| ≤ ε_ij = (u_q + d·u32)·(|q|·|k|ᵀ)_ij·scale (the d-long fp32 sum;
//           u_q = u where q·scale is rounded first: Swin's form, and LibTorch 2.0's fused
//           kernel) + 2u·|q_i·k_j|·scale (the product's and the scaling's roundings) + u·|each
//           running sum as each bias is added| + u32·(|S_ij| + max_j |S_ij|) (the softmax's
//           subtraction of the row's maximum, in fp32); times (1 + 2u) for the products of
//           two roundings (a rounding of an already rounded value). The fused kernel rounds
//           its scores at fp32 and its summed mask (at the dtype) once: within the same ε.
//   softmax p'_j = P_j·e^{η_j} / Σ_k P_k·e^{η_k} with |η_k| ≤ ε_k, so p'_j / P_j lies in
//           [e^{-ε_j} / U, e^{ε_j} / L], L = Σ_k P_k e^{-ε_k}, U = Σ_k P_k e^{ε_k}: p'_j is within
//           r_j·P_j of P_j, r_j = max(e^{ε_j}/L − 1, 1 − e^{-ε_j}/U). A masked key (Swin's -100)
//           has a large ε and a P of e^-90: it needs no special case. Since Σ_j (p'_j − P_j) = 0,
//           |Σ_j (p'_j − P_j)·v_j| ≤ Σ_j r_j·P_j·|v_j − O| =: R (O the truth's output).
//   rounding the probabilities are computed with relative error u + c·u32, c = 4K + 8 (exp
//           within an ulp, the K-long sum, the division, the fused kernel's rescaling of its
//           running sums by one more exp per key block, at most K blocks, and bf16's rounding
//           of the probabilities before ·v); the K-long fp32 aggregation adds K·u32·Σ p̂|v| and
//           the output's rounding u of itself.
// So |out − O| ≤ (1 + u)·R + (2u + (c + K)·u32)·(1 + u)·(1 + u + c·u32)·A, A = Σ_j (1 + r_j)·
// P_j·|v_j| ≥ Σ_j p'_j·|v_j|. No first-order step; the float64 truth's own roundings (2^-53
// of a value) are below u32 by 2^29 and not counted. A dropped bias or mask, a wrong scale or
// a scrambled window moves outputs by a sizeable part of max|v|, far beyond it.
inline at::Tensor core_error_bound(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   double scale, const std::vector<at::Tensor>& biases,
                                   bool scale_queries, double u) {
  const double u32 = std::ldexp(1.0, -24);
  const double d = double(q.size(-1)), keys = double(k.size(-2)), c = 4 * keys + 8;
#if defined(ATTNLAB_HAS_SDPA) && !defined(ATTNLAB_SDPA_HAS_SCALE)
  (void)scale_queries;  // LibTorch 2.0's fused kernel takes q·(scale·√d), rounded
  const double u_q = u;
#else
  const double u_q = scale_queries ? u : 0.0;
#endif
  const at::Tensor q64 = q.to(at::kDouble), k64 = k.to(at::kDouble), v64 = v.to(at::kDouble);
  at::Tensor running = at::matmul(q64, k64.transpose(-2, -1)) * scale;
  at::Tensor eps = (u_q + d * u32) * at::matmul(q64.abs(), k64.abs().transpose(-2, -1)) * scale +
                   2 * u * running.abs();
  for (const auto& b : biases) {
    running = running + b.to(at::kDouble);
    eps = eps + u * running.abs();
  }
  const at::Tensor& s = running;
  eps = (eps + u32 * (s.abs() + s.abs().amax(-1, true))) * (1 + 2 * u);
  const at::Tensor p = at::softmax(s, -1);
  const at::Tensor out = at::matmul(p, v64);
  const at::Tensor lower = (p * (-eps).exp()).sum(-1, true), upper = (p * eps.exp()).sum(-1, true);
  const at::Tensor r = at::maximum(eps.exp() / lower - 1, 1 - (-eps).exp() / upper);
  const at::Tensor spread = (v64.unsqueeze(-3) - out.unsqueeze(-2)).abs();  // (…, N, K, e)
  const at::Tensor moved = ((r * p).unsqueeze(-1) * spread).sum(-2);
  const at::Tensor mass = at::matmul((1 + r) * p, v64.abs());
  return (1 + u) * moved + (2 * u + (c + keys) * u32) * (1 + u) * (1 + u + c * u32) * mass;
}

// max(|got − truth| − bound) over the elements: at most 0 where every one is within its bound.
inline double bound_excess(const at::Tensor& got, const at::Tensor& truth,
                           const at::Tensor& bound) {
  return ((got.to(at::kDouble) - truth).abs() - bound).max().item<double>();
}

// A recorded call's truth and bound.
inline at::Tensor core_truth(const attention::AttentionCall& c) {
  return core_truth(c.q, c.k, c.v, c.scale, c.form.biases);
}
inline at::Tensor core_error_bound(const attention::AttentionCall& c, double u) {
  return core_error_bound(c.q, c.k, c.v, c.scale, c.form.biases, c.form.scale_queries, u);
}

}  // namespace attnlab::testing
