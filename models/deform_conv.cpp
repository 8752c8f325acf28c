// DCNv1 as bilinear im2col + matmul. The column matrix (B, C·kh·kw, Ho·Wo) is built by
// gathering the four bilinear corners of every sample point from the flattened input; a
// corner outside the input gets weight 0 (its index is clamped only so the gather stays in
// bounds). Autograd differentiates through the corner weights, so gradients reach both the
// input and the offsets, as with torchvision's kernel.
#include "models/deform_conv.h"
#include "core/nn/initial_values.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace attnlab::models {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("deform_conv2d: " + message);
}

std::string shape(const at::Tensor& t) {
  std::string s = "(";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + ")";
}

// Base sample coordinate of tap index k (0..kernel-1) at every output index: (kernel, out).
at::Tensor base_coordinates(int64_t kernel, int64_t out, int64_t stride, int64_t pad,
                            int64_t dilation, const at::TensorOptions& options) {
  at::Tensor taps = at::arange(kernel, options).mul_(static_cast<double>(dilation));
  at::Tensor outs = at::arange(out, options).mul_(static_cast<double>(stride)).sub_(pad);
  return taps.unsqueeze(1) + outs.unsqueeze(0);
}

}  // namespace

at::Tensor deform_conv2d(const at::Tensor& input, const at::Tensor& offset,
                         const at::Tensor& weight, const at::Tensor& bias,
                         const DeformConvGeometry& g) {
  require(input.dim() == 4, "input must be (B, C, H, W), got " + shape(input));
  require(weight.dim() == 4, "weight must be (Cout, C/groups, kh, kw), got " + shape(weight));
  require(offset.dim() == 4, "offset must be (B, 2·G·kh·kw, Ho, Wo), got " + shape(offset));
  require(input.is_floating_point(), "input must be floating point");
  const int64_t batch = input.size(0), channels = input.size(1);
  const int64_t height = input.size(2), width = input.size(3);
  const int64_t cout = weight.size(0), kh = weight.size(2), kw = weight.size(3), taps = kh * kw;
  require(g.groups > 0 && channels % g.groups == 0 && cout % g.groups == 0 &&
              weight.size(1) * g.groups == channels,
          "weight " + shape(weight) + " does not fit input " + shape(input) + " with groups " +
              std::to_string(g.groups));
  require(g.stride[0] > 0 && g.stride[1] > 0 && g.dilation[0] > 0 && g.dilation[1] > 0 &&
              g.padding[0] >= 0 && g.padding[1] >= 0,
          "stride and dilation must be positive, padding non-negative");
  const int64_t out_h =
      (height + 2 * g.padding[0] - g.dilation[0] * (kh - 1) - 1) / g.stride[0] + 1;
  const int64_t out_w = (width + 2 * g.padding[1] - g.dilation[1] * (kw - 1) - 1) / g.stride[1] + 1;
  require(out_h > 0 && out_w > 0, "input " + shape(input) + " is smaller than the kernel");
  require(offset.size(1) > 0 && offset.size(1) % (2 * taps) == 0,
          "offset channels " + std::to_string(offset.size(1)) +
              " are not a multiple of 2·kh·kw = " + std::to_string(2 * taps));
  const int64_t offset_groups = offset.size(1) / (2 * taps);
  require(channels % offset_groups == 0, std::to_string(offset_groups) +
                                             " offset groups do not divide " +
                                             std::to_string(channels) + " input channels");
  require(offset.size(0) == batch && offset.size(2) == out_h && offset.size(3) == out_w,
          "offset " + shape(offset) + " does not match the output grid (" + std::to_string(batch) +
              ", ·, " + std::to_string(out_h) + ", " + std::to_string(out_w) + ")");
  require(!bias.defined() || (bias.dim() == 1 && bias.size(0) == cout),
          "bias must be (" + std::to_string(cout) + "), got " + shape(bias));

  // Sample points (B, G, taps, Ho, Wo): base grid + (dy, dx) of each tap, in fp32 at least:
  // a bf16 coordinate holds 8 significant bits, so at a model's --dtype bf16 the flat index
  // y·W + x would stop being an integer past 256 (a wrong corner, or one out of range) and
  // the bilinear fractions would lose their low bits. The gathered values stay at the
  // input's precision; only the corner weights are cast to it.
  const at::ScalarType coordinate_type = at::promote_types(input.scalar_type(), at::kFloat);
  const auto fopts = input.options().dtype(coordinate_type);
  at::Tensor off =
      offset.to(coordinate_type).contiguous().view({batch, offset_groups, taps, 2, out_h, out_w});
  at::Tensor by = base_coordinates(kh, out_h, g.stride[0], g.padding[0], g.dilation[0], fopts);
  at::Tensor bx = base_coordinates(kw, out_w, g.stride[1], g.padding[1], g.dilation[1], fopts);
  // Tap t = i·kw + j: row coordinate from i, column from j.
  by = by.unsqueeze(1).expand({kh, kw, out_h}).reshape({taps, out_h, 1});
  bx = bx.unsqueeze(0).expand({kh, kw, out_w}).reshape({taps, 1, out_w});
  at::Tensor y = off.select(3, 0) + by;
  at::Tensor x = off.select(3, 1) + bx;

  at::Tensor y0 = at::floor(y), x0 = at::floor(x);
  at::Tensor ly = y - y0, lx = x - x0;
  const int64_t points = taps * out_h * out_w, cg = channels / offset_groups;
  at::Tensor flat = input.reshape({batch, offset_groups, cg, height * width});
  at::Tensor cols;
  for (int corner = 0; corner < 4; ++corner) {
    const int64_t dy = corner / 2, dx = corner % 2;
    at::Tensor cy = y0 + static_cast<double>(dy), cx = x0 + static_cast<double>(dx);
    at::Tensor wy = dy ? ly : 1 - ly, wx = dx ? lx : 1 - lx;
    at::Tensor inside = (cy >= 0) & (cy <= height - 1) & (cx >= 0) & (cx <= width - 1);
    at::Tensor w = (wy * wx * inside.to(wy.scalar_type()))
                       .to(input.scalar_type())
                       .reshape({batch, offset_groups, 1, points});
    // Outside (or NaN, from non-finite offsets) reads corner 0 with weight 0: never an
    // index out of range.
    const at::Tensor zero = at::zeros_like(cy);
    at::Tensor index =
        (at::where(inside, cy, zero) * width + at::where(inside, cx, zero)).to(at::kLong);
    index =
        index.reshape({batch, offset_groups, 1, points}).expand({batch, offset_groups, cg, points});
    at::Tensor term = flat.gather(3, index) * w;
    cols = corner == 0 ? term : cols + term;
  }
  // (B, G, cg, taps, P) -> (B, groups, C/groups·taps, P): channel-major, then tap, as the
  // flattened weight (Cout, C/groups·kh·kw) expects.
  cols = cols.reshape({batch, g.groups, (channels / g.groups) * taps, out_h * out_w});
  at::Tensor w2 = weight.reshape({g.groups, cout / g.groups, (channels / g.groups) * taps});
  at::Tensor out = at::matmul(w2, cols).reshape({batch, cout, out_h, out_w});
  if (bias.defined()) out = out + bias.view({1, cout, 1, 1});
  return out;
}

