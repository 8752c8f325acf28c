// LITv2's building blocks (SPEC §2.2), with the reference state-dict names: the stem
// (patch_embed.proj + norm), the block (norm1 + HiLo attn where the stage has attention,
// norm2 + DWMlp), and the DTM downsample (deformable 2×2 stride-2 conv, BatchNorm, GELU).
// Tokens are (B, N, C) on an H×W grid, row-major, as in the reference.
#pragma once

#include <torch/nn/module.h>

#include <map>
#include <memory>
#include <string>

#include "core/attention/layers.h"
#include "core/attention/mechanism.h"
#include "models/backbone.h"
#include "models/deform_conv.h"
#include "models/norm_layers.h"

namespace attnlab::models::litv2 {

// patch_embed: proj Conv(3, C, p, stride p) -> tokens -> norm. Returns tokens, sets H, W.
class PatchEmbed : public torch::nn::Module {
 public:
  PatchEmbed(int64_t patch, int64_t dim, double eps);
  at::Tensor operator()(const at::Tensor& images, int64_t& height, int64_t& width) const;
  std::shared_ptr<attention::Conv2dLayer> proj;
  std::shared_ptr<LayerNormLayer> norm;
};

// DWMlp: fc1 (C -> hidden) -> depthwise 3×3 conv with bias on the grid -> GELU -> fc2.
// The conv sits at mlp.dwconv.dwconv (the reference wraps it in a DWConv module).
class DWMlp : public torch::nn::Module {
 public:
  DWMlp(int64_t dim, int64_t hidden);
  at::Tensor operator()(const at::Tensor& x, int64_t height, int64_t width) const;
  std::shared_ptr<attention::LinearLayer> fc1, fc2;
  std::shared_ptr<attention::Conv2dLayer> dwconv;
};

struct BlockShape {
  int64_t dim = 0, heads = 0, hidden = 0;
  int64_t window = 0;  // HiLo window s; 0 = a ConvFFN-only block (no norm1, no attn)
  double alpha = 0.9;
  int64_t lofi_heads = -1;  // -1: floor(heads·alpha)
  bool qkv_bias = true;
  double ln_eps = 1e-5;
  std::string attention = "hilo";                   // or another grid mechanism, with
  std::map<std::string, double> attention_options;  // these options (LITv2 with attention X)
};

class Block : public torch::nn::Module {
 public:
  explicit Block(const BlockShape& shape);
  // Records "out.<path>.attn" (and HiLo's branches via the recorder) and "out.<path>".
  at::Tensor forward(const at::Tensor& x, const attention::TokenLayout& layout,
                     const std::string& path, ForwardRecorder& recorder);
  std::shared_ptr<LayerNormLayer> norm1, norm2;
  std::shared_ptr<attention::AttentionMechanism> attn;  // null without attention
  std::shared_ptr<DWMlp> mlp;
};

// DTM: dconv (DCNv1 2×2 stride 2 with conv_offset) -> norm_layer (BatchNorm) -> GELU.
class Downsample : public torch::nn::Module {
 public:
  Downsample(int64_t in, int64_t out);
  // Tokens on height×width -> tokens on the halved grid; updates height and width.
  at::Tensor operator()(const at::Tensor& x, int64_t& height, int64_t& width);
  std::shared_ptr<DeformConv2dPack> dconv;
  std::shared_ptr<BatchNorm2dLayer> norm_layer;
};

// (B, H·W, C) <-> (B, C, H, W).
at::Tensor tokens_to_image(const at::Tensor& x, int64_t height, int64_t width);
at::Tensor image_to_tokens(const at::Tensor& x);

}  // namespace attnlab::models::litv2
