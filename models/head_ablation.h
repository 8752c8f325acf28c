// Head importance by ablation (issue 26; Michel et al. 2019's "are sixteen heads really
// better than one" protocol, one head at a time): each head's output is switched off by
// zeroing its input channels in the layer's output projection (attention::HeadOutputSource
// says which), the images go through the model again, and the drop of the unablated
// model's predicted class probability (and, with labels, the rise of the cross-entropy
// loss and the change in accuracy) is recorded. The weights are restored after each head,
// also when the forward throws. Plain forwards without traces or autograd, a batch of
// images at a time.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <vector>

#include "core/attention/head_outputs.h"
#include "models/backbone.h"

namespace attnlab::models {

struct AblatableLayer {
  std::string path;  // the attention module's state-dict path
  std::string mechanism;
  std::vector<attention::HeadColumns> heads;  // parameters relative to `path`
};

struct AblationPlan {
  std::vector<AblatableLayer> layers;  // every attention module, in registration order
  // Attention modules whose heads cannot be switched off one at a time (their mechanism
  // does not say where its heads enter the projection), "path (mechanism)".
  std::vector<std::string> unsupported;
  int64_t heads() const;  // the ablations: heads summed over the layers
};

AblationPlan plan_head_ablation(Backbone& model);

// Per image of a batch: the unablated model's predicted class and its probability, the
// loss against the label (NaN without labels), and for every ablated head (layer, head)
// the same quantities under the ablation, (L, Hmax, B) float64 (NaN for heads a layer
// lacks).
struct HeadAblationBatch {
  at::Tensor predicted, probability, loss, correct;  // (B)
  at::Tensor ablated_probability, ablated_loss, ablated_correct, ablated_top1_kept;  // (L, H, B)
};

// images (B, 3, H, W) preprocessed; labels (B) int64 or undefined. on_head(done, total)
// after each ablated head. Throws ModelError when the plan has no layer. `resume`: each
// ablated forward starts at the ablated layer's block (false: from the images, the
// baseline bench/analysis_bench.cpp compares with).
HeadAblationBatch ablate_heads(Backbone& model, const AblationPlan& plan, const at::Tensor& images,
                               const at::Tensor& labels,
                               const std::function<void(int64_t, int64_t)>& on_head = {},
                               bool resume = true);

}  // namespace attnlab::models
