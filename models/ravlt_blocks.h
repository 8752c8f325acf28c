// The modules RAVLT (SPEC §2.3) is built from, NCHW throughout, each registering its
// parameters and buffers under the reference state-dict names so that a checkpoint loads
// strictly: the conv/BN stem, the block (CPE, channel LayerNorms, attention, ConvFFN,
// layer scale), the stage with its RoPE buffer and downsample, and BatchNorm. The
// backbone that strings them together is in ravlt.cpp.
#pragma once

#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "core/attention/layers.h"
#include "core/attention/mechanism.h"
#include "models/backbone.h"

#include "models/norm_layers.h"

namespace attnlab::models::ravlt {

// LayerNorm over the channels of an NCHW tensor, eps 1e-6; the reference wraps it as
// `normX.norm`, so this module is the wrapper and its child "norm" holds the weights.
class ChannelLayerNorm : public torch::nn::Module {
 public:
  explicit ChannelLayerNorm(int64_t channels);
  at::Tensor operator()(const at::Tensor& x) const;

 private:
  at::Tensor weight_, bias_;
};

// patch_embed.proj: an nn.Sequential of conv/BN/GELU whose indices 2, 5, 8 are the
// parameter-free GELUs; overall stride 4, 3 → C/2 → C channels.
class Stem : public torch::nn::Module {
 public:
  explicit Stem(int64_t dim);
  at::Tensor operator()(const at::Tensor& images);

 private:
  std::vector<std::shared_ptr<attention::Conv2dLayer>> convs_;
  std::vector<std::shared_ptr<BatchNorm2dLayer>> norms_;
};

// fc1 (1×1) → GELU → h += dwconv3×3(h) → fc2 (1×1).
class ConvFfn : public torch::nn::Module {
 public:
  ConvFfn(int64_t dim, int64_t hidden);
  at::Tensor operator()(const at::Tensor& x) const;

 private:
  std::shared_ptr<attention::Conv2dLayer> fc1_, fc2_, dwconv_;
};

struct BlockShape {
  int64_t dim = 0, heads = 0, hidden = 0;
  std::string mechanism;  // registered name: "rala" or "softmax_rope"
  bool layerscale = true;
};

// x += pos(x); x += γ1 ⊙ attn(norm1(x)); x += γ2 ⊙ ffn(norm2(x)).
class Block : public torch::nn::Module {
 public:
  explicit Block(const BlockShape& shape);
  // `path` is the block's state-dict path ("layers.1.blocks.0"), `stage` its stage index.
  at::Tensor operator()(const at::Tensor& x, const std::string& path, int stage,
                        ForwardRecorder& recorder);

 private:
  at::Tensor gamma_1_, gamma_2_;  // undefined without layer scale
  std::shared_ptr<ChannelLayerNorm> norm1_, norm2_;
  std::shared_ptr<attention::AttentionMechanism> attn_;
  std::shared_ptr<ConvFfn> ffn_;
  std::shared_ptr<attention::Conv2dLayer> pos_;
};

struct StageShape {
  BlockShape block;
  int64_t depth = 0;
  int64_t out_dim = 0;  // channels after the downsample; 0 = no downsample (last stage)
};

// layers.i: RoPE.angle (buffer), blocks.j, and downsample.{reduction, norm}.
class Stage : public torch::nn::Module {
 public:
  explicit Stage(const StageShape& shape);
  at::Tensor operator()(const at::Tensor& x, int index, ForwardRecorder& recorder);

 private:
  // The mechanisms compute their own RoPE tables (for any H, W), so the stored buffer is
  // only checked: it must equal rope_angle(head_dim), or the checkpoint was trained with a
  // different RoPE than the one we would run. Checked once per change of the buffer.
  void check_rope_angle(int index);

  at::Tensor angle_;
  int64_t head_dim_ = 0;
  int64_t checked_version_ = -1;
  const void* checked_data_ = nullptr;
  std::vector<std::shared_ptr<Block>> blocks_;
  std::shared_ptr<attention::Conv2dLayer> reduction_;
  std::shared_ptr<BatchNorm2dLayer> reduction_norm_;
};

}  // namespace attnlab::models::ravlt
