// Deformable convolution v1 (DCNv1), as LITv2's DTM downsample uses it (SPEC §2.2), written
// with ATen ops only (gather, arithmetic, matmul) so that it runs and differentiates on any
// device LibTorch supports, CUDA included, without a custom kernel.
//
// Semantics are torchvision.ops.deform_conv2d with mask None (= mmcv's DeformConv2d):
// offset (B, 2·G·kh·kw, Ho, Wo) for G offset groups (G = offset channels / (2·kh·kw); input
// channel c uses group c / (C/G)); within a group, channel 2t is the row (y) offset and 2t+1
// the column (x) offset of kernel tap t = i·kw + j. Output (y, x) samples tap t at
//   (stride_h·y − pad_h + i·dil_h + dy,  stride_w·x − pad_w + j·dil_w + dx)
// with bilinear interpolation in which each corner outside the input contributes 0.
#pragma once

#include <torch/nn/module.h>

#include <array>
#include <memory>

#include "core/attention/layers.h"

namespace attnlab::models {

struct DeformConvGeometry {
  std::array<int64_t, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;  // ordinary convolution groups of `weight`
};

// input (B, C, H, W); offset as above; weight (Cout, C/groups, kh, kw); bias (Cout) or
// undefined. Throws std::invalid_argument naming the mismatch.
at::Tensor deform_conv2d(const at::Tensor& input, const at::Tensor& offset,
                         const at::Tensor& weight, const at::Tensor& bias,
                         const DeformConvGeometry& geometry = {});

// mmcv's DeformConv2dPack: the convolution's own weight and bias plus `conv_offset`, a plain
// convolution with the same kernel, stride and padding that predicts 2·kh·kw offsets (one
// offset group). Parameter names: weight, bias, conv_offset.weight, conv_offset.bias.
class DeformConv2dPack : public torch::nn::Module {
 public:
  DeformConv2dPack(int64_t in, int64_t out, std::array<int64_t, 2> kernel,
                   const DeformConvGeometry& geometry);
  at::Tensor operator()(const at::Tensor& x) const;

  at::Tensor weight, bias;
  std::shared_ptr<attention::Conv2dLayer> conv_offset;
  DeformConvGeometry geometry;
};

}  // namespace attnlab::models
