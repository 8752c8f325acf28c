// Token merging (ToMe; Bolya et al., ICLR 2023; SPEC_COMPARISON "Token merging"), the one
// implementation the ViT family's merging blocks use (models/vit_blocks.h TomeBlock):
//   TomeAttention         timm's Attention (qkv [q | k | v] head-major, proj) with
//                         proportional attention — log(s_j) added to every key column j — and
//                         the matching metric k averaged over the heads
//   tome_match            bipartite soft matching (spec steps 3): r' = min(r, (T − 1)//2),
//                         class token protected
//   tome_merge_weighted   the size-weighted average of merged tokens and their new sizes (4)
//   tome_merge_source     the 0/1 source matrix merged the same way (5)
//   TomeAttention::trace_on_inputs  the traced view: the block's attention on the model's
//                         input tokens, each standing for the merged token it went into
// Names carry a tome_ / Tome prefix: models/*.cpp are compiled in unity batches.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <memory>
#include <utility>

#include "core/attention/layers.h"
#include "core/attention/mechanism.h"

namespace attnlab::models::tome {

// What merging tracks between blocks: sizes (B, T, 1) (tokens per token, all ones before the
// first merge) and source (B, T, T₀) (which input token went into which token; undefined
// when not traced).
struct TomeState {
  at::Tensor size, source;
};

// The tokens before the first block: sizes of ones, source the identity when `trace_source`.
TomeState tome_initial_state(const at::Tensor& x, bool trace_source);

// One block's merge decision (spec step 3) on its tokens' metric (B, T, d).
struct TomeMatch {
  int64_t r = 0;                  // r' actually merged (0: nothing to do)
  at::Tensor unmerged, src, dst;  // (B, |A| − r', 1), (B, r', 1), (B, r', 1) indices
};
TomeMatch tome_match(const at::Tensor& metric, int64_t r);

// Spec step 4: x (B, T, C) and sizes (B, T, 1) -> the merged tokens and sizes, (B, T − r', ·),
// ordered [unmerged A tokens in position order, then every B token in position order].
std::pair<at::Tensor, at::Tensor> tome_merge_weighted(const TomeMatch& m, const at::Tensor& x,
                                                      const at::Tensor& size);
// Spec step 5: the source matrix merged with the same order (max of 0/1 rows).
at::Tensor tome_merge_source(const TomeMatch& m, const at::Tensor& source);

// timm's Attention with ToMe's two changes; parameters qkv (C -> 3C, bias optional), proj.
class TomeAttention : public torch::nn::Module {
 public:
  TomeAttention(int64_t dim, int64_t heads, bool qkv_bias);
  // x (B, T, C); size (B, T, 1) for proportional attention, undefined for none. Returns
  // proj(attention) (B, T, C) and the metric (B, T, d).
  std::pair<at::Tensor, at::Tensor> forward(const at::Tensor& x, const at::Tensor& size) const;

  // The same attention traced on the model's input tokens (T₀ of them, `layout`): input
  // token p carries the merged token owner[p] ((B, T₀) int64, from the source matrix), i.e.
  // x (B, T, C) gathered at owner. Plain softmax over those T₀ copies IS proportional
  // attention: the s_j copies of token j share its weight exp(q·k_j)·s_j / Z, so the rows
  // are the merged rows carried back to the inputs (each input of j gets A_ij / s_j) and
  // the output at p is the merged output of owner[p]. Runs the registry's softmax mechanism
  // on this module's own weights (shared, not copied), so every analysis of softmax traces
  // applies. O(T₀²): for analysis forwards, not for throughput.
  attention::TracedOutput trace_on_inputs(const at::Tensor& x, const at::Tensor& owner,
                                          const attention::TokenLayout& layout,
                                          const attention::TraceOptions& options) const;

 private:
  mutable std::shared_ptr<attention::AttentionMechanism> input_view_;  // softmax, built once
  int64_t dim_;
  int64_t heads_;
  double scale_;
  std::shared_ptr<attention::LinearLayer> qkv_, proj_;
};

}  // namespace attnlab::models::tome
