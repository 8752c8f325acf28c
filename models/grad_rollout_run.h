// Gradient-weighted rollout on a backbone: one forward with every attention layer run
// through its explicit form (TraceOptions::explicit_attention, which equals the model's
// own forward), the class score's gradient with respect to every layer's explicit
// attention by autograd, and core/analysis/grad_rollout's map on the first layer's grid.
// Every layer must have at most attention::kExplicitMaxTokens tokens (a 224×224 input
// qualifies for every backbone here; larger inputs are refused with the layer named).
// Runs with autograd on: call it from a worker.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "core/analysis/grad_rollout.h"
#include "models/backbone.h"

namespace attnlab::models {

struct GradRolloutRequest {
  int64_t cls = -1;  // the class to explain; -1 = the top-1 prediction
  analysis::RolloutOptions rollout;
};

struct GradRolloutResult {
  int64_t cls = 0;
  double score = 0;                  // the class's logit
  attention::TokenLayout layout;     // the first attention layer's grid
  at::Tensor map;                    // (height, width) float32
  std::string readout;               // which rows of the rollout were read
  int64_t layers = 0;                // attention layers rolled out
  analysis::RolloutOptions options;  // the switches used
  at::Tensor logits;                 // (classes,)
};

// image: (1, 3, H, W), preprocessed. Throws ModelError for a class out of range, and the
// attention error of the first layer above the explicit-form limit.
GradRolloutResult run_grad_rollout(Backbone& model, const at::Tensor& image,
                                   const GradRolloutRequest& request = {});

}  // namespace attnlab::models
