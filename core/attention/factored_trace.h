// The trace of a mechanism whose implicit attention is an unnormalised product of two
// factors the trace stores, A = q·kᵀ (Hydra's normalised q, k per channel; Efficient
// attention's ρq(Q), ρk(K)), mixed through a small buffer kᵀv the forward kept as an
// internal (its "kv" rank matrix). Rows cost O(len(q_rows)·N·d) and products A·x, Aᵀ·y
// O(N·d·c): no N×N is formed.
#pragma once

#include <string>
#include <vector>

#include "core/attention/attention_trace.h"
#include "core/attention/map_factors.h"

namespace attnlab::attention {

class FactoredRowsTrace : public AttentionTrace, public MapFactorSource {
 public:
  explicit FactoredRowsTrace(std::string kv_internal) : kv_internal_(std::move(kv_internal)) {}

  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    const HeadGroup& g = group_of(head);
    return MapFactors{g.q[b][head - g.first_head], g.k[b][head - g.first_head]};
  }

  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"kv", internal(kv_internal_)[b]}};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    return at::matmul(g.q[b][h].index_select(0, q_rows), g.k[b][h].transpose(0, 1));
  }

  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const at::Tensor q = g.q[b][h], k = g.k[b][h];  // (N, d)
    if (transposed) return at::matmul(k, at::matmul(q.t(), x));
    return at::matmul(q, at::matmul(k.t(), x));
  }

 private:
  std::string kv_internal_;
};

}  // namespace attnlab::attention
