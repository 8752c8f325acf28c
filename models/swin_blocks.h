// Swin's building blocks (SPEC_COMPARISON "Swin window attention and shifted-window
// block"), with the reference state-dict names: the patch embedding (patch_embed.proj +
// norm), the block (attn_mask buffer in shifted blocks, norm1, the `swin` mechanism as
// attn, norm2, mlp.fc1/fc2 with the exact GELU) and PatchMerging (downsample.reduction,
// norm). Tokens are (B, N, C) on an H×W grid, row-major, as in the reference.
#pragma once

#include <torch/nn/module.h>

#include <memory>
#include <string>

#include "core/attention/layers.h"
#include "core/attention/mechanism.h"
#include "models/backbone.h"
#include "models/norm_layers.h"
#include "models/vit_blocks.h"

namespace attnlab::models::swin {

// patch_embed: proj Conv(3, C, p, stride p) -> tokens -> norm (when patch_norm).
class PatchEmbed : public torch::nn::Module {
 public:
  PatchEmbed(int64_t patch, int64_t dim, bool norm, double eps);
  at::Tensor operator()(const at::Tensor& images) const;

 private:
  std::shared_ptr<attention::Conv2dLayer> proj_;
  std::shared_ptr<LayerNormLayer> norm_;
};

// One block as the reference builds it for its stage's input_resolution: the window is
// clamped to min(H, W) and the shift dropped when the grid fits in one window (this is where
// the clamp lives: it decides the bias table's shape and whether attn_mask exists).
struct BlockShape {
  int64_t dim = 0, heads = 0, hidden = 0;
  int64_t height = 0, width = 0;  // the stage grid the block is built for
  int64_t window = 7, shift = 0;  // as configured (odd blocks: window / 2)
  bool qkv_bias = true;
  double ln_eps = 1e-5;
};

class Block : public torch::nn::Module {
 public:
  explicit Block(const BlockShape& shape);
  // Records "out.<path>.attn" (the attention output as tokens in image positions, as every
  // backbone here and what the analyses read; the reference module's own output is the
  // windowed (nW·B, w², C) on the rolled grid), the probabilities "attn.<path>" (per window,
  // the reference's layout) and "out.<path>".
  at::Tensor forward(const at::Tensor& x, const attention::TokenLayout& layout,
                     const std::string& path, ForwardRecorder& recorder);
  int64_t window() const { return window_; }
  int64_t shift() const { return shift_; }

 private:
  // The loaded attn_mask must be the mask the mechanism builds for this grid (a
  // checkpoint with another mask was not made by this model); checked once per load.
  void check_mask(const std::string& path);

  int64_t window_ = 0, shift_ = 0, height_ = 0, width_ = 0;
  at::Tensor attn_mask_;
  int64_t checked_version_ = -1;
  const void* checked_data_ = nullptr;
  std::shared_ptr<LayerNormLayer> norm1_, norm2_;
  std::shared_ptr<attention::AttentionMechanism> attn_;
  std::shared_ptr<vit::Mlp> mlp_;
};

// PatchMerging: the 2×2 neighbours concatenated as (0,0), (1,0), (0,1), (1,1) (row, column
// offsets) -> norm LN(4C) -> reduction Linear(4C, 2C, no bias). H and W must be even.
class PatchMerging : public torch::nn::Module {
 public:
  PatchMerging(int64_t dim, double eps);
  // Tokens on height×width -> tokens on the halved grid; updates height and width.
  at::Tensor operator()(const at::Tensor& x, int64_t& height, int64_t& width) const;

 private:
  std::shared_ptr<attention::LinearLayer> reduction_;
  std::shared_ptr<LayerNormLayer> norm_;
};

}  // namespace attnlab::models::swin
