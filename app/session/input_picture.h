// The picture a model saw: its preprocessed input (1, 3, H, W) turned back into 8-bit RGB
// (x * std + mean, clamped), which maps, rollouts and explanations are drawn over.
#pragma once

#include <ATen/core/Tensor.h>

#include "core/image/preprocess.h"
#include "viz/rgba_image.h"

namespace attnlab::session {

viz::RgbaImage input_picture(const at::Tensor& x, const image::Preprocessing& p);

}  // namespace attnlab::session