DeformConv2dPack::DeformConv2dPack(int64_t in, int64_t out, std::array<int64_t, 2> kernel,
                                   const DeformConvGeometry& geom)
    : geometry(geom) {
  // conv_offset mirrors the kernel, stride and padding; a dilated or grouped offset conv is
  // not needed by LITv2 and Conv2dLayer has no dilation, so refuse rather than differ.
  if (geom.dilation[0] != 1 || geom.dilation[1] != 1 || geom.groups != 1)
    throw std::invalid_argument("DeformConv2dPack: only dilation 1 and groups 1 are supported");
  // mmcv's initialisation: weight uniform ±1/√(in·kh·kw), bias 0, conv_offset all zero (a
  // fresh DTM starts as a plain strided convolution).
  const double bound = 1.0 / std::sqrt(static_cast<double>(in * kernel[0] * kernel[1]));
  weight = register_parameter("weight",
                              nn::initial_uniform({out, in, kernel[0], kernel[1]}, bound));
  bias = register_parameter("bias", at::zeros({out}));
  attention::Conv2dLayer::Shape s;
  s.in = in;
  s.out = 2 * kernel[0] * kernel[1];
  s.kernel = kernel;
  s.stride = geom.stride;
  s.padding = geom.padding;
  conv_offset = attention::add_layer<attention::Conv2dLayer>(*this, "conv_offset", s);
  conv_offset->weight.detach().zero_();
  conv_offset->bias.detach().zero_();
}

at::Tensor DeformConv2dPack::operator()(const at::Tensor& x) const {
  return deform_conv2d(x, (*conv_offset)(x), weight, bias, geometry);
}

}  // namespace attnlab::models
