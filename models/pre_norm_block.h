// The pre-norm residual block's forward, written once for every family whose block is one
// (ViT/DeiT/DINO, Swin, CLIP's image tower, LITv2): y = x + s1(attn(norm1(x))), then
// y + s2(mlp(norm2(y))), with the recorder's hooks where the analyses read them: the
// attention's input tapped as "<path>.<norm1 name>", the attention run through
// ForwardRecorder::attend, "out" recorded for "<path>.attn" and for "<path>", and the
// block's output tapped at "<path>". The families keep their own modules (and so their
// state-dict names and registration orders); only the step between them is shared.
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "models/backbone.h"

namespace attnlab::models {

struct NoLayerScale {
  const at::Tensor& operator()(const at::Tensor& t) const { return t; }
};

// `attn` null: a block without attention (LITv2's first stages: x + mlp(norm2(x)) alone).
// norm1, norm2: callables on tokens (modules or lambdas); mlp: on norm2's output; scale1,
// scale2: LayerScale's (NoLayerScale: none).
template <class Norm1, class Norm2, class Mlp, class Scale1 = NoLayerScale,
          class Scale2 = NoLayerScale>
at::Tensor pre_norm_block_forward(const at::Tensor& x, const attention::TokenLayout& layout,
                                  const std::string& path, ForwardRecorder& recorder,
                                  const char* norm1_name, Norm1&& norm1,
                                  attention::AttentionMechanism* attn, Norm2&& norm2, Mlp&& mlp,
                                  Scale1&& scale1 = Scale1{}, Scale2&& scale2 = Scale2{}) {
  at::Tensor y = x;
  if (attn) {
    const at::Tensor normed = recorder.tap(path + "." + norm1_name, norm1(x));
    const at::Tensor a = recorder.attend(*attn, path + ".attn", normed, layout);
    recorder.output("out", path + ".attn", a);
    y = y + scale1(a);
  }
  y = y + scale2(mlp(norm2(y)));
  recorder.output("out", path, y);
  return recorder.tap(path, y);
}

}  // namespace attnlab::models
