// The stage loop of the hierarchical backbones (LITv2, Swin): each stage runs its blocks on
// the stage's grid, records its output, and hands over to its downsampling (which updates
// the grid); then the final norm, mean pooling over tokens and the head. One place, so the
// fixtures' names ("layers.i", "layers.i.downsample", "norm") and the Grad-CAM taps stay
// the same for every family. A resumed forward (ForwardOptions::resume) skips the stages
// and downsamplings before its block.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "core/attention/token_layout.h"
#include "models/backbone.h"

namespace attnlab::models {

template <typename Block, typename Downsample>
at::Tensor run_stages(at::Tensor x, int64_t height, int64_t width,
                      const std::vector<std::vector<std::shared_ptr<Block>>>& blocks,
                      const std::vector<std::shared_ptr<Downsample>>& downsamples,
                      ForwardRecorder& recorder) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string stage = "layers." + std::to_string(i);
    for (size_t j = 0; j < blocks[i].size(); ++j) {
      const std::string path = stage + ".blocks." + std::to_string(j);
      if (!recorder.enter_block(path, x, &height, &width)) continue;
      const auto layout = attention::grid_layout(height, width, static_cast<int>(i));
      x = blocks[i][j]->forward(x, layout, path, recorder);
    }
    if (recorder.skipping()) continue;  // a resumed forward starts at a later stage
    if (downsamples[i]) {
      x = (*downsamples[i])(x, height, width);
      recorder.output("out", stage + ".downsample", x);
    }
    recorder.output("out", stage, x);
    x = recorder.tap(stage, x);
  }
  recorder.check_resumed();
  return x;
}

// The final norm, the mean over tokens and the head (none: the pooled features).
template <typename Norm, typename Head>
at::Tensor pooled_head(const at::Tensor& x, Norm& norm, const std::shared_ptr<Head>& head,
                       ForwardRecorder& recorder) {
  const at::Tensor normed = norm(x);
  recorder.output("out", "norm", normed);
  const at::Tensor pooled = normed.mean(1);
  return head ? (*head)(pooled) : pooled;
}

}  // namespace attnlab::models
