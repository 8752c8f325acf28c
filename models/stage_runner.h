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

// The final norm, the mean over tokens and the head (none: the pooled features). The
// recorder is null when a block is read out (Backbone::readout_logits): the same code as
// the forward's tail, so the last block read out gives the model's logits.
template <typename Norm, typename Head>
at::Tensor pooled_head(const at::Tensor& x, Norm& norm, const std::shared_ptr<Head>& head,
                       ForwardRecorder* recorder) {
  const at::Tensor normed = norm(x);
  if (recorder) recorder->output("out", "norm", normed);
  const at::Tensor pooled = normed.mean(1);
  return head ? (*head)(pooled) : pooled;
}

// Backbone::readout_features of these families: the mean of a block's B×N×C tokens (any
// stage: the pooling needs no particular width).
inline at::Tensor pooled_readout_features(const std::string& arch, const at::Tensor& tokens) {
  if (tokens.dim() != 3)
    throw ModelError(arch + ": a block output is (B, N, C) tokens, got " +
                     std::to_string(tokens.dim()) + " dimensions");
  return tokens.mean(1);
}

// Backbone::readout_logits of these families: the final norm, the mean and the head, on a
// block of the last stage only — an earlier stage's tokens have another width than the
// final norm's (`width`), and the downsamplings between are not a readout.
template <typename Norm, typename Head>
at::Tensor pooled_readout_logits(const std::string& arch, const at::Tensor& tokens, int64_t width,
                                 Norm& norm, const std::shared_ptr<Head>& head) {
  if (!head)
    throw ModelError(arch + ": no classifier head (num_classes 0) to read a block out with");
  if (tokens.dim() != 3 || tokens.size(2) != width)
    throw ModelError(arch + ": only the last stage's blocks (width " + std::to_string(width) +
                     ") can go through the final norm and head; this output is " +
                     (tokens.dim() == 3 ? "of width " + std::to_string(tokens.size(2))
                                        : std::to_string(tokens.dim()) + "-dimensional"));
  return pooled_head(tokens, norm, head, nullptr);
}

}  // namespace attnlab::models
