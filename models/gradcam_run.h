// Grad-CAM on a backbone: one forward with the attention traced and the target module's
// output tapped (ForwardOptions::gradient_target), the class score's gradient with
// respect to that output by autograd, and core/analysis/gradcam's map on the grid that
// the layer's own trace describes. Default targets: the last block's first norm for
// isotropic models (ViT/DeiT and their variants), the last stage's output for
// hierarchical ones (LITv2, RAVLT). Runs with autograd on: call it from a worker.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "core/analysis/gradcam.h"
#include "models/backbone.h"

namespace attnlab::models {

struct GradCamRequest {
  std::string target;  // a module's state-dict path; "" = the default above
  int64_t cls = -1;    // the class to explain; -1 = the top-1 prediction
  analysis::GradCamOptions cam;
  at::Tensor target_offset;  // added to the target activation (finite-difference tests)
};

struct GradCamResult {
  std::string target;             // the module explained
  attention::TokenLayout layout;  // the grid of its output
  int64_t cls = 0;
  double score = 0;       // the class's logit
  at::Tensor map;         // (height, width) float32
  at::Tensor gradient;    // (tokens, C): d score / d target activation
  at::Tensor activation;  // (tokens, C)
  at::Tensor logits;      // (classes,)
};

// The class an explanation is for: `requested`, or the top-1 of logits (classes,) when it
// is -1. `who` names the analysis in the ModelError for a class out of range.
int64_t explained_class(const at::Tensor& logits, int64_t requested, const std::string& who);

// The default Grad-CAM target of `model` (from its module names): the last stage
// ("layers.N"), else the last block's first norm ("blocks.N.norm1", CLIP's
// "transformer.resblocks.N.ln_1").
std::string default_gradcam_target(Backbone& model);
// The block a block's first-norm target belongs to ("blocks.3.norm1" -> "blocks.3"); any
// other target as it is.
std::string block_of_norm_target(const std::string& target);

// The traced layout of a tapped module output with `tokens` tokens: the trace of an
// attention module inside `target` (its block, or its stage's last block) whose token
// count matches; else any traced layout with that many tokens (a stage output after its
// downsampling). Throws ModelError when no traced layer has that grid.
attention::TokenLayout tapped_output_layout(const ForwardResult& r, const std::string& target,
                                            int64_t tokens);

// image: (1, 3, H, W), preprocessed. Throws ModelError for an unknown target path, a
// class out of range, or a target whose output matches no traced layer's grid.
GradCamResult run_grad_cam(Backbone& model, const at::Tensor& image,
                           const GradCamRequest& request = {});

}  // namespace attnlab::models
