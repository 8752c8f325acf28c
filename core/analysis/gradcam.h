// Grad-CAM (Selvaraju et al., ICCV 2017) on the token activations of a transformer layer:
// each channel's weight is the mean over the image grid of the class score's gradient,
// and the map is ReLU(Σ_c w_c · A_c) over the grid. The token layout comes from the
// attention trace of the layer (grid size, prefix tokens), never from guessing a square
// reshape; prefix tokens (cls, dist) have no place in the image and are left out of both
// the weights and the map.
#pragma once

#include <ATen/core/Tensor.h>

#include "core/attention/token_layout.h"

namespace attnlab::analysis {

struct GradCamOptions {
  bool relu = true;  // false: the signed map (where the evidence argues against the class)
};

// activation, gradient: (tokens, C) of one image in `layout`'s token order (prefix first).
// Returns the (height, width) map, float32 on CPU.
at::Tensor grad_cam(const at::Tensor& activation, const at::Tensor& gradient,
                    const attention::TokenLayout& layout, const GradCamOptions& options = {});

}  // namespace attnlab::analysis
