// The trace of any mechanism whose implicit rows are plain softmax attention over its
// group's keys, a_i = softmax(q_i · kᵀ · scale) with the q, k the trace stores (softmax and
// the RoPE softmax of RAVLT, whose stored q, k are already rotated).
#pragma once

#include "core/attention/attention_trace.h"
#include "core/attention/kernels.h"

namespace attnlab::attention {

class SoftmaxRowsTrace : public AttentionTrace {
 public:
  double scale = 1.0;

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    return softmax_scores(g.q[b][h].index_select(0, q_rows), g.k[b][h], scale);
  }
};

}  // namespace attnlab::attention
