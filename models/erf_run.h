// The effective receptive field of one output token of a backbone, by autograd: one
// forward with the input requiring grad and the target module's output kept in the graph
// (ForwardOptions::target_in_graph), then the gradient of the sum over channels of the
// chosen token's features with respect to the input pixels (Luo et al. 2016). The map is
// Σ over colour channels of |gradient|, on the input's pixel grid; core/analysis/erf.h
// summarises it. Runs with autograd on: call it from a worker.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "core/attention/token_layout.h"
#include "models/backbone.h"

namespace attnlab::models {

struct ErfRequest {
  std::string target;  // a module's state-dict path; "" = default_erf_target
  // The output token on the target's grid; -1 = the grid's centre (row h/2, column w/2).
  int64_t token_y = -1, token_x = -1;
};

struct ErfResult {
  std::string target;
  attention::TokenLayout layout;  // the target output's grid
  int64_t token_y = 0, token_x = 0;
  double centre_y = 0, centre_x = 0;  // the token's centre in input pixels
  at::Tensor map;                     // (H, W) float64 on the CPU
};

// The last stage's output ("layers.N") for hierarchical models, the last block's output
// ("blocks.N") for isotropic ones.
std::string default_erf_target(Backbone& model);

// image: (1, 3, H, W), preprocessed. Throws ModelError for an unknown target, a token
// outside its grid, or an image that is not one image.
ErfResult run_erf(Backbone& model, const at::Tensor& image, const ErfRequest& request = {});

}  // namespace attnlab::models
