// Statistics of the logit lens (nostalgebraist, "interpreting GPT: the logit lens",
// LessWrong, 2020): the model's final norm and classification head applied to the residual
// stream after every layer, read as the prediction the model would make if it stopped
// there. For a ViT the lens is applied to the class token (or to whatever the head pools).
// Given those per-layer logits, this module says per layer what the lens predicts and how
// far it is from the model's own output; computing the logits is the caller's.
//
// Per layer l, with p_l = softmax(logits[l]) and p_final the last row's:
//   top1             argmax of the logits (the lowest class index on ties)
//   top1_probability p_l(top1)
//   label_rank       1 + the number of classes whose logit is strictly above the label's
//                    (ties count in the label's favour); 0 without a label
//   label_probability p_l(label); NaN without a label
//   kl               KL(p_final ‖ p_l) = Σ_k p_final(k)·(log p_final(k) − log p_l(k)) in
//                    nats, from float64 log_softmax. The last row's is exactly 0: its
//                    log-probabilities minus themselves are 0 in every term. Rounding can
//                    only take a non-negative sum a few ulps below 0: clamped at 0.
//   agrees           top1 == the last row's top1
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace attnlab::analysis {

struct LensLayer {
  int64_t top1 = 0;
  double top1_probability = 0.0;
  int64_t label_rank = 0;          // 1 = the top class; 0 without a label
  double label_probability = 0.0;  // NaN without a label
  double kl = 0.0;                 // KL(p_final ‖ p_l), nats
  bool agrees = false;             // top1 == the final row's top1
};

struct LensStatistics {
  int64_t label = -1;             // as given; -1 = none
  std::vector<LensLayer> layers;  // one per row of the logits; the last is the model's own
};

// logits (L, K): row l = the final norm and head applied to layer l's token, the last row
// the model's own logits; any float dtype or device, L, K >= 1. label in [0, K), or -1 for
// none. Throws std::invalid_argument for logits that are not 2-D or empty, non-finite
// logits, or a label outside [-1, K).
LensStatistics lens_statistics(const at::Tensor& logits, int64_t label = -1);

}  // namespace attnlab::analysis
