// The relevance maps the faithfulness scoreboard scores (issue 27), each on the grid whose
// cells are perturbed: the first attention layer's (the patch grid of a ViT; LITv2's first
// HiLo stage; RAVLT's stage 1). Maps made on another grid (Grad-CAM on the last stage) are
// resampled onto it by area (analysis::resample_map).
//   cls          the last layer's attention row of the class token, mean over heads
//   rollout      attention rollout (default switches) of the class token, or for a model
//                without one the mean of the last layer's rows (its classifier pools them)
//   gradcam      Grad-CAM at the default target (models/gradcam_run.h)
//   gradrollout  gradient-weighted rollout (models/grad_rollout_run.h)
//   random       uniform noise, seeded per image (a baseline)
//   centre       a centre prior: minus the distance to the image centre (a baseline)
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/attention/token_layout.h"
#include "models/backbone.h"

namespace attnlab::session {

const std::vector<std::string>& faithfulness_map_kinds();
// "cls,rollout,gradcam"; throws std::invalid_argument naming the known kinds.
std::vector<std::string> parse_faithfulness_maps(const std::string& list);

// The grid the cells are taken from: the first traced layer's (its grid part).
attention::TokenLayout perturbation_grid(models::Backbone& model, const at::Tensor& image);

// The map of `kind` for `image` (1, 3, H, W) and class `cls` on `grid` (h, w) float32.
// `seed` seeds the random map. Throws std::invalid_argument for a kind that does not
// apply to the model (cls without a class token), naming what to use instead.
at::Tensor faithfulness_map(models::Backbone& model, const at::Tensor& image,
                            const std::string& kind, int64_t cls,
                            const attention::TokenLayout& grid, uint64_t seed);

}  // namespace attnlab::session
